"""The autoscaler's matcher config unread where the track stage expects it: `source:matcher-config` (pure)."""

from __future__ import annotations

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.model.job_sources import MATCHER_SOURCE, matcher_text
from queuewatch.model.rules import HEALTH_RULE, JOB_SOURCE, Verdict
from queuewatch.model.snapshot import Snapshot


def step_matcher(result: Plan, snapshot: Snapshot) -> set[InstanceKey]:
    """Its routing is blind, `source:matcher-config` on the monitor, for as long as a heartbeat carries the error.
    Heartbeats unread this tick say nothing of it: its state stays as it was (probes/sources.py holds it)."""
    if not snapshot.job_sources or snapshot.job_sources_error is not None:
        return set()
    failed = next((beat.matcher_error for beat in snapshot.job_sources if beat.matcher_error), None)
    name = f"{JOB_SOURCE}:{MATCHER_SOURCE}"
    result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
        breached=failed is not None,
        breached_signals=("no_data",) if failed else (),
        missing={"matcher_config": matcher_text(failed)} if failed else {},
    )
    if failed:
        result.degraded.add(name)
    return {step_instance(result, result.context.health, name, failed is not None)}
