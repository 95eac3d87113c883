"""Each fault in turn, on each AWS call, through the real stages: a correct page, a degraded report or a
retried page, never a lost or doubled one. Faults come from tests/faults.py, below botocore's retries.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from faults import FAULTS, REASON_WORDS, RETRIED_FAULTS, Fault, inject
from moto import mock_aws
from support import T0, Inbox, StackInMoto, arriving_now, minutes, race, runner_type, session, snapshot

from queuewatch.adapters.aws.clients import AwsClients, Deadline
from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.devkit.seed import put_queue_ages

ACCOUNT = "123456789012"
FLEET_CONFIG = """
version: 1
defaults:
  rule: {keep_firing_for: 1m, repeat_interval: 4h}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
  - {name: linux.arm64, queue: {name: gh-ci-linux-arm64-queued-builds, region: eu-west-1}}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", region: us-east-1}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}
monitor: {for: 2m}
"""
# (region, queue, queued jobs, age of the oldest in seconds)
QUEUES = [
    ("us-east-1", "gh-ci-linux-2xlarge-queued-builds", 14, 6840),
    ("us-east-1", "gh-ci-linux-4xlarge-queued-builds", 0, None),
    ("us-east-1", "gh-ci-windows-queued-builds", 2, 300),  # found by discovery
    ("eu-west-1", "gh-ci-linux-arm64-queued-builds", 1, 90),
]
QUEUEING = ["linux.2xlarge", "linux.arm64", "windows"]


class Evaluator:
    """EvaluateFunction as deployed: its clients, its process memory, Lambda's two retries of a failed run."""

    def __init__(self, config: Config, name: str) -> None:
        self.config = config
        self.clients = AwsClients(session())
        moto = StackInMoto.create(name, clients=self.clients)
        self.dynamodb, self.sns, self.stack = moto.dynamodb, moto.sns, moto.stack
        self.inbox = Inbox(self.sns)
        self.memory = EvaluatorMemory()
        self.failures: list[str] = []

    def tick(self, observation: Snapshot) -> EvaluationResult | None:
        for _ in range(3):  # the invocation, then Lambda's MaximumRetryAttempts: 2
            try:
                return evaluate(
                    observation,
                    self.config,
                    self.dynamodb,
                    self.sns,
                    self.stack,
                    memory=self.memory,
                    clock=arriving_now(observation),
                )
            except Exception as error:  # noqa: BLE001 - the invocation fails; Lambda retries it
                self.failures.append(f"{observation.snapshot_id}: {type(error).__name__}: {error}")
        return None


# --- the collector's calls ----------------------------------------------------------------


@pytest.fixture
def fleet(aws: None) -> dict[str, str]:
    urls = {}
    for region, name, jobs, age in QUEUES:
        sqs = session().client("sqs", region_name=region)
        urls[name] = sqs.create_queue(QueueName=name)["QueueUrl"]
        queue_jobs(sqs, urls[name], jobs)
        if age is not None:
            put_queue_ages(session().client("cloudwatch", region_name=region), {name: age}, T0)
    return urls


def queue_jobs(sqs: Any, url: str, jobs: int) -> None:
    for start in range(0, jobs, 10):
        entries = [{"Id": str(i), "MessageBody": json.dumps({"job": i})} for i in range(start, min(jobs, start + 10))]
        sqs.send_message_batch(QueueUrl=url, Entries=entries)


def collector_fault(clients: AwsClients, operation: str, kind: str) -> tuple[Fault, str]:
    """The fault and the name it must degrade: one queue, one region's listing, one region's metrics."""
    if operation == "GetQueueAttributes":
        fault = inject(
            clients.sqs("us-east-1"),
            operation,
            kind,
            when=lambda params: params["QueueUrl"].endswith("/gh-ci-linux-2xlarge-queued-builds"),
        )
        return fault, "linux.2xlarge"
    if operation == "ListQueues":
        return inject(clients.sqs("us-east-1"), operation, kind), "discovery:us-east-1"
    return inject(clients.cloudwatch("eu-west-1"), operation, kind), "linux.arm64"


