"""A job source quiet past its own normal gaps: `source:<name>` on the monitor (pure)."""

from __future__ import annotations

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.model.job_sources import quiet_for, quiet_text
from queuewatch.model.rules import HEALTH_RULE, JOB_SOURCE, Verdict
from queuewatch.model.snapshot import Snapshot


def step_sources(result: Plan, snapshot: Snapshot) -> set[InstanceKey]:
    """A job source quiet past its own normal gaps (job_sources.py) is blind: `source:<name>` on the monitor.
    A heartbeat read that failed leaves each source's state as it was, and says so under `source:heartbeats`."""
    floor = result.context.config.monitor.job_source_quiet_after
    seen: set[InstanceKey] = set()
    for beat in snapshot.job_sources:
        quiet = quiet_for(beat, result.context.now, floor) if floor is not None else None
        name = f"{JOB_SOURCE}:{beat.source}"
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=quiet is not None,
            breached_signals=("source_quiet",) if quiet is not None else (),
            missing={"events": quiet_text(beat, quiet)} if quiet is not None else {},
        )
        if quiet is not None:
            result.degraded.add(name)
        seen.add(step_instance(result, result.context.health, name, quiet is not None))
    if snapshot.job_sources_error is not None or InstanceKey(HEALTH_RULE, f"{JOB_SOURCE}:heartbeats") in (
        result.context.state.instances
    ):
        failed = snapshot.job_sources_error
        name = f"{JOB_SOURCE}:heartbeats"
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=failed is not None,
            breached_signals=("no_data",) if failed else (),
            missing={"heartbeats": failed} if failed else {},
        )
        if failed:
            result.degraded.add(name)
            for key, previous in result.context.state.instances.items():  # unknown is neither quiet nor heard: hold
                if key.rule == HEALTH_RULE and key.runner_type.startswith(f"{JOB_SOURCE}:") and key not in seen:
                    result.instances[key] = previous
                    seen.add(key)
        seen.add(step_instance(result, result.context.health, name, failed is not None))
    return seen
