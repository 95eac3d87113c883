"""One tick's plan as it is built, and the step of one (rule, instance) alert on what was judged (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from queuewatch.alerting.alert_state import (
    GroupDecision,
    GroupRecord,
    InstanceKey,
    InstanceState,
    PageKind,
    Status,
    step,
)
from queuewatch.evaluate.context import Context
from queuewatch.evaluate.holds.inhibit import Problem, problem
from queuewatch.model.rules import HEALTH_RULE, Rule, Verdict


@dataclass(frozen=True)
class InstanceChange:
    key: InstanceKey
    previous: InstanceState | None  # None: it was OK
    new: InstanceState | None  # None: it is OK now (its item goes)


@dataclass(frozen=True)
class GroupPlan:
    """One group's next record; `page` says a page is due, whose outbox the stage fills in."""

    rule: Rule
    record: GroupRecord
    expected_version: int  # the version read: the write is conditional on it
    page: PageKind | None
    decision: GroupDecision


@dataclass
class Plan:
    """Every state change one observation implies, computed before anything is written."""

    context: Context
    verdicts: dict[InstanceKey, Verdict] = field(default_factory=dict)
    instances: dict[InstanceKey, InstanceState] = field(default_factory=dict)  # after this tick; OK ones absent
    instance_changes: list[InstanceChange] = field(default_factory=list)
    groups: list[GroupPlan] = field(default_factory=list)
    degraded: set[str] = field(default_factory=set)
    findings: dict[InstanceKey, str] = field(default_factory=dict)  # an SLO instance's burn rates, in words
    # Per problem, the highest-priority rule paging it this tick: it holds back lower-priority rules' pages of it.
    holders: dict[Problem, Rule] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.instance_changes or self.groups)

    def holder(self, rule: Rule, instance: str) -> Rule | None:
        """The rule whose page of the same problem as `rule`'s on `instance` may hold it back (holds/inhibit.py)."""
        found = problem(rule, instance, self.context.team(rule, instance))
        return self.holders.get(found) if found is not None else None

    def with_status(self, status: Status) -> list[InstanceKey]:
        return sorted(key for key, state in self.instances.items() if state.status is status)


def step_instance(result: Plan, rule: Rule, runner_type: str, breached: bool | None) -> InstanceKey:
    key = InstanceKey(rule.name, runner_type)
    previous = result.context.state.instances.get(key)
    new = step(
        previous,
        breached,
        result.context.now,
        rule=rule.name,
        runner_type=runner_type,
        pending_for=rule.pending_for,
        keep_firing_for=rule.keep_firing_for,
    )
    observed = result.context.by_name.get(runner_type)
    if new is not None and observed is not None and new.team != observed.team:
        new = replace(new, team=observed.team)
    if new is not None and breached and (rule.forecast_horizon is not None or new.forecast):
        new = _with_forecast(previous, new, result.verdicts.get(key))
    if new is not None and rule.name == HEALTH_RULE:
        new = replace(new, reason=_reason(result.verdicts.get(key), previous, new))
    if new is not None:
        new = replace(new, held_by=result.context.holding(rule, runner_type))
    if new is not None:
        result.instances[key] = new
    if new != previous:
        result.instance_changes.append(InstanceChange(key, previous, new))
    return key


def _with_forecast(previous: InstanceState | None, new: InstanceState, verdict: Verdict | None) -> InstanceState:
    """A breach marks whether it stands on the forecast alone, and whether the plain condition has breached in
    the alert's life; a clear or an unknown keeps both as they were, so a forecast that falls back is told apart
    from a queue that cleared."""
    forecast = verdict is not None and verdict.forecast is not None
    happened = (previous is not None and previous.happened) or not forecast
    if new.forecast == forecast and new.happened == happened:
        return new
    return replace(new, forecast=forecast, happened=happened)


REASON_LENGTH = 1000  # characters of the monitor's reason kept in the state: status shows it, a page has it all


def _reason(verdict: Verdict | None, previous: InstanceState | None, new: InstanceState) -> str | None:
    """What the monitor could not see and why, taken when the instance turns pending or firing, else kept."""
    if previous is not None and previous.status is new.status:
        return previous.reason
    missing = verdict.missing if verdict else {}
    text = "; ".join(f"{name}: {why}" for name, why in missing.items())
    return text[:REASON_LENGTH] or None
