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
   effect is not mistaken for a lost race (adapters/state_table.py).
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import TYPE_CHECKING

from queuewatch.adapters.state_table import (
    WriteConflict,
    advance_cursor,
    delete_instance,
    load_state,
    put_group,
    put_instance,
)
from queuewatch.alert_state import Status
from queuewatch.config import Config
from queuewatch.evaluate.delivery import Delivery, EvaluatorMemory, outbox_for
from queuewatch.evaluate.page import build_alert
from queuewatch.evaluate.plan import plan
from queuewatch.evaluate.result import EvaluationResult
from queuewatch.evaluate.stack import Stack
from queuewatch.snapshot import Observation, observation_label, observed_at

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
) -> EvaluationResult:
    memory = EvaluatorMemory() if memory is None else memory
    writer = uuid.uuid4().hex  # stamps this evaluation's writes: see adapters/state_table.py
    now = observed_at(observation)
    state = load_state(dynamodb, stack.table)
    result = EvaluationResult(
        outcome="applied", evaluated_at=now, observation=observation_label(observation), read_units=state.read_units
    )
    delivery = Delivery(dynamodb, sns, stack, now, result, memory, writer)
    delivery.retry_unsent(state)
    newest = max((t for t in (state.applied_at, memory.newest_tick) if t is not None), default=None)
    if newest is not None and now < newest:
        result.outcome = "stale"
        return result

    planned = plan(config, state, observation, now)
    memory.judged(now)
    result.firing = planned.with_status(Status.FIRING)
    result.pending = planned.with_status(Status.PENDING)
    result.degraded = sorted(planned.degraded)
    if not planned.changed:
        result.outcome = "unchanged"
        return result
    # Every page is worded and rendered before the first write: nothing is half-applied if that fails.
    groups = [
        (
            replace(g.record, outbox=outbox_for(build_alert(planned, g, stack), g.record, stack, now))
            if g.page
            else g.record,
            g,
        )
        for g in planned.groups
    ]
    try:
        advance_cursor(dynamodb, stack.table, now, writer)
        result.writes += 1
        for change in planned.instance_changes:
            if change.new is None:
                assert change.previous is not None
                delete_instance(dynamodb, stack.table, change.key, change.previous.version, writer)
            else:
                expected = change.previous.version if change.previous else 0
                put_instance(dynamodb, stack.table, change.new, expected, now, writer)
            result.writes += 1
    except WriteConflict:
        result.outcome = "conflict"  # a concurrent or newer evaluation owns this tick
        return result
    for record, group in groups:
        try:
            put_group(dynamodb, stack.table, record, group.expected_version, now, writer)
            result.writes += 1
        except WriteConflict:
            result.outcome = "conflict"
            continue
        if record.outbox is not None:
            delivery.send(record, group.expected_version + 1)
    return result