def assert_autoscaler_queues_untouched(urls: dict[str, str]) -> None:
    for region, name, jobs, _ in QUEUES:
        sqs = boto3.client("sqs", region_name=region)
        attributes = sqs.get_queue_attributes(QueueUrl=urls[name], AttributeNames=["All"])["Attributes"]
        assert (attributes["ApproximateNumberOfMessages"], attributes["ApproximateNumberOfMessagesNotVisible"]) == (
            str(jobs),
            "0",
        ), name
        if jobs:  # the first receive anyone makes is the test's: nobody received or hid a message before
            [message] = sqs.receive_message(QueueUrl=urls[name], AttributeNames=["All"])["Messages"]
            assert message["Attributes"]["ApproximateReceiveCount"] == "1", name


COLLECTOR_CASES = [
    *[("GetQueueAttributes", kind) for kind in (*FAULTS, "queue-deleted")],
    *[("ListQueues", kind) for kind in FAULTS],
    *[("GetMetricData", kind) for kind in FAULTS],
]


@pytest.mark.parametrize(("operation", "kind"), COLLECTOR_CASES)
def test_a_collector_fault_degrades_only_what_depends_on_the_call_and_never_reports_it_healthy(
    fleet: dict[str, str], operation: str, kind: str
) -> None:
    config = parse_config(FLEET_CONFIG)
    clients = AwsClients(session())
    evaluator = Evaluator(config, "state")

    def tick(minute: int) -> EvaluationResult:
        snap = collect(
            config,
            clients,
            now=minutes(minute),
            account_id=ACCOUNT,
            snapshot_id=f"s{minute}",
        )
        result = evaluator.tick(snap)
        assert result is not None, evaluator.failures
        return result

    assert tick(0).degraded == []
    [first] = evaluator.inbox.drain()
    assert [r["runner_type"] for r in first["runner_types"]] == ["linux.2xlarge", "windows", "linux.arm64"]

    if kind == "queue-deleted":  # for real: SQS answers QueueDoesNotExist
        boto3.client("sqs", region_name="us-east-1").delete_queue(QueueUrl=fleet["gh-ci-linux-2xlarge-queued-builds"])
        fault, degraded, reason = None, "linux.2xlarge", "NonExistentQueue"
    else:
        fault, degraded = collector_fault(clients, operation, kind)
        reason = REASON_WORDS[kind]
    for minute in (1, 2):
        result = tick(minute)
        assert result.degraded == [degraded]  # that one, and only that one
        assert result.firing == [InstanceKey("jobs-queueing", name) for name in sorted(QUEUEING)]  # held, not resolved
        assert evaluator.inbox.drain() == []  # past keep_firing_for (1m), yet no resolve: unknown is not clear
    tick(3)  # degraded for monitor.for (2m): the health page
    [health] = evaluator.inbox.drain()
    assert (health["rule"], health["status"], health["title"]) == (
        "queuewatch-health",
        "firing",
        "queuewatch monitor degraded",
    )
    [figures] = health["runner_types"]
    assert figures["runner_type"] == degraded and reason in json.dumps(figures["missing"])

    if fault is not None:
        per_call = 4 if kind in RETRIED_FAULTS else 1
        assert fault.calls == 3 and fault.attempts == 3 * per_call  # bounded retries on every faulted call
        fault.enabled = False
    else:
        sqs = session().client("sqs", region_name="us-east-1")
        url = sqs.create_queue(QueueName="gh-ci-linux-2xlarge-queued-builds")["QueueUrl"]
        fleet["gh-ci-linux-2xlarge-queued-builds"] = url
        queue_jobs(sqs, url, 14)
    assert tick(4).degraded == []
    [recovered] = evaluator.inbox.drain()
    assert (recovered["rule"], recovered["status"], recovered["dedup_key"]) == (
        "queuewatch-health",
        "resolved",
        health["dedup_key"],
    )
    assert_autoscaler_queues_untouched(fleet)


