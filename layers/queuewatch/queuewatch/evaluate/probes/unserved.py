"""Tracked jobs waiting for labels no watched runner type serves (pure)."""

from __future__ import annotations

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import plural
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.model.rules import HEALTH_RULE, UNSERVED_JOBS, Verdict
from queuewatch.model.snapshot import Snapshot, UnmatchedJobs


def step_unserved(result: Plan, snapshot: Snapshot) -> InstanceKey:
    """Tracked jobs waiting for labels no watched runner type serves: nobody will run them, and no rule
    can page about them, so the monitor says so once they have waited `monitor.unserved_after`."""
    after = result.context.config.monitor.unserved_after
    waiting = [u for u in snapshot.unmatched_jobs if after is not None and u.oldest_seconds >= after]
    result.verdicts[InstanceKey(HEALTH_RULE, UNSERVED_JOBS)] = Verdict(
        breached=bool(waiting),
        breached_signals=("unserved_jobs",) if waiting else (),
        missing={"queued": unserved_text(waiting)} if waiting else {},
    )
    if waiting:
        result.degraded.add(UNSERVED_JOBS)
    return step_instance(result, result.context.health, UNSERVED_JOBS, bool(waiting))


def unserved_text(waiting: list[UnmatchedJobs]) -> str:
    """The finding in words, the most waiting first: 3 jobs for 40m for labels [gpu-a100, self-hosted]; ..."""
    listed = [
        f"{plural(u.count, 'job')} for {format_duration(u.oldest_seconds)} "
        f"for labels [{', '.join(u.label_set.split(','))}]"
        for u in waiting[:5]
    ]
    more = f" and {len(waiting) - 5} more label sets" if len(waiting) > 5 else ""
    return "; ".join(listed) + more + ", that no runner type serves"
