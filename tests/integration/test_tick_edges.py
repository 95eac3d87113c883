"""Ticks at the edges: stamped in the future or another offset, or out of time halfway through their writes."""

from __future__ import annotations

import itertools
import threading
from datetime import timedelta, timezone
from typing import TYPE_CHECKING, Any

import pytest
from support import Inbox, StackInMoto, arriving_now, minutes, runner_type, session, snapshot

from queuewatch.adapters.aws.clients import AwsClients, Deadline
from queuewatch.adapters.state_table.alerts import advance_cursor, load_state
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult, Stack
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.snapshot import ImplausibleObservation, Snapshot
from queuewatch_cli.devkit.moto_tables import create_state_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient

CONFIG = """
version: 1
defaults:
  rule: {team: ci-infra, keep_firing_for: 5m, repeat_interval: 1h}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
"""
FLEET = 20
FLEET_CONFIG = (
    "version: 1\ndefaults:\n  rule: {team: ci-infra, keep_firing_for: 5m, repeat_interval: 1h}\nrunner_types:\n"
    + "".join(f"  - {{name: rt{n}, queue: {{name: q{n}}}}}\n" for n in range(FLEET))
    + "rules:\n  - {name: jobs-queueing, thresholds: {queue_size: 0}, priority: P2, group_by: runner_type}\n"
)


@pytest.fixture
def table(aws: None) -> tuple[DynamoDBClient, SNSClient, Stack]:
    moto = StackInMoto.create(name="t")
    return moto.dynamodb, moto.sns, moto.stack


def queueing(at: float, size: float = 14) -> Snapshot:
    return snapshot(minutes(at), runner_type("linux.2xlarge", size, size * 60))


def test_a_future_snapshot_is_refused_and_changes_nothing(table: tuple[DynamoDBClient, SNSClient, Stack]) -> None:
    dynamodb, sns, stack = table
    config = parse_config(CONFIG, source="t.yaml")
    future = queueing(24 * 60)  # a hand-edited event, a day ahead
    with pytest.raises(ImplausibleObservation, match="ahead of the evaluator's clock"):
        evaluate(future, config, dynamodb, sns, stack, clock=lambda: minutes(0))
    state = load_state(dynamodb, "state")
    assert (state.applied_at, state.instances, state.groups) == (None, {}, {})
    # And the next real tick applies as if it had never come.
    result = evaluate(queueing(1), config, dynamodb, sns, stack, clock=lambda: minutes(1))
    assert result.outcome == "applied" and result.pages_sent


def test_a_future_cursor_left_by_an_earlier_version_does_not_blind_the_evaluator(
    table: tuple[DynamoDBClient, SNSClient, Stack],
) -> None:
    dynamodb, sns, stack = table
    advance_cursor(dynamodb, "state", minutes(24 * 60))
    config = parse_config(CONFIG, source="t.yaml")
    result = evaluate(queueing(1), config, dynamodb, sns, stack, clock=arriving_now(queueing(1)))
    assert result.outcome == "applied" and result.pages_sent
    assert load_state(dynamodb, "state").applied_at == minutes(1)


def test_an_offset_timestamp_orders_as_its_instant(table: tuple[DynamoDBClient, SNSClient, Stack]) -> None:
    dynamodb, sns, stack = table
    config = parse_config(CONFIG, source="t.yaml")
    for minute in (1, 2, 3):
        tick = queueing(minute, 14 if minute == 1 else 0)
        result = evaluate(tick, config, dynamodb, sns, stack, clock=arriving_now(tick))
        assert result.outcome in ("applied", "unchanged"), (minute, result.outcome)
    # Minute 3 changed nothing, so the cursor stays at minute 2.
    assert load_state(dynamodb, "state").applied_at == minutes(2)
    # A snapshot stamped +01:00 and a UTC one a minute later: the later instant wins, whatever the text says.
    offset = snapshot(minutes(4).astimezone(timezone(timedelta(hours=1))), runner_type("linux.2xlarge", 0, 0))
    assert offset.collected_at.utcoffset() == timedelta(0)  # normalised as it is made or decoded
    evaluate(offset, config, dynamodb, sns, stack, clock=arriving_now(offset))
    later = queueing(5, 14)
    assert evaluate(later, config, dynamodb, sns, stack, clock=arriving_now(later)).outcome == "applied"