def test_partial_metric_data_over_pages_reaches_the_snapshot(fleet: dict[str, str]) -> None:
    named_only = FLEET_CONFIG.split("discovery:", maxsplit=1)[0]
    config = parse_config(named_only + "rules:\n  - {name: r, team: ci-infra, thresholds: {queue_time: 1m}}\n")
    clients = AwsClients(session())
    east = clients.cloudwatch("us-east-1")
    with Stubber(east) as stubber:
        pages = [
            # The first round, over two pages: q1 is 2xlarge's age (4xlarge's queue is empty: no age asked).
            ({"q1": (1, 6900.0)}, "PartialData", "next"),
            ({"q1": (4, 6720.0)}, "Complete", None),
            # 2xlarge breaches, so a second round asks its evidence: q1 is its queue-depth history.
            ({"q1": (1, 14.0)}, "Complete", None),
        ]
        for points, status, token in pages:
            results = [
                {"Id": q, "Timestamps": [T0 - timedelta(minutes=m)], "Values": [v], "StatusCode": status}
                for q, (m, v) in points.items()
            ]
            stubber.add_response(
                "get_metric_data", {"MetricDataResults": results, **({"NextToken": token} if token else {})}
            )
        snap = collect(config, clients, now=T0, account_id=ACCOUNT, snapshot_id="s")
        stubber.assert_no_pending_responses()
    by_name = {rt.name: rt for rt in snap.runner_types}
    age = by_name["linux.2xlarge"].signals[SignalName.QUEUE_TIME]
    assert (age.value, age.age_seconds) == (6900.0, 60.0)  # the newest point, from the first page
    assert by_name["linux.2xlarge"].value(SignalName.QUEUE_SIZE) == 14
    assert by_name["linux.2xlarge"].signals[SignalName.QUEUE_SIZE].window_last == 14  # the history arrived


def test_the_tick_deadline_degrades_what_it_did_not_read_and_sends_nothing_after_it(fleet: dict[str, str]) -> None:
    config = parse_config(FLEET_CONFIG)
    clients = AwsClients(session())
    sent = [inject(clients.sqs(r), "GetQueueAttributes", "5xx", failing_attempts=0) for r in ("us-east-1", "eu-west-1")]
    clients.start_tick(Deadline(at=0.0, clock=lambda: 1.0))  # spent before the tick began
    snap = collect(config, clients, now=T0, account_id=ACCOUNT, snapshot_id="late")
    assert sum(fault.attempts for fault in sent) == 0
    assert {rt.name for rt in snap.runner_types} == {"linux.2xlarge", "linux.4xlarge", "linux.arm64"}
    for rt in snap.runner_types:  # nothing read, so nothing may look healthy
        assert all(r.value is None for r in rt.signals.values()), rt.name
        assert any("the tick's time budget ran out" in (r.error or "") for r in rt.signals.values()), rt.name
    assert "ListQueues not sent" in (snap.discovery[0].error or "")
    result = Evaluator(config, "state").tick(snap)
    assert result is not None
    assert result.degraded == ["discovery:us-east-1", "linux.2xlarge", "linux.4xlarge", "linux.arm64"]
    assert result.firing == []


# --- the evaluator's calls -----------------------------------------------------------------

SWEEP_CONFIG = """
version: 1
defaults:
  rule: {keep_firing_for: 2m, repeat_interval: 1h}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}
"""


def observations() -> list[Snapshot]:
    """Page [A], update [A, B], resolve (clear for keep_firing_for, 2m); page [A] again, resolve; then a quiet tick
    in which what a fault delayed goes out (a page two ticks late would go out after it, and be missed as lost)."""
    a, b = "linux.2xlarge", "linux.4xlarge"

    def at(minute: int, *queueing: str) -> Snapshot:
        return snapshot(minutes(minute), *[runner_type(n, 3, 600) if n in queueing else runner_type(n) for n in (a, b)])

    return [at(0, a), at(1, a, b), at(2), at(4), at(5, a), at(6), at(8), at(9)]


@dataclass
class Run:
    """What one pass over the observations delivered, tick by tick."""

    received: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    leftover: tuple[int, int] = (0, 0)

    def episodes(self) -> list[tuple[str, int, frozenset[str]]]:
        """(status, tick of its first page, runner types) per firing episode and per resolve."""
        out: list[tuple[str, int, frozenset[str]]] = []
        for tick, page in self.received:
            names = frozenset(r["runner_type"] for r in page["runner_types"])
            if page["status"] == "firing" and out and out[-1][0] == "firing":
                out[-1] = ("firing", out[-1][1], out[-1][2] | names)  # an update joins its episode
            else:
                out.append((page["status"], tick, names))
        return out


_names = count()


def run_observations(operation: str | None = None, kind: str = "5xx", call: int = 0, applied: bool = False) -> Run:
    evaluator = Evaluator(parse_config(SWEEP_CONFIG), f"sweep-{next(_names)}")
    run = Run()
    client = evaluator.sns if operation == "Publish" else evaluator.dynamodb
    counters = {
        name: inject(evaluator.dynamodb if name != "Publish" else evaluator.sns, name, kind, failing_attempts=0)
        for name in ("Query", "PutItem", "DeleteItem", "Publish")
    }
    if operation is not None:
        inject(client, operation, kind, only_call=call, applied=applied, failing_attempts=1 if applied else None)
    for tick, observation in enumerate(observations()):
        evaluator.tick(observation)
        run.received += [(tick, page) for page in evaluator.inbox.drain()]
    run.calls = Counter({name: fault.calls for name, fault in counters.items()})
    run.failures = evaluator.failures
    state = load_state(evaluator.dynamodb, evaluator.stack.table)
    run.leftover = (len(state.instances), len(state.groups))
    return run


