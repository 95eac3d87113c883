"""The evaluate stage: judge a snapshot (or a failed collection), move alert state, page.

Order of work in one tick, chosen so that a page is never lost or doubled:
1. Read the whole state partition once.
2. Re-publish pages left unsent by an earlier tick whose claim has lapsed.
3. Ignore the observation if a newer one was applied already. The same one may
   be applied again: Lambda's retry of a tick that failed halfway finishes it,
   and applying a snapshot a second time changes nothing a second time.
4. Plan (plan.py): step every (rule, runner type) instance; decide each group's page.
5. Word each due page (page.py) and render its bodies into the group's outbox.
6. If anything changed: claim the tick (conditional cursor write), write
   instances, then per group write the page into its outbox (conditional on the
   version read), publish, and clear the outbox (delivery.py). A lost race writes
   and publishes nothing; a failed publish stays in the outbox for the next tick.
   Writes carry this evaluation's token, so a retried write that had taken
   effect is not mistaken for a lost race (adapters/state_table/alerts.py).
7. Record each change of status, and of what holds an alert back, in its alert's history
   (adapters/state_table/transition_log.py), once the pages are out.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from queuewatch.adapters.aws.errors import DeadlineExceeded
from queuewatch.adapters.state_table.alerts import (
    WriteConflict,
    advance_cursor,
    delete_instance,
    load_state,
    put_group,
    put_instance,
)
from queuewatch.adapters.state_table.known_names import digest, put_known
from queuewatch.adapters.state_table.transition_log import Transition, put_transition
from queuewatch.alerting.alert import Alert
from queuewatch.alerting.alert_state import LIKELY_CAUSE_KEPT, GroupRecord, InstanceKey, PagedAs, PageKind, Status
from queuewatch.config import Config
from queuewatch.config.known import known_names
from queuewatch.evaluate.delivery import Delivery, EvaluatorMemory, outbox_for
from queuewatch.evaluate.forecast_board import publish_forecasts
from queuewatch.evaluate.page import build_alert
from queuewatch.evaluate.plan import plan
from queuewatch.evaluate.result import EvaluationResult
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.steps import GroupPlan, InstanceChange, Plan
from queuewatch.model.github_status import GitHubStatus
from queuewatch.model.rules import Priority
from queuewatch.model.snapshot import MAX_AHEAD, Observation, check_plausible, observation_label, observed_at

WRITE_THREADS = 16  # instance writes in flight at once: independent conditional puts, I/O-bound

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient


def evaluate(
    observation: Observation,
    config: Config,
    dynamodb: DynamoDBClient,
    sns: SNSClient,
    stack: Stack,
    *,
    memory: EvaluatorMemory | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    github: GitHubStatus | None = None,
) -> EvaluationResult:
    """Apply one observation. `clock` is the wall clock, only to refuse observations implausibly far from it."""
    memory = EvaluatorMemory() if memory is None else memory
    writer = uuid.uuid4().hex  # stamps this evaluation's writes: see adapters/state_table/alerts.py
    now = observed_at(observation)
    wall = clock()
    check_plausible(observation, wall)  # before the first read: a refused observation changes nothing
    implausible_after = wall + MAX_AHEAD
    state = load_state(dynamodb, stack.table)
    _publish_names(dynamodb, stack.table, config, state.names_digest, wall)
    result = EvaluationResult(
        outcome="applied", evaluated_at=now, observation=observation_label(observation), read_units=state.read_units
    )
    delivery = Delivery(dynamodb, sns, stack, now, result, memory, writer)
    delivery.retry_unsent(state)
    # A tick stamped past any plausible time (applied before such ticks were refused) orders nothing:
    # the cursor write replaces it (advance_cursor), so one bad event cannot blind the evaluator for good.
    ticks = (state.applied_at, memory.newest_tick)
    newest = max((t for t in ticks if t is not None and t <= implausible_after), default=None)
    if newest is not None and now < newest:
        result.outcome = "stale"
        return result

    planned = plan(config, state, observation, now, github)
    memory.judged(now)
    publish_forecasts(dynamodb, stack.table, planned, result)  # for status and the dashboard
    result.firing = planned.with_status(Status.FIRING)
    result.pending = planned.with_status(Status.PENDING)
    result.degraded = sorted(planned.degraded)
    if not planned.changed:
        result.outcome = "unchanged"
        return result
    # Every page is worded and rendered before the first write: nothing is half-applied if that fails.
    groups = [(_with_page(planned, g, g.page, stack) if g.page else g.record, g) for g in planned.groups]
    try:
        advance_cursor(dynamodb, stack.table, now, writer, implausible_after=implausible_after)
        result.writes += 1
        result.writes += _write_instances(dynamodb, stack.table, planned.instance_changes, now, writer)
    except WriteConflict:
        result.outcome = "conflict"  # a concurrent or newer evaluation owns this tick
        return result
    except DeadlineExceeded:
        # Out of time: what was written stands, the rest is planned again next tick from the stored
        # state, and no group was paged yet, so nothing is lost or sent twice.
        result.deferred = [g.record.key for g in planned.groups]
        return result
    for index, (record, group) in enumerate(groups):
        try:
            put_group(dynamodb, stack.table, record, group.expected_version, now, writer)
            result.writes += 1
            if record.outbox is not None:
                delivery.send(record, group.expected_version + 1)
        except WriteConflict:
            result.outcome = "conflict"
        except DeadlineExceeded:
            # Out of time between groups: a page written to its outbox goes out on a later tick (its
            # lease runs out); the groups not reached are decided again next tick from their instances.
            result.deferred = [g.record.key for _, g in groups[index:]]
            return result
    # Pages first, then the alerts' history: a tick short of time spends it on the pages.
    unrecorded = _record_transitions(dynamodb, stack.table, _transitions(planned))
    result.log_failed += [f"transition#{key}" for key in unrecorded]
    return result


def _publish_names(dynamodb: DynamoDBClient, table: str, config: Config, published: str | None, now: datetime) -> None:
    """The config's rules, teams and runner types for the commands (adapters/state_table/known_names.py), when
    they differ from those published. A failed write never costs the tick its pages; the next tick tries again."""
    names = known_names(config)
    if digest(names) == published:
        return
    try:
        put_known(dynamodb, table, names, now)
    except (ClientError, BotoCoreError, DeadlineExceeded):
        return


def _transitions(planned: Plan) -> list[tuple[InstanceKey, Transition]]:
    """The changes of status this plan makes, with the figures that made them and what held them back; and
    each firing or pending alert that a silence, window or GitHub hold starts (`silenced`) or stops
    (`unsilenced`) holding back, as its own change."""
    context = planned.context
    found: list[tuple[InstanceKey, Transition]] = []
    for change in planned.instance_changes:
        before = change.previous.status.value if change.previous else "ok"
        after = change.new.status.value if change.new else ("resolved" if before == Status.FIRING else "ok")
        verdict = planned.verdicts.get(change.key)
        rule = context.rule(change.key.rule)
        team = context.team(rule, change.key.runner_type)
        held_before = change.previous.held_by if change.previous else ()
        held_now = change.new.held_by if change.new else ()
        # A rule gone from the config judged nothing this tick; its alert resolves on the queue's figures as seen.
        seen = context.by_name.get(change.key.runner_type) if verdict is None else None
        figures = Transition(
            at=context.now,
            rule=change.key.rule,
            runner_type=change.key.runner_type,
            status=after,
            previous=before,
            queue_size=verdict.queue_size if verdict else seen.value(rule.size_signal) if seen else None,
            queue_time=verdict.queue_time if verdict else seen.value(rule.time_signal) if seen else None,
            breached=verdict.breached_signals if verdict else (),
            silenced_by=held_now or (context.holding(rule, change.key.runner_type) if change.new is None else ()),
            team=team,
        )
        if before != after:  # else a keep-firing clock or a team moved: no change of status
            found.append((change.key, figures))
        if change.previous is not None and change.new is not None and held_before != held_now:
            held = "silenced" if held_now else "unsilenced"
            found.append(
                (change.key, replace(figures, status=held, previous=after, silenced_by=held_now or held_before))
            )
    return found


def _record_transitions(
    dynamodb: DynamoDBClient, table: str, transitions: list[tuple[InstanceKey, Transition]]
) -> list[InstanceKey]:
    """Each change of status the tick wrote, in its alert's history (transition_log.py), WRITE_THREADS at a
    time; each is put only if absent, so a retried tick records nothing twice. Returns those not recorded:
    the history is the on-call's record, never a reason to fail a tick whose pages went out."""
    unrecorded: list[InstanceKey] = []

    def record(key: InstanceKey, transition: Transition) -> None:
        try:
            put_transition(dynamodb, table, transition)
        except (ClientError, BotoCoreError, DeadlineExceeded):
            unrecorded.append(key)

    with ThreadPoolExecutor(max_workers=WRITE_THREADS, thread_name_prefix="evaluate-history") as pool:
        for future in [pool.submit(record, key, t) for key, t in transitions]:
            future.result()
    return unrecorded