def fleet_tick(at: float, size: float) -> Snapshot:
    return snapshot(minutes(at), *[runner_type(f"rt{n}", size, size * 60) for n in range(FLEET)])


@pytest.mark.parametrize("requests_in_time", [3, 10, 25, 40, 60])
def test_a_deadline_hit_halfway_through_the_writes_loses_and_doubles_nothing(aws: None, requests_in_time: int) -> None:
    config = parse_config(FLEET_CONFIG, source="t.yaml")
    clients = AwsClients(session())
    dynamodb, sns = clients.dynamodb("us-east-1"), clients.sns("us-east-1")
    create_state_table(dynamodb, "state")
    inbox = Inbox(sns)
    stack = Stack(table="state", topic_arn=sns.create_topic(Name="alerts")["TopicArn"], name="t", region="us-east-1")
    memory = EvaluatorMemory()

    def tick(observation: Snapshot, deadline: Deadline | None = None) -> EvaluationResult:
        clients.start_tick(deadline)
        return evaluate(observation, config, dynamodb, sns, stack, memory=memory, clock=arriving_now(observation))

    requests = itertools.count()
    # Every request reads the clock once: the deadline passes after `requests_in_time` of them.
    first = tick(fleet_tick(0, 14), Deadline(at=requests_in_time, clock=lambda: next(requests)))
    assert first.deferred  # it ran out of time with work left
    for minute in range(1, 6):  # the next ticks finish the work; the outbox lease (60 s) lets stragglers out
        tick(fleet_tick(minute, 14))
    pages = inbox.drain()
    firing = sorted(p["group"] for p in pages if p["status"] == "firing")
    assert firing == sorted(f"rt{n}" for n in range(FLEET))  # every runner type paged, each once
    assert all(p["page"] == "new" for p in pages)
    state = load_state(dynamodb, "state")
    assert {g.group for g in state.groups.values() if g.outbox is None} == {f"rt{n}" for n in range(FLEET)}


def test_a_fleet_wide_incident_pages_on_its_first_tick_at_aws_latency(aws: None) -> None:
    """Each runner type that starts firing is a write of its state before the page: written one after another
    at 15 ms, 600 of them outlast a 3-second budget; written WRITE_THREADS at a time, they fit."""
    size, latency = 600, 0.015
    config = parse_config(
        "version: 1\nrunner_types:\n"
        + "".join(f"  - {{name: rt{n}, queue: {{name: q{n}}}}}\n" for n in range(size))
        + "rules:\n  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_size: 0}, priority: P2}\n",
        source="t.yaml",
    )
    clients = AwsClients(session())
    moto = StackInMoto.create(name="t", clients=clients)
    dynamodb, sns, stack = moto.dynamodb, moto.sns, moto.stack
    inbox = Inbox(sns)
    main = threading.get_ident()
    spent: dict[int, float] = {main: 0.0}  # simulated seconds each thread has waited on AWS

    def one_call(**_: Any) -> None:
        ident = threading.get_ident()
        if ident == main:
            spent[main] = max(spent.values())  # the main thread waits for every writer
        else:
            spent.setdefault(ident, spent[main])
        spent[ident] += latency

    for client in (dynamodb, sns):
        client.meta.events.register("before-call", one_call)
    clients.start_tick(Deadline(at=3.0, clock=lambda: max(spent.values())))
    incident = snapshot(minutes(0), *[runner_type(f"rt{n}", 3, 600) for n in range(size)])
    result = evaluate(incident, config, dynamodb, sns, stack, clock=arriving_now(incident))
    assert (result.outcome, result.deferred, len(result.firing)) == ("applied", [], size)
    [page] = inbox.drain()
    assert page["runner_types_affected"] == size