@pytest.fixture(scope="module")
def reference() -> Run:
    """The same observations without a fault, in a moto of its own."""
    with pytest.MonkeyPatch.context() as env, mock_aws():
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            env.setenv(key, "testing")
        return run_observations()


def sweep_cases() -> Iterator[tuple[str, str, bool]]:
    for operation in ("Query", "PutItem", "DeleteItem", "Publish"):
        yield operation, "5xx", False
        if operation in ("PutItem", "DeleteItem"):
            yield operation, "read-timeout", True  # applied, response lost: the retry meets its own write


# Query runs once at the start of every tick: fault it on the ticks where something changes.
QUERY_CALLS = (0, 1, 3, 4, 6)


@pytest.mark.parametrize(("operation", "kind", "applied"), list(sweep_cases()))
def test_an_evaluator_fault_at_any_call_never_loses_or_doubles_a_page(
    reference: Run, operation: str, kind: str, applied: bool, aws: None
) -> None:
    assert [(s, sorted(n)) for s, _, n in reference.episodes()] == [
        ("firing", ["linux.2xlarge", "linux.4xlarge"]),
        ("resolved", ["linux.2xlarge", "linux.4xlarge"]),
        ("firing", ["linux.2xlarge"]),
        ("resolved", ["linux.2xlarge"]),
    ]
    assert reference.failures == [] and reference.leftover == (0, 0)
    for call in QUERY_CALLS if operation == "Query" else range(reference.calls[operation]):
        run = run_observations(operation, kind, call, applied)
        where = f"{operation} call {call}"
        ids = [page["notification_id"] for _, page in run.received]  # unique per message, across episodes
        assert len(ids) == len(set(ids)), f"{where}: a page was sent twice"
        assert [(s, n) for s, _, n in run.episodes()] == [(s, n) for s, _, n in reference.episodes()], where
        # A write that took effect and lost its answer is recognised by the evaluator's writer token as its own,
        # not taken for a conflict: that tick goes on and pages on time. Only a call that failed outright (every
        # attempt) costs its tick, and the next tick pages.
        late = 0 if applied else 1
        for (_, tick, _), (_, ref_tick, _) in zip(run.episodes(), reference.episodes(), strict=True):
            assert ref_tick <= tick <= ref_tick + late, f"{where}: a page came {tick - ref_tick} tick(s) late"
        if applied:
            assert run.failures == [], f"{where}: its own retried write was taken for a conflict: {run.failures}"
        assert run.leftover == (0, 0), f"{where}: state left behind"


def test_each_message_has_its_own_notification_id_though_each_episode_counts_from_one(reference: Run) -> None:
    pages = [page for _, page in reference.received]
    firsts = [page for page in pages if page["page"] == "new"]
    assert len(firsts) == 2 and all(page["sequence"] == 1 for page in firsts)  # two outages, each its page 1
    assert firsts[0]["dedup_key"] == firsts[1]["dedup_key"]
    ids = [page["notification_id"] for page in pages]
    assert len(ids) == len(set(ids)), ids  # a consumer deduplicating on it keeps the second outage


@pytest.mark.parametrize("kind", FAULTS)
def test_a_failed_publish_pages_on_the_next_tick_whatever_the_fault(aws: None, kind: str) -> None:
    evaluator = Evaluator(parse_config(SWEEP_CONFIG), "state")
    publish = inject(evaluator.sns, "Publish", kind, only_call=0)
    first = evaluator.tick(observations()[0])
    assert first is not None and first.pages_sent == [] and len(first.pages_failed) == 1
    assert evaluator.inbox.drain() == []
    [group] = load_state(evaluator.dynamodb, "state").groups.values()
    assert group.outbox is not None  # kept, not recorded as sent
    second = evaluator.tick(observations()[1])
    assert second is not None and second.pages_retried == [group.outbox.notification_id]
    pages = evaluator.inbox.drain()
    assert [p["page"] for p in pages] == ["new", "update"] and pages[0]["notification_id"].endswith("#1")
    assert publish.attempts == (4 if kind in RETRIED_FAULTS else 1)  # the faulted call, bounded
    assert publish.calls == 3  # then the retried page and the update, once each


