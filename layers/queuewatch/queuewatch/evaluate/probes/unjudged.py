"""Watched runner types no rule selects, and globs that nearly select one (pure)."""

from __future__ import annotations

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.evaluate.unjudged import unjudged_text
from queuewatch.model.rules import HEALTH_RULE, UNJUDGED, Verdict
from queuewatch.model.snapshot import Snapshot


def step_unjudged(result: Plan, snapshot: Snapshot) -> InstanceKey:
    """Watched runner types no rule selects, and rule globs that nearly select one: nothing pages for them."""
    finding = unjudged_text(result.context.config, snapshot)
    result.verdicts[InstanceKey(HEALTH_RULE, UNJUDGED)] = Verdict(
        breached=finding is not None,
        breached_signals=("unjudged",) if finding else (),
        missing={"rules": finding} if finding else {},
    )
    if finding:
        result.degraded.add(UNJUDGED)
    return step_instance(result, result.context.health, UNJUDGED, finding is not None)
