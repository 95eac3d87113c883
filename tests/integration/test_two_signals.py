"""Both signals, every tick, where jobs are tracked: the autoscaler's queue is read beside the jobs on every
tick, a rule pages on the worse of the two and the page says which showed it, and a blind signal is a finding,
never an all-clear. Collect -> evaluate -> SNS in moto; the AWS/SQS age moto does not make is put per tick."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
from support import T0, StackInMoto

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.model.rules import HEALTH_RULE, UNTRACKED_JOBS
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import put_queue_ages, put_queued_jobs

JOBS = "jobs"
QUEUE = "gh-ci-linux-x64-queued-builds"
CONFIG = """
version: 1
defaults: {region: us-east-1, queue_source: jobs, rule: {team: ci-infra, keep_firing_for: 2m}}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", region: us-east-1}
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", region: us-west-2}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
monitor: {for: 5m}
"""


def at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


class Pipeline:
    """The collector with tracking on, the evaluator and an inbox on the alert topic, one tick at a time."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.clients = AwsClients()
        self.stack = StackInMoto.create()
        self.inbox = self.stack.subscribe_queue("inbox")
        self.snapshots: list[Snapshot] = []

    def tick(self, minute: int) -> tuple[list[str], list[dict[str, Any]]]:
        """The instances firing after the tick, and the pages it sent."""
        snap = collect(self.config, self.clients, now=at(minute), account_id="123456789012",
                       snapshot_id=f"s{minute}", jobs_table=JOBS)  # fmt: skip
        self.snapshots.append(snap)
        result = self.stack.evaluate(snap, self.config)
        sqs = boto3.client("sqs", region_name="us-east-1")
        pages = []
        while messages := sqs.receive_message(QueueUrl=self.inbox, MaxNumberOfMessages=10).get("Messages", []):
            for message in messages:  # the test's own inbox, never a watched queue
                envelope = json.loads(message["Body"])
                pages.append(json.loads(envelope["Message"]) | {"subject": envelope["Subject"]})
                sqs.delete_message(QueueUrl=self.inbox, ReceiptHandle=message["ReceiptHandle"])
        return [f"{i.rule}#{i.runner_type}" for i in result.firing], pages


@pytest.fixture
def east(aws: None) -> str:
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS)
    return boto3.client("sqs", region_name="us-east-1").create_queue(QueueName=QUEUE)["QueueUrl"]


def request(url: str, region: str, count: int = 3) -> None:
    """What the autoscaler's webhook does for each queued job: one scale-up request on the build queue."""
    sqs = boto3.client("sqs", region_name=region)
    for n in range(count):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": n, "eventType": "workflow_job"}))


def test_tracking_blind_pages_on_the_queue_within_a_tick_and_the_monitor_names_the_blindness(east: str) -> None:
    """Tracking on, no job event arrives (a webhook at the form content type, say): three requests age in the
    queue. The rule pages on the first tick the requests are past its thresholds, saying the queue showed it,
    and the monitor's jobs:untracked names the runner type, the likely causes and their fixes."""
    request(east, "us-east-1")
    pipeline = Pipeline(parse_config(CONFIG, source="t.yaml"))
    rule_pages: dict[int, dict[str, Any]] = {}
    monitor_pages: dict[int, dict[str, Any]] = {}
    for minute in range(12):
        put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {QUEUE: 60.0 * minute}, at(minute))
        _, pages = pipeline.tick(minute)
        for page in pages:
            (monitor_pages if page["rule"] == HEALTH_RULE else rule_pages)[minute] = page
    visible_past_threshold = 2  # the oldest request is 2m old: over queue time 1m (and 3 over queue size 0)
    assert min(rule_pages) <= visible_past_threshold
    page = rule_pages[min(rule_pages)]
    [row] = page["runner_types"]
    assert row["runner_type"] == "linux-x64"
    assert row["shown_by"] == {"queue_size": "queue", "queue_time": "queue"}
    assert "(shown by the queue); 3 scale-up requests; 0 jobs tracked" in page["summary"]
    assert row["triage"]["findings"][0]["cause"] == "jobs_untracked"
    assert "application/json" in row["triage"]["findings"][0]["next_step"]
    # the monitor's own page: pending from the first breach, firing once its 5m `for` has passed
    assert min(monitor_pages) == min(rule_pages) + 5
    monitor = monitor_pages[min(monitor_pages)]
    [blind] = monitor["runner_types"]
    assert (blind["runner_type"], blind["breached"]) == (UNTRACKED_JOBS, ["untracked_jobs"])
    text = blind["missing"]["jobs"]
    assert text.startswith("linux-x64: 3 scale-up requests, the oldest ")
    for fix in ("application/json", "WebhookSecretArn", "not covered by the hook", "TrackFunction is throttled"):
        assert fix in text
    assert monitor["subject"].startswith("ALARM: P3 tracking blind: scale-up requests with no tracked job")
    text = show_status(boto3.client("dynamodb", region_name="us-east-1"), "state", at(12), as_json=False)
    assert "scale-up requests with no tracked job: tracking blind: firing since" in text
    assert "jobs: linux-x64: 3 scale-up requests" in text


def test_tracked_jobs_and_their_requests_page_shown_by_both(east: str) -> None:
    request(east, "us-east-1")
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {QUEUE: 600.0}, at(0))
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_queued_jobs(dynamodb, JOBS, "linux-x64", [T0 - timedelta(minutes=10)] * 3, now=T0)
    pipeline = Pipeline(parse_config(CONFIG, source="t.yaml"))
    firing, pages = pipeline.tick(0)
    assert firing == ["jobs-queueing#linux-x64"]
    [page] = pages
    assert page["runner_types"][0]["shown_by"] == {"queue_size": "both", "queue_time": "both"}
    assert "(shown by both); 3 scale-up requests; 3 jobs tracked" in page["summary"]
    assert not [p for p in pages if p["rule"] == HEALTH_RULE]