def clears_an_outbox(params: Mapping[str, Any]) -> bool:
    """The write after SNS accepted a page: the group item again, its outbox gone."""
    return params["Item"]["sk"]["S"].startswith("group#") and "outbox" not in params["Item"]


def test_a_lost_clearing_write_after_publishing_is_not_sent_again_by_a_warm_container(aws: None) -> None:
    evaluator = Evaluator(parse_config(SWEEP_CONFIG), "state")
    clear = inject(evaluator.dynamodb, "PutItem", "5xx", when=clears_an_outbox, only_call=0)
    evaluator.tick(observations()[0])
    assert clear.faulted == 4 and evaluator.failures  # the invocation failed after SNS accepted the page
    evaluator.tick(observations()[1])
    pages = evaluator.inbox.drain()
    assert [(p["page"], p["sequence"]) for p in pages] == [("new", 1), ("update", 2)]


def test_after_a_cold_start_the_unconfirmed_page_is_resent_with_the_same_notification_id(aws: None) -> None:
    evaluator = Evaluator(parse_config(SWEEP_CONFIG), "state")
    inject(evaluator.dynamodb, "PutItem", "5xx", when=clears_an_outbox, only_call=0)
    evaluator.tick(observations()[0])
    evaluator.memory = EvaluatorMemory()  # a new container remembers nothing
    evaluator.tick(observations()[1])
    pages = evaluator.inbox.drain()
    # At least once: the repeat is identical, so a pager deduplicating on notification_id pages once.
    key = pages[0]["dedup_key"]
    episode = f"{key}@{datetime.fromisoformat(pages[0]['started_at']).astimezone(UTC):%Y%m%dT%H%M%SZ}"
    assert [p["notification_id"] for p in pages] == [f"{episode}#1", f"{episode}#1", f"{episode}#2"]
    assert pages[0] == pages[1]


def test_the_deadline_mid_tick_finishes_the_page_in_flight_and_leaves_the_rest_for_the_next_tick(aws: None) -> None:
    text = SWEEP_CONFIG.replace("keep_firing_for: 2m", "keep_firing_for: 2m, group_by: runner_type")
    evaluator = Evaluator(parse_config(text), "state")
    clock = [0.0]
    evaluator.clients.start_tick(Deadline(at=10.0, clock=lambda: clock[0]))

    def time_runs_out() -> None:
        clock[0] = 11.0  # the first page's publish is the last request the tick may send

    inject(evaluator.sns, "Publish", "5xx", failing_attempts=0, on_attempt=time_runs_out)
    both = snapshot(minutes(0), runner_type("linux.2xlarge", 3, 600), runner_type("linux.4xlarge", 2, 300))
    spent = evaluator.tick(both)  # out of time after the first publish: what is left waits for the next tick
    assert spent is not None and spent.outcome == "applied" and len(spent.pages_sent) == 1
    [first] = evaluator.inbox.drain()
    evaluator.clients.start_tick(None)  # the next tick has its own budget
    later = snapshot(minutes(1), runner_type("linux.2xlarge", 3, 600), runner_type("linux.4xlarge", 2, 300))
    evaluator.tick(later)
    [second] = evaluator.inbox.drain()
    assert {first["group"], second["group"]} == {"linux.2xlarge", "linux.4xlarge"}
    assert (first["page"], second["page"]) == ("new", "new")


def test_concurrent_evaluations_under_throttling_page_exactly_once(aws: None) -> None:
    config = parse_config(SWEEP_CONFIG)
    primary = Evaluator(config, "state")
    for observation in observations():

        def prepare(observation: Snapshot = observation) -> Callable[[], EvaluationResult]:
            clients = AwsClients(session())
            dynamodb, sns = clients.dynamodb("us-east-1"), clients.sns("us-east-1")
            primary.inbox.attach(sns)
            inject(dynamodb, "PutItem", "throttling", failing_attempts=1)  # every write is throttled once
            return lambda: evaluate(observation, config, dynamodb, sns, primary.stack, clock=arriving_now(observation))

        results = race(3, prepare)
        assert len(results) == 3
        sent = [n for r in results for n in r.pages_sent]
        assert len(sent) == len(set(sent))
    pages = primary.inbox.drain()
    assert [p["page"] for p in pages] == ["new", "update", "resolved", "new", "resolved"]
