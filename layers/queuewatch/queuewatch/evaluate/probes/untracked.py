"""Scale-up requests with no tracked job behind them: the jobs' signal is blind (pure)."""

from __future__ import annotations

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.evaluate.blindness import untracked_text
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.model.rules import HEALTH_RULE, UNTRACKED_JOBS, Verdict
from queuewatch.model.snapshot import RunnerTypeSnapshot


def step_untracked(result: Plan, blind: list[RunnerTypeSnapshot]) -> InstanceKey:
    """Scale-up requests paging on the queue alone while no job is tracked queued: the jobs are blind."""
    result.verdicts[InstanceKey(HEALTH_RULE, UNTRACKED_JOBS)] = Verdict(
        breached=bool(blind),
        breached_signals=("untracked_jobs",) if blind else (),
        missing={"jobs": untracked_text(blind)} if blind else {},
    )
    if blind:
        result.degraded.add(UNTRACKED_JOBS)
    return step_instance(result, result.context.health, UNTRACKED_JOBS, bool(blind))