def _write_instances(
    dynamodb: DynamoDBClient, table: str, changes: list[InstanceChange], now: datetime, writer: str
) -> int:
    """Every instance change, WRITE_THREADS at a time: each is its own conditional write, so their order does
    not matter, and a fleet-wide incident's thousands of them fit one tick before its page is written.
    Raises WriteConflict if any lost a race, else DeadlineExceeded if time ran out; what was written stands."""

    def write(change: InstanceChange) -> None:
        if change.new is None:
            assert change.previous is not None
            delete_instance(dynamodb, table, change.key, change.previous.version, writer)
        else:
            expected = change.previous.version if change.previous else 0
            put_instance(dynamodb, table, change.new, expected, now, writer)

    written = 0
    failures: list[Exception] = []
    with ThreadPoolExecutor(max_workers=WRITE_THREADS, thread_name_prefix="evaluate-write") as pool:
        for future in [pool.submit(write, change) for change in changes]:
            try:
                future.result()
                written += 1
            except (WriteConflict, DeadlineExceeded) as error:
                failures.append(error)
    conflict = next((error for error in failures if isinstance(error, WriteConflict)), None)
    if conflict is not None or failures:
        raise conflict or failures[0]
    return written


def _with_page(planned: Plan, group: GroupPlan, page: PageKind, stack: Stack) -> GroupRecord:
    """The group's record with its page rendered into the outbox, and what the page carried kept for its resolve."""
    alert = build_alert(planned, group, stack)
    teams = {planned.context.team(group.rule, name) for name in group.decision.members}
    paged = _paged_as(alert, tuple(sorted(teams)))
    earlier = group.record.paged_as if page is not PageKind.NEW else None
    if earlier is not None and page is not PageKind.RESOLVED:
        # The same episode: its resolve must reach whoever any of its pages reached (docs/guarantees.md, I1).
        highest = min(Priority(earlier.episode_priority or earlier.priority), Priority(alert.priority))
        paged = replace(paged, episode_priority=highest.value, teams=tuple(sorted(teams | set(earlier.teams))))
    record = replace(group.record, paged_as=paged)
    routing = planned.context.config.routing
    return replace(record, outbox=outbox_for(alert, record, stack, planned.context.now, routing, page))


def _paged_as(alert: Alert, teams: tuple[str, ...]) -> PagedAs:
    return PagedAs(
        priority=alert.priority,
        team=alert.team,
        teams=teams,
        title=alert.title,
        group_by=alert.group_by,
        runbook_url=alert.runbook_url,
        dashboard_url=alert.dashboard_url,
        jobs_queued=None if alert.jobs_queued is None else int(alert.jobs_queued),
        jobs_queued_basis=alert.jobs_queued_basis,
        likely_cause=alert.likely_cause[:LIKELY_CAUSE_KEPT] if alert.likely_cause else None,
    )
