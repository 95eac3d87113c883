"""Each group's page, through the holds in their order (holds/): what fires, what a higher-priority page of the
same problem holds back (inhibition), what a silence, window or GitHub hold holds back, then the page due (pure)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import datetime

from queuewatch.alerting.alert_state import (
    GroupDecision,
    GroupRecord,
    GroupStatus,
    InstanceKey,
    InstanceState,
    PageKind,
    Status,
    decide_group,
)
from queuewatch.alerting.silences import SUPERSEDED_BY
from queuewatch.evaluate.context import Context
from queuewatch.evaluate.holds import HELD_LISTED
from queuewatch.evaluate.holds.inhibit import Problem, inhibits, problem
from queuewatch.evaluate.steps import GroupPlan, InstanceChange, Plan
from queuewatch.model.rules import Rule


def mark_superseded(result: Plan) -> None:
    """A firing alert whose page a higher-priority rule holds back keeps that among what holds it
    (`superseded-by:<rule>`), as it keeps a silence: its history shows the escalation held it back, and the
    higher page's end released it, each once. Only a change of holder writes; a steady escalation writes nothing."""
    changes = {change.key: change for change in result.instance_changes}
    for key, state in result.instances.items():
        rule = result.context.rules.get(key.rule)
        holder = result.holder(rule, key.runner_type) if rule is not None else None
        if rule is None or holder is None or state.status is not Status.FIRING or not inhibits(holder, rule):
            continue
        marker = SUPERSEDED_BY + holder.name
        if marker in state.held_by:
            continue  # held over from a tick that did not see the runner type
        new = replace(state, held_by=tuple(sorted((*state.held_by, marker)))[:HELD_LISTED])
        result.instances[key] = new
        changes[key] = InstanceChange(key, result.context.state.instances.get(key), new)
    result.instance_changes = [change for change in changes.values() if change.new != change.previous]


def _holders(context: Context, instances: dict[InstanceKey, InstanceState]) -> dict[Problem, Rule]:
    """Per problem (holds/inhibit.py), the highest-priority rule firing on it and not held back by a silence,
    window or GitHub hold: a hold someone set keeps back what it names, and only that, never a lower rule too."""
    holders: dict[Problem, Rule] = {}
    for state in instances.values():
        rule = context.rules.get(state.rule)
        if rule is None or state.status is not Status.FIRING:
            continue
        found = problem(rule, state.runner_type, context.team(rule, state.runner_type))
        if found is None or context.silenced(rule, state.runner_type):
            continue
        held = holders.get(found)
        if held is None or (rule.priority, rule.name) < (held.priority, held.name):
            holders[found] = rule
    return holders


def decide_groups(result: Plan) -> None:
    context = result.context
    result.holders = _holders(context, result.instances)
    firing: dict[tuple[str, str], set[str]] = defaultdict(set)
    for state in result.instances.values():
        if state.status is Status.FIRING:
            rule = context.rule(state.rule)
            firing[(rule.name, context.group_of(rule, state.runner_type))].add(state.runner_type)
    plain = _plain_groups(result)
    keys = set(firing) | {(r.rule, r.group) for r in context.state.groups.values()}
    for rule_name, group in sorted(keys):
        rule = context.rule(rule_name)
        record = context.state.groups.get(f"{rule_name}#{group}")
        if record is not None and record.outbox is not None and record.status is None:
            continue  # a resolve page is still unsent; it goes out first
        members = firing.get((rule_name, group), set())
        silenced = {name for name in members if context.silenced(rule, name)}
        inhibited = {name for name in members if inhibits(result.holder(rule, name), rule)}
        decision = decide_group(
            record.status if record else None,
            record.started_at if record else None,
            record.members if record else (),
            record.last_notified_at if record else None,
            members,
            silenced,
            context.now,
            rule.repeat_interval,
            inhibited,
        )
        if decision.page is None and decision.status is GroupStatus.FIRING and context.lowered_before(rule, record):
            decision = replace(decision, page=PageKind.REPEAT)
        resolving = decision.page is PageKind.RESOLVED
        rule = context.as_paged(rule, record) if resolving else context.github_adjusted(rule, record)
        forecast_only = _forecast_only(rule, record, decision, (rule_name, group) in plain)
        planned = _plan_group(context.now, rule, group, record, replace(decision, forecast_only=forecast_only))
        if planned is not None:
            result.groups.append(planned)
    # The higher page first, then the close of what it supersedes: the pager never sees the problem unpaged.
    result.groups.sort(key=lambda g: g.decision.superseded)


def _plain_groups(result: Plan) -> set[tuple[str, str]]:
    """The (rule, group)s where an alert's plain condition breached, before this tick's step (an alert that
    resolves now) or after it; of the rules that forecast, or that hold a forecast episode open (a rule whose
    `forecast:` was removed mid-episode pages plainly from then on)."""
    context = result.context
    watched = {r.name for r in context.rules.values() if r.forecast_horizon is not None}
    watched |= {record.rule for record in context.state.groups.values() if record.forecast_only}
    found: set[tuple[str, str]] = set()
    if not watched:
        return found
    before = (change.previous for change in result.instance_changes if change.previous is not None)
    for state in (*result.instances.values(), *before):
        if state.rule in watched and (state.happened or not state.forecast):
            rule = context.rule(state.rule)
            found.add((rule.name, context.group_of(rule, state.runner_type)))
    return found


def _forecast_only(rule: Rule, record: GroupRecord | None, decision: GroupDecision, plain: bool) -> bool:
    """An episode opened by forecasts alone stays a forecast episode until a plain breach joins it; one that
    opened on a plain breach never becomes one."""
    if decision.status is None and decision.page is not PageKind.RESOLVED:
        return False
    opening = decision.page is PageKind.NEW and rule.forecast_horizon is not None
    carried = record is not None and record.status is not None and record.forecast_only
    return (opening or carried) and not plain


def _plan_group(
    now: datetime, rule: Rule, group: str, record: GroupRecord | None, decision: GroupDecision
) -> GroupPlan | None:
    if record is None and decision.status is None and decision.page is None:
        return None
    paging = decision.page is not None
    new = GroupRecord(
        rule=rule.name,
        group=group,
        status=decision.status,
        started_at=decision.started_at,
        members=decision.members,
        last_notified_at=now if paging else (record.last_notified_at if record else None),
        sequence=(record.sequence if record else 0) + (1 if paging else 0),
        version=record.version if record else 0,
        outbox=None if paging else (record.outbox if record else None),  # a due page's outbox: see the stage
        paged_as=record.paged_as if record else None,  # a due page's: see the stage
        forecast_only=decision.forecast_only,
    )
    if not paging and new == record:
        return None
    return GroupPlan(rule, new, record.version if record else 0, decision.page, decision)
