"""The SLOs' burn pairs and ceilings stepped as alerts, and an SLO whose figures could not be read (pure)."""

from __future__ import annotations

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.evaluate.slo import PREFIX as SLO_PREFIX
from queuewatch.evaluate.slo import judge_slos
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.model.rules import HEALTH_RULE, Verdict
from queuewatch.model.snapshot import Snapshot


def step_slos(result: Plan, snapshot: Snapshot) -> set[InstanceKey]:
    """Each SLO's burn pairs and ceiling (evaluate/slo.py); an SLO whose figures could not be read holds its
    alerts and is a degraded signal of its own, `slo:<name>`, on the monitor page."""
    context = result.context
    judged, blind = judge_slos(context.config, snapshot)
    seen: set[InstanceKey] = set()
    for judgement in judged:
        key = InstanceKey(judgement.rule, judgement.instance)
        result.verdicts[key] = judgement.verdict
        if judgement.finding:
            result.findings[key] = judgement.finding
        seen.add(step_instance(result, context.rules[judgement.rule], judgement.instance, judgement.verdict.breached))
    for slo in context.config.resolved_slos:
        name, why = f"{SLO_PREFIX}{slo.name}", blind.get(slo.name)
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=why is not None, breached_signals=("no_data",) if why else (), missing={"slo": why} if why else {}
        )
        if why:
            result.degraded.add(name)
        seen.add(step_instance(result, context.health, name, why is not None))
    return seen
