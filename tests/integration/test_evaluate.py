"""The evaluator against moto DynamoDB and SNS: pages are right, never doubled, never lost."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from jsonschema import Draft202012Validator
from support import T0, StackInMoto, arriving_now, minutes, race, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import load_state, put_silence
from queuewatch.alerting.alert import shipped_alert_schema
from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.snapshot import CollectorFailure, Snapshot

CONFIG = """
version: 1
defaults:
  rule:
    team: ci-infra
    runbook_url: https://runbooks.example.com/jobs-queueing
    keep_firing_for: 5m
    repeat_interval: 1h
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}, team: rocm}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 1m, queue_size: 0}
    priority: P2
monitor:
  for: 2m
"""

VALIDATOR = Draft202012Validator(shipped_alert_schema())


class World:
    """A state table, a topic and an SQS subscriber, as the stack deploys them."""

    def __init__(self, config_text: str = CONFIG) -> None:
        self.config: Config = parse_config(config_text, source="test.yaml")
        self.moto = StackInMoto.create()
        self.dynamodb, self.sns, self.stack = self.moto.dynamodb, self.moto.sns, self.moto.stack
        self.sqs = boto3.client("sqs", region_name="us-east-1")
        self.inbox = self.moto.subscribe_queue("inbox")

    def tick(self, observation: Snapshot | CollectorFailure) -> EvaluationResult:
        return self.moto.evaluate(observation, self.config)

    def pages(self) -> list[dict[str, Any]]:
        """Every alert received since the last call, each checked against the shipped schema."""
        out: list[dict[str, Any]] = []
        while True:
            batch = self.sqs.receive_message(QueueUrl=self.inbox, MaxNumberOfMessages=10).get("Messages", [])
            if not batch:
                return out
            for message in batch:
                self.sqs.delete_message(QueueUrl=self.inbox, ReceiptHandle=message["ReceiptHandle"])
                envelope = json.loads(message["Body"])
                alert = json.loads(envelope["Message"])
                VALIDATOR.validate(alert)
                alert["_attributes"] = {k: v["Value"] for k, v in envelope["MessageAttributes"].items()}
                alert["_subject"] = envelope["Subject"]
                out.append(alert)


@pytest.fixture
def world(aws: None) -> World:
    return World()


def queueing(at_minute: float, size: float = 14, age: float = 114 * 60) -> Snapshot:
    return snapshot(
        minutes(at_minute),
        runner_type("linux.2xlarge", size, age),
        runner_type("linux.4xlarge", 0, 0),
        runner_type("rocm.gpu", 0, 0, team="rocm"),
    )


def quiet(at_minute: float) -> Snapshot:
    return queueing(at_minute, 0, 0)


def test_the_seed_incident_pages_once_with_its_figures(world: World) -> None:
    result = world.tick(queueing(0))
    [page] = world.pages()
    assert result.pages_sent == [page["notification_id"]]
    assert page["status"] == "firing" and page["priority"] == "P2"
    [figures] = page["runner_types"]
    assert figures["runner_type"] == "linux.2xlarge"
    assert (figures["queue_size"], figures["queue_time_seconds"]) == (14, 6840)
    assert (figures["queue_size_threshold"], figures["queue_time_threshold_seconds"]) == (0, 60)
    assert figures["breached"] == ["queue_size", "queue_time"]
    assert page["max_queue_time_seconds"] == 6840 and page["max_queue_size"] == 14
    assert page["runbook_url"] == "https://runbooks.example.com/jobs-queueing"
    assert "--match linux.2xlarge" in page["silence"]["command"]
    assert page["_attributes"] == {
        "status": "firing",
        "priority": "P2",
        "severity": "warning",
        "team": "ci-infra",
        "teams": '["ci-infra"]',
        "rule": "jobs-queueing",
        "runner_type": "linux.2xlarge",
        "kind": "page",
    }
    assert "max queue time 1h54m" in page["_subject"] and "max queue size 14" in page["_subject"]


def test_a_steady_firing_tick_pages_nothing_and_writes_nothing(world: World) -> None:
    world.tick(queueing(0))
    world.pages()
    for minute in range(1, 6):
        result = world.tick(queueing(minute, age=(114 + minute) * 60))
        assert result.outcome == "unchanged" and result.writes == 0
    assert world.pages() == []


def test_resolves_once_clear_for_keep_firing_for(world: World) -> None:
    world.tick(queueing(0))
    first = world.pages()[0]
    world.tick(quiet(1))
    world.tick(quiet(5))
    assert world.pages() == []
    world.tick(quiet(6))
    [resolve] = world.pages()
    assert resolve["status"] == "resolved"
    assert resolve["dedup_key"] == first["dedup_key"] and resolve["title"] == first["title"]
    assert resolve["runner_types"][0]["status"] == "resolved"
    assert load_state(world.dynamodb, "state").groups == {}
    world.tick(quiet(7))
    assert world.pages() == []


def test_flapping_within_keep_firing_for_is_one_alert(world: World) -> None:
    world.tick(queueing(0))
    for minute, snap in enumerate([quiet(1), queueing(2), quiet(3), queueing(4), quiet(5)], start=1):
        assert snap.collected_at == minutes(minute)
        world.tick(snap)
    assert len(world.pages()) == 1


def test_pending_period_then_recovery_never_pages(aws: None) -> None:
    world = World(CONFIG.replace("priority: P2", "priority: P2\n    for: 3m"))
    for minute in range(3):
        assert world.tick(queueing(minute)).pending == [InstanceKey("jobs-queueing", "linux.2xlarge")]
    world.tick(quiet(3))
    assert world.pages() == []
    for minute in range(4, 8):
        world.tick(queueing(minute))
    [page] = world.pages()
    assert page["runner_types"][0]["since"] == "2026-11-21T18:07:00Z"


def test_repeat_interval_repeats_with_the_same_dedup_key(world: World) -> None:
    world.tick(queueing(0))
    world.tick(queueing(59))
    world.tick(queueing(60))
    first, repeat = world.pages()
    assert repeat["page"] == "repeat" and repeat["sequence"] == 2
    assert repeat["dedup_key"] == first["dedup_key"]


def test_a_runner_type_joining_a_paged_alert_updates_it(world: World) -> None:
    world.tick(queueing(0))
    world.tick(snapshot(minutes(1), runner_type("linux.2xlarge", 14, 6900), runner_type("linux.4xlarge", 3, 300)))
    _, update = world.pages()
    assert update["page"] == "update"
    assert [r["runner_type"] for r in update["runner_types"]] == ["linux.2xlarge", "linux.4xlarge"]
    assert update["_attributes"]["runner_type"] == "multiple"


def test_stale_snapshot_is_ignored(world: World) -> None:
    world.tick(queueing(5))
    world.pages()
    result = world.tick(quiet(3))
    assert result.outcome == "stale" and result.writes == 0
    assert list(load_state(world.dynamodb, "state").instances) == [InstanceKey("jobs-queueing", "linux.2xlarge")]
    assert world.pages() == []


def test_a_late_snapshot_is_ignored_after_a_newer_tick_that_changed_nothing(world: World) -> None:
    memory = EvaluatorMemory()  # the warm container's

    def tick(observation: Snapshot) -> EvaluationResult:
        return evaluate(
            observation,
            world.config,
            world.dynamodb,
            world.sns,
            world.stack,
            memory=memory,
            clock=arriving_now(observation),
        )

    assert tick(queueing(0)).outcome == "applied"
    assert tick(queueing(5)).outcome == "unchanged"  # steady: nothing written, the table's cursor stays at 0
    late = tick(quiet(3))
    assert late.outcome == "stale" and late.writes == 0
    [instance] = load_state(world.dynamodb, "state").instances.values()
    assert instance.clear_since is None  # a quiet minute 3 did not start clearing an alert minute 5 saw firing


def test_the_same_snapshot_twice_pages_once(world: World) -> None:
    snap = queueing(0)
    world.tick(snap)
    second = world.tick(snap)
    assert second.outcome == "unchanged" and second.writes == 0  # applied again (a retry may), to no effect
    assert len(world.pages()) == 1


@pytest.fixture
def failing_publish(world: World) -> list[int]:
    """SNS refuses the next publish calls while the list holds a count above zero."""
    remaining = [1]

    def refuse(**_: Any) -> None:
        if remaining[0] > 0:
            remaining[0] -= 1
            raise ClientError({"Error": {"Code": "InternalError", "Message": "SNS is down"}}, "Publish")

    world.sns.meta.events.register("before-call.sns.Publish", refuse)
    return remaining


def test_a_failed_publish_is_kept_and_sent_on_the_next_tick(world: World, failing_publish: list[int]) -> None:
    first = world.tick(queueing(0))
    assert first.pages_sent == [] and "SNS is down" in first.pages_failed[0]
    assert world.pages() == []
    [group] = load_state(world.dynamodb, "state").groups.values()
    assert group.outbox is not None  # not recorded as sent
    second = world.tick(queueing(1))
    assert second.pages_retried == second.pages_sent == [group.outbox.notification_id]
    assert len(world.pages()) == 1
    world.tick(queueing(2))
    assert world.pages() == []


def test_a_failed_resolve_is_retried_before_a_new_episode(world: World, failing_publish: list[int]) -> None:
    failing_publish[0] = 0
    world.tick(queueing(0))
    world.tick(quiet(1))
    failing_publish[0] = 1
    assert world.tick(quiet(6)).pages_failed
    world.tick(queueing(7))
    statuses = [p["status"] for p in world.pages()]
    assert statuses == ["firing", "resolved", "firing"]


def test_concurrent_evaluations_of_one_snapshot_page_exactly_once(world: World) -> None:
    ticks = [queueing(0), queueing(1), quiet(2), quiet(8), queueing(9), queueing(10), queueing(70), queueing(71)]
    for snap in ticks:

        def prepare(snap: Snapshot = snap) -> Callable[[], EvaluationResult]:
            dynamodb = boto3.client("dynamodb", region_name="us-east-1")
            sns = boto3.client("sns", region_name="us-east-1")
            return lambda: evaluate(snap, world.config, dynamodb, sns, world.stack, clock=arriving_now(snap))

        results = race(2, prepare)
        assert len(results) == 2
        sent = [n for r in results for n in r.pages_sent]
        assert len(sent) == len(set(sent))
    assert [p["page"] for p in world.pages()] == ["new", "resolved", "new", "repeat"]


def test_collector_failure_pages_after_the_monitor_period_and_resolves(world: World) -> None:
    def failure(minute: float) -> CollectorFailure:
        return CollectorFailure(minutes(minute), "Sandbox.Timedout", "Task timed out after 60.00 seconds", f"r{minute}")

    world.tick(failure(0))
    world.tick(failure(1))
    assert world.pages() == []
    world.tick(failure(2))
    [page] = world.pages()
    assert page["rule"] == "queuewatch-health" and page["priority"] == "P3"
    assert page["title"] == "queuewatch monitor degraded"
    [collector] = page["runner_types"]
    assert collector["breached"] == ["collection_failed"]
    assert "Task timed out" in collector["missing"]["collection"]
    assert collector["since"] == "2026-11-21T18:02:00Z"
    world.tick(quiet(3))
    [resolve] = world.pages()
    assert resolve["status"] == "resolved" and resolve["dedup_key"] == page["dedup_key"]


def test_a_missing_queue_degrades_its_runner_type_alone(world: World) -> None:
    def snap(minute: float) -> Snapshot:
        return snapshot(
            minutes(minute),
            runner_type("linux.2xlarge", 14, 6840),
            runner_type("linux.4xlarge", None, None, missing="GetQueueAttributes failed: QueueDoesNotExist"),
            runner_type("rocm.gpu", 0, 0, team="rocm"),
        )

    result = world.tick(snap(0))
    assert result.degraded == ["linux.4xlarge"]
    [queueing_page] = world.pages()
    assert [r["runner_type"] for r in queueing_page["runner_types"]] == ["linux.2xlarge"]
    world.tick(snap(1))
    world.tick(snap(2))
    [degraded] = world.pages()
    assert degraded["rule"] == "queuewatch-health"
    [figures] = degraded["runner_types"]
    assert figures["runner_type"] == "linux.4xlarge" and figures["breached"] == ["no_data"]
    assert "QueueDoesNotExist" in figures["missing"]["queue_size"]


def test_missing_data_holds_a_firing_alert_instead_of_resolving_it(world: World) -> None:
    world.tick(queueing(0))
    for minute in range(1, 10):
        world.tick(snapshot(minutes(minute), runner_type("linux.2xlarge", None, None)))
    pages = world.pages()
    assert [p["rule"] for p in pages] == ["jobs-queueing", "queuewatch-health"]
    assert (
        InstanceKey("jobs-queueing", "linux.2xlarge")
        in world.tick(snapshot(minutes(10), runner_type("linux.2xlarge", None, None))).firing
    )


def test_a_silence_suppresses_the_page_but_keeps_the_state(world: World) -> None:
    put_silence(
        world.dynamodb,
        "state",
        SilenceRecord("s1", ("linux.*",), "jobs-queueing", None, T0, minutes(30), "alice", "known AMI rollout"),
    )
    result = world.tick(queueing(0))
    assert result.firing == [InstanceKey("jobs-queueing", "linux.2xlarge")]
    world.tick(queueing(29))
    assert world.pages() == []
    world.tick(queueing(30))  # the silence has ended: a still-firing alert pages again
    [page] = world.pages()
    assert page["status"] == "firing" and page["page"] == "new"


def test_a_silenced_alert_resolves_quietly(world: World) -> None:
    put_silence(world.dynamodb, "state", SilenceRecord("s1", (), None, "ci-infra", T0, minutes(60), "bob", "drill"))
    world.tick(queueing(0))
    world.tick(quiet(1))
    world.tick(quiet(7))
    assert world.pages() == []
    assert load_state(world.dynamodb, "state").instances == {}


def test_a_silence_for_another_team_does_not_apply(world: World) -> None:
    put_silence(world.dynamodb, "state", SilenceRecord("s1", (), None, "rocm", T0, minutes(60), "bob", "rocm only"))
    world.tick(queueing(0))
    assert len(world.pages()) == 1


def test_a_runner_type_that_disappears_still_resolves(world: World) -> None:
    world.tick(queueing(0))
    world.tick(snapshot(minutes(1), runner_type("linux.4xlarge")))
    world.tick(snapshot(minutes(6), runner_type("linux.4xlarge")))
    _, resolve = world.pages()
    assert resolve["status"] == "resolved" and resolve["runner_types"][0]["runner_type"] == "linux.2xlarge"


def test_group_by_runner_type_pages_each_separately(aws: None) -> None:
    world = World(CONFIG.replace("priority: P2", "priority: P2\n    group_by: runner_type"))
    world.tick(
        snapshot(minutes(0), runner_type("linux.2xlarge", 14, 6840), runner_type("rocm.gpu", 2, 300, team="rocm"))
    )
    pages = sorted(world.pages(), key=lambda p: p["group"])
    assert [p["group"] for p in pages] == ["linux.2xlarge", "rocm.gpu"]
    assert len({p["dedup_key"] for p in pages}) == 2
    assert [p["_attributes"]["runner_type"] for p in pages] == ["linux.2xlarge", "rocm.gpu"]


def test_group_by_team_routes_each_team_its_own_page(aws: None) -> None:
    world = World(CONFIG.replace("priority: P2", "priority: P2\n    group_by: team"))
    world.tick(
        snapshot(minutes(0), runner_type("linux.2xlarge", 14, 6840), runner_type("rocm.gpu", 2, 300, team="rocm"))
    )
    teams = sorted(p["_attributes"]["team"] for p in world.pages())
    assert teams == ["ci-infra", "rocm"]


def test_a_page_lists_at_most_fifty_runner_types_but_counts_all(aws: None) -> None:
    names = [f"linux.type{i:03d}" for i in range(120)]
    world = World(
        CONFIG.replace("runner_types:", "discovery:\n  - {queue_name_pattern: 'x-{runner_type}-q'}\nrunner_types:")
    )
    world.tick(snapshot(minutes(0), *[runner_type(n, i + 1, 120 + i) for i, n in enumerate(names)]))
    [page] = world.pages()
    assert page["runner_types_affected"] == 120 and len(page["runner_types"]) == 50
    assert page["runner_types"][0]["runner_type"] == "linux.type119"  # the worst first
    assert page["max_queue_time_runner_type"] == "linux.type119"


def test_time_comes_from_the_snapshot(world: World) -> None:
    late = queueing(0).model_copy(update={"collected_at": T0 + timedelta(days=365)})
    world.tick(late)
    [page] = world.pages()
    assert page["started_at"] == "2027-11-21T18:00:00Z"


def test_an_alert_whose_rule_leaves_the_config_resolves(world: World) -> None:
    world.tick(queueing(0))
    world.config = parse_config(CONFIG.replace("name: jobs-queueing", "name: queue-time-only"), source="test.yaml")
    world.tick(quiet(1))
    pages = world.pages()
    assert [(p["rule"], p["status"]) for p in pages] == [("jobs-queueing", "firing"), ("jobs-queueing", "resolved")]
    assert load_state(world.dynamodb, "state").instances == {}
