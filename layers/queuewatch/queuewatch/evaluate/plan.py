"""Planning one tick, pure: stored state + an observation -> every state change and page it implies.

Nothing here writes, publishes or renders: the stage (stage.py) words the pages
(page.py) and delivers them (delivery.py) once the plan is made. A backtest drives
the same function over recorded history.
"""

from __future__ import annotations

from datetime import datetime

from queuewatch.alerting.alert_state import InstanceKey, StoredState
from queuewatch.config import Config
from queuewatch.evaluate.blindness import blind_signals, untracked
from queuewatch.evaluate.context import Context
from queuewatch.evaluate.forecasts import with_forecast
from queuewatch.evaluate.groups import decide_groups, mark_superseded
from queuewatch.evaluate.probes.discovery import step_discovery
from queuewatch.evaluate.probes.matcher import step_matcher
from queuewatch.evaluate.probes.slos import step_slos
from queuewatch.evaluate.probes.sources import step_sources
from queuewatch.evaluate.probes.unjudged import step_unjudged
from queuewatch.evaluate.probes.unserved import step_unserved
from queuewatch.evaluate.probes.untracked import step_untracked
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.model.github_status import GitHubStatus
from queuewatch.model.rules import COLLECTOR, HEALTH_RULE, Verdict, judge
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Observation, RunnerTypeSnapshot


def plan(
    config: Config, state: StoredState, observation: Observation, now: datetime, github: GitHubStatus | None = None
) -> Plan:
    """Step every (rule, runner type) instance on the observation, then decide each group's page."""
    result = Plan(Context.of(config, state, observation, now, github))
    seen = _step_observed(result)
    for key, previous in state.instances.items():
        if key in seen:
            continue
        known = result.context.rule(previous.rule)
        if previous.rule not in result.context.rules or result.context.gone(previous.runner_type, known):
            # The runner type (or the rule) no longer exists: its alert still resolves.
            step_instance(result, known, previous.runner_type, False)
        else:
            result.instances[key] = previous  # unknown this tick: hold
    decide_groups(result)
    mark_superseded(result)
    return result


def _step_observed(result: Plan) -> set[InstanceKey]:
    """Step what this observation says something about; returns the instances it stepped."""
    context = result.context
    seen: set[InstanceKey] = set()
    blind_jobs: list[RunnerTypeSnapshot] = []
    for runner_type in context.snapshot.runner_types if context.snapshot else []:
        missing: dict[str, str] = {}
        verdicts = []
        for rule in context.config.rules_for(runner_type.name):
            verdict = with_forecast(rule, judge(rule, runner_type), context.outlooks, runner_type.name)
            verdicts.append(verdict)
            result.verdicts[InstanceKey(rule.name, runner_type.name)] = verdict
            missing.update(verdict.missing)
            seen.add(step_instance(result, rule, runner_type.name, verdict.breached))
        # The autoscaler's other queues are judged beside the build queue (demand_paths.py), apart from the
        # cross-check of the build queue and the jobs below.
        for rule in context.config.path_rules:
            absent = rule.size_signal not in runner_type.signals
            if absent and InstanceKey(rule.name, runner_type.name) not in context.state.instances:
                continue  # no such queue, and no alert on it to resolve: nothing to step (5,000 stay cheap)
            verdict = judge(rule, runner_type)
            result.verdicts[InstanceKey(rule.name, runner_type.name)] = verdict
            missing.update(verdict.missing)
            seen.add(step_instance(result, rule, runner_type.name, verdict.breached))
        if verdicts:  # a cross-checked signal gone blind is said even while the other one pages
            missing.update({k: v for k, v in blind_signals(runner_type).items() if k not in missing})
        if untracked(runner_type, verdicts) and runner_type.name not in context.requests_shared:
            blind_jobs.append(runner_type)
        if missing:
            result.degraded.add(runner_type.name)
        result.verdicts[InstanceKey(HEALTH_RULE, runner_type.name)] = Verdict(
            breached=bool(missing),
            breached_signals=("no_data",) if missing else (),
            queue_size=runner_type.value(SignalName.QUEUE_SIZE),
            queue_time=runner_type.value(SignalName.QUEUE_TIME),
            missing=missing,
        )
        seen.add(step_instance(result, context.health, runner_type.name, bool(missing)))
    failure = context.failure
    result.verdicts[InstanceKey(HEALTH_RULE, COLLECTOR)] = Verdict(
        breached=failure is not None,
        breached_signals=("collection_failed",) if failure else (),
        missing={"collection": f"{failure.error_type}: {failure.error_message}"} if failure else {},
    )
    seen.add(step_instance(result, context.health, COLLECTOR, failure is not None))
    if context.snapshot is not None:
        seen |= step_discovery(result, context.snapshot)
        seen.add(step_unserved(result, context.snapshot))
        seen.add(step_unjudged(result, context.snapshot))
        seen.add(step_untracked(result, blind_jobs))
        seen |= step_sources(result, context.snapshot)
        seen |= step_matcher(result, context.snapshot)
        seen |= step_slos(result, context.snapshot)
    return seen