def test_an_unreadable_queue_beside_waiting_jobs_pages_on_the_jobs_and_the_monitor_names_the_unread_queue(
    east: str,
) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_queued_jobs(dynamodb, JOBS, "linux-x64", [T0 - timedelta(minutes=10)] * 2, now=T0)
    pipeline = Pipeline(parse_config(CONFIG, source="t.yaml"))
    pipeline.tick(0)
    boto3.client("sqs", region_name="us-east-1").delete_queue(QueueUrl=east)
    pipeline.config = parse_config(CONFIG.replace("discovery:", "runner_types:\n  - {name: linux-x64, queue: "
                                                  f"{{name: {QUEUE}}}}}\ndiscovery:"), source="t.yaml")  # fmt: skip
    firing: list[str] = []
    monitor: list[dict[str, Any]] = []
    for minute in range(1, 8):
        firing, pages = pipeline.tick(minute)
        monitor += [p for p in pages if p["rule"] == HEALTH_RULE]
    assert "jobs-queueing#linux-x64" in firing  # the jobs alone still page
    snap = pipeline.snapshots[-1]
    found = {rt.name: rt for rt in snap.runner_types}["linux-x64"]
    assert found.value(SignalName.QUEUE_SIZE) == 2 and found.signals[SignalName.SCALE_UP_REQUESTS].error
    [page] = monitor
    [row] = page["runner_types"]
    assert row["runner_type"] == "linux-x64"
    assert row["missing"]["scale_up_requests"].startswith("queue blind: GetQueueAttributes failed")
    text = show_status(boto3.client("dynamodb", region_name="us-east-1"), "state", at(8), as_json=False)
    degraded = text.split("degraded signals (the queuewatch-health rule's instances): ")[1].splitlines()
    assert degraded[1].startswith("  linux-x64: firing since")
    assert "scale_up_requests: queue blind: GetQueueAttributes failed" in degraded[2]


def test_a_second_regions_copy_is_read_every_tick_fires_and_resolves_on_time_and_never_degrades_when_idle(
    east: str,
) -> None:
    """linux-x64@us-west-2, with tracking on: its own queue is its only signal (jobs go to the key's plain
    identity). Requests arrive at minute 5 and are taken at minute 20; 40 ticks, then 60 idle ones more."""
    west = boto3.client("sqs", region_name="us-west-2")
    url = west.create_queue(QueueName=QUEUE)["QueueUrl"]
    cloudwatch = boto3.client("cloudwatch", region_name="us-west-2")
    pipeline = Pipeline(parse_config(CONFIG, source="t.yaml"))
    copy = "linux-x64@us-west-2"
    fired_at = resolved_at = None
    for minute in range(100):
        if minute == 5:
            request(url, "us-west-2")
        if minute == 20:
            west.purge_queue(QueueUrl=url)  # the scale-up Lambda took every request
        waiting = 5 <= minute < 20
        put_queue_ages(cloudwatch, {QUEUE: 60.0 * (minute - 5) if waiting else 0.0}, at(minute))
        firing, pages = pipeline.tick(minute)
        snap = pipeline.snapshots[-1]
        judged = {rt.name: rt for rt in snap.runner_types}[copy]
        assert judged.value(SignalName.QUEUE_SIZE) == (3 if waiting else 0), minute  # never "not collected"
        assert not judged.degraded, minute
        assert not [p for p in pages if p["rule"] == HEALTH_RULE], minute  # the idle copy never pages the monitor
        for page in pages:
            if page["status"] == "firing" and fired_at is None:
                fired_at = minute
            if page["status"] == "resolved":
                resolved_at = minute
        assert not [f for f in firing if f.startswith(HEALTH_RULE)], minute
    assert fired_at == 7  # the oldest request is 2m old, over queue time 1m: the first tick that shows it
    assert resolved_at == 22  # taken at minute 20, then the rule's keep_firing_for of 2m


LANE = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra}}
runner_types:
  - {name: arc-lane, queue: none, labels: [arc-lane]}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
"""


def test_a_runner_type_with_no_queue_is_judged_on_its_jobs_alone(aws: None) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    put_queued_jobs(dynamodb, JOBS, "arc-lane", [T0 - timedelta(minutes=7)] * 2, now=T0)
    calls: list[str] = []
    session = boto3.Session()
    session.events.register("before-call.sqs", lambda event_name, **_: calls.append(event_name))
    config = parse_config(LANE, source="t.yaml")
    snap = collect(config, AwsClients(session), now=T0, account_id="123456789012", snapshot_id="s", jobs_table=JOBS)
    [lane] = snap.runner_types
    assert (lane.value(SignalName.QUEUE_SIZE), lane.value(SignalName.QUEUE_TIME)) == (2, 7 * 60)
    assert SignalName.SCALE_UP_REQUESTS not in lane.signals and not lane.degraded
    assert calls == []  # no queue to read
    result = StackInMoto.create().evaluate(snap, config)
    assert [i.runner_type for i in result.firing] == ["arc-lane"]
    # without job tracking nothing reads it, and it says so rather than reading as clear
    blind = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s2")
    assert "job tracking is off" in (blind.runner_types[0].degraded[SignalName.QUEUE_SIZE])
