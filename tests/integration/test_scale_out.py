"""A fleet split across stacks: per region, or by runner-type pattern, all publishing into one topic.

Each shard has its own config and state table. Together they must page every queueing
runner type exactly once, keep their dedup keys apart (even with the same stack name),
and resolve only what they paged. A fleet too big for one collector's payload fails
loudly instead of going unwatched.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from support import T0, arriving_now, minutes

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult, Stack
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.snapshot import Snapshot
from queuewatch.runtime import wire as wire_module
from queuewatch.runtime.wire import SnapshotTooLarge
from queuewatch_cli.devkit.handlers import (
    ACCOUNT_ID,
    FakeContext,
    arrives_when_made,
    destination_record,
    load_handler_module,
    scheduled_event,
)
from queuewatch_cli.devkit.moto_tables import create_state_table
from queuewatch_cli.devkit.seed import put_queue_ages

RULES = """
defaults:
  rule: {keep_firing_for: 5m, repeat_interval: 4h}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}
monitor: {for: 2m}
"""


def shard_config(*discovery: str) -> Config:
    entries = "".join(f"  - {entry}\n" for entry in discovery)
    return parse_config(f"version: 1\ndiscovery:\n{entries}{RULES}", source="shard.yaml")


@dataclass
class Shard:
    """One stack: its config, its own state table, and the topic every shard shares."""

    config: Config
    stack: Stack

    def tick(self, at_minute: float) -> tuple[Snapshot, EvaluationResult]:
        aws = AwsClients()
        now = minutes(at_minute)
        snap = collect(self.config, aws, now=now, account_id=ACCOUNT_ID, snapshot_id=f"s{at_minute}")
        dynamodb = boto3.client("dynamodb", region_name=self.stack.region)
        sns = boto3.client("sns", region_name=self.stack.topic_arn.split(":")[3])
        return snap, evaluate(snap, self.config, dynamodb, sns, self.stack, clock=arriving_now(snap))


class Topic:
    """The one topic all shards publish into, with an SQS subscriber that reads every page."""

    def __init__(self, region: str = "us-east-1") -> None:
        self.arn = boto3.client("sns", region_name=region).create_topic(Name="alerts")["TopicArn"]
        self.sqs = boto3.client("sqs", region_name=region)
        self.inbox = self.sqs.create_queue(QueueName="pager-inbox")["QueueUrl"]
        inbox_arn = self.sqs.get_queue_attributes(QueueUrl=self.inbox, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        boto3.client("sns", region_name=region).subscribe(TopicArn=self.arn, Protocol="sqs", Endpoint=inbox_arn)

    def pages(self) -> list[dict[str, Any]]:
        out = []
        while batch := self.sqs.receive_message(QueueUrl=self.inbox, MaxNumberOfMessages=10).get("Messages", []):
            for message in batch:
                self.sqs.delete_message(QueueUrl=self.inbox, ReceiptHandle=message["ReceiptHandle"])
                out.append(json.loads(json.loads(message["Body"])["Message"]))
        return out


def queue(region: str, name: str, jobs: int = 0, age_seconds: float = 0) -> str:
    sqs = boto3.client("sqs", region_name=region)
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    for n in range(jobs):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": n}))
    if jobs:
        put_queue_ages(boto3.client("cloudwatch", region_name=region), {name: age_seconds}, T0)
    return url


def paged_runner_types(pages: list[dict[str, Any]]) -> Counter[str]:
    return Counter(rt["runner_type"] for page in pages if page["status"] == "firing" for rt in page["runner_types"])


@pytest.fixture
def per_region(aws: None) -> tuple[Topic, dict[str, Shard], dict[str, str]]:
    """One stack per region, both named `queuewatch` (as `sam deploy --region` makes them), one topic."""
    topic = Topic("us-east-1")
    urls = {
        "east-busy": queue("us-east-1", "gh-ci-linux-2xlarge-queued-builds", jobs=4, age_seconds=600),
        "east-idle": queue("us-east-1", "gh-ci-linux-4xlarge-queued-builds"),
        "west-busy": queue("us-west-2", "gh-ci-linux-arm64-queued-builds", jobs=2, age_seconds=300),
        "west-idle": queue("us-west-2", "gh-ci-windows-queued-builds"),
    }
    shards = {}
    for region in ("us-east-1", "us-west-2"):
        table = f"queuewatch-state-{region}"
        create_state_table(boto3.client("dynamodb", region_name=region), table)
        shards[region] = Shard(
            shard_config(f"{{queue_name_pattern: 'gh-ci-{{runner_type}}-queued-builds', region: {region}}}"),
            Stack(table=table, topic_arn=topic.arn, name="queuewatch", region=region, account_id=ACCOUNT_ID),
        )
    return topic, shards, urls


def test_stacks_per_region_page_each_runner_type_once_with_distinct_dedup_keys(
    per_region: tuple[Topic, dict[str, Shard], dict[str, str]],
) -> None:
    topic, shards, _ = per_region
    snapshots = {region: shard.tick(0)[0] for region, shard in shards.items()}
    assert {rt.name for rt in snapshots["us-east-1"].runner_types} == {"linux-2xlarge", "linux-4xlarge"}
    assert {rt.name for rt in snapshots["us-west-2"].runner_types} == {"linux-arm64", "windows"}
    pages = topic.pages()
    assert paged_runner_types(pages) == {"linux-2xlarge": 1, "linux-arm64": 1}
    # Same stack name, same rule, same group: the stacks' region keeps their keys apart.
    keys = {page["source"]["region"]: page["dedup_key"] for page in pages}
    assert len(keys) == 2 and keys["us-east-1"] != keys["us-west-2"]
    assert len({page["notification_id"] for page in pages}) == 2
    # Steady: nothing more, from either stack, even evaluated twice.
    for shard in shards.values():
        shard.tick(1)
        shard.tick(1)
    assert topic.pages() == []


def test_a_stack_resolves_only_what_it_paged(per_region: tuple[Topic, dict[str, Shard], dict[str, str]]) -> None:
    topic, shards, urls = per_region
    for shard in shards.values():
        shard.tick(0)
    first = {page["source"]["region"]: page["dedup_key"] for page in topic.pages()}
    boto3.client("sqs", region_name="us-east-1").purge_queue(QueueUrl=urls["east-busy"])
    for minute in (1, 7):
        for shard in shards.values():
            shard.tick(minute)
    [resolve] = topic.pages()
    assert resolve["status"] == "resolved" and resolve["dedup_key"] == first["us-east-1"]
    assert [rt["runner_type"] for rt in resolve["runner_types"]] == ["linux-2xlarge"]


def test_shards_by_runner_type_pattern_split_one_region_without_overlap(aws: None) -> None:
    topic = Topic("us-east-1")
    for name, jobs in {"linux-2xlarge": 3, "linux-4xlarge": 0, "windows-2022": 5, "macos-m1": 1}.items():
        queue("us-east-1", f"gh-ci-{name}-queued-builds", jobs=jobs, age_seconds=240)
    pattern = "queue_name_pattern: 'gh-ci-{runner_type}-queued-builds', region: us-east-1"
    shards = []
    for stack, selection in (("queuewatch-linux", "match: ['linux-*']"), ("queuewatch-rest", "exclude: ['linux-*']")):
        create_state_table(boto3.client("dynamodb", region_name="us-east-1"), f"{stack}-state")
        shards.append(
            Shard(
                shard_config(f"{{{pattern}, {selection}}}"),
                Stack(table=f"{stack}-state", topic_arn=topic.arn, name=stack, region="us-east-1"),
            )
        )
    watched = [{rt.name for rt in shard.tick(0)[0].runner_types} for shard in shards]
    assert watched == [{"linux-2xlarge", "linux-4xlarge"}, {"windows-2022", "macos-m1"}]
    pages = topic.pages()
    assert paged_runner_types(pages) == {"linux-2xlarge": 1, "windows-2022": 1, "macos-m1": 1}
    assert len({page["dedup_key"] for page in pages}) == len(pages) == 2


def test_a_stack_publishes_into_a_topic_in_another_region(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The evaluator's SNS client follows the topic's region, not the function's."""
    topic = Topic("eu-west-1")
    queue("us-east-1", "gh-ci-linux-2xlarge-queued-builds", jobs=2, age_seconds=600)
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    config = Path(__file__).resolve().parents[2] / "config" / "queuewatch.yaml"
    for key, value in {
        "QUEUEWATCH_CONFIG": str(config),
        "STATE_TABLE": "state",
        "ALERT_TOPIC_ARN": topic.arn,
        "STACK_NAME": "queuewatch",
    }.items():
        monkeypatch.setenv(key, value)
    event = scheduled_event(T0)
    snap = load_handler_module("collect").lambda_handler(event, FakeContext("collect"))
    record = destination_record(event, snap, at=T0 + timedelta(seconds=3))
    evaluator = load_handler_module("evaluate")
    arrives_when_made(evaluator, record)
    result = evaluator.lambda_handler(record, FakeContext("evaluate"))
    assert result["pages_sent"] and paged_runner_types(topic.pages()) == {"linux.2xlarge": 1}


def test_a_large_fleet_travels_compressed_through_the_real_handlers(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_module, "COMPRESS_ABOVE_BYTES", 4096)  # the real threshold: tests/unit
    for i in range(60):
        queue("us-east-1", f"gh-ci-linux-c5-large-v{i:04d}-queued-builds", jobs=int(i == 7), age_seconds=600)
    topic = Topic("us-east-1")
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    config = Path(__file__).resolve().parents[2] / "config" / "queuewatch.yaml"
    for key, value in {"QUEUEWATCH_CONFIG": str(config), "STATE_TABLE": "state", "ALERT_TOPIC_ARN": topic.arn}.items():
        monkeypatch.setenv(key, value)
    event = scheduled_event(T0)
    payload = load_handler_module("collect").lambda_handler(event, FakeContext("collect"))
    assert payload["encoding"] == "gzip+base64" and payload["runner_type_count"] == 63  # 60 found, 3 named
    assert len(json.dumps(payload)) < 4096
    record = destination_record(event, payload, at=T0 + timedelta(seconds=3))
    evaluator = load_handler_module("evaluate")
    arrives_when_made(evaluator, record)
    result = evaluator.lambda_handler(record, FakeContext("evaluate"))
    # The named runner types' queues do not exist here: degraded, as in any fleet.
    assert result["degraded"] == ["linux.2xlarge", "linux.4xlarge", "linux.g5.4xlarge.nvidia.gpu"]
    assert result["firing"] == ["jobs-queueing#linux-c5-large-v0007"]
    assert paged_runner_types(topic.pages()) == {"linux-c5-large-v0007": 1}


def test_a_snapshot_too_large_to_deliver_fails_the_collection_and_pages_the_monitor(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    for i in range(40):
        sqs.create_queue(QueueName=f"gh-ci-linux-c5-large-v{i:04d}-queued-builds")
    topic = Topic("us-east-1")
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    config = Path(__file__).resolve().parents[2] / "config" / "queuewatch.yaml"
    for key, value in {"QUEUEWATCH_CONFIG": str(config), "STATE_TABLE": "state", "ALERT_TOPIC_ARN": topic.arn}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(wire_module, "COMPRESS_ABOVE_BYTES", 1_000)
    monkeypatch.setattr(wire_module, "MAX_PAYLOAD_BYTES", 500)
    collect_handler = load_handler_module("collect").lambda_handler
    evaluator = load_handler_module("evaluate")
    for minute in range(6):  # the shipped config's monitor.for is 5m
        event = scheduled_event(minutes(minute))
        with pytest.raises(SnapshotTooLarge) as raised:
            collect_handler(event, FakeContext("collect"))
        # Lambda hands the error to the failure destination: the evaluator pages once it lasts monitor.for.
        failure = {"errorMessage": str(raised.value), "errorType": "SnapshotTooLarge", "stackTrace": []}
        record = destination_record(event, failure, at=minutes(minute) + timedelta(seconds=2), succeeded=False)
        arrives_when_made(evaluator, record)
        evaluator.lambda_handler(record, FakeContext("evaluate"))
    [page] = topic.pages()
    assert page["title"] == "queuewatch monitor degraded"
    [collector] = page["runner_types"]
    assert "SnapshotTooLarge" in collector["missing"]["collection"]
    assert "split the fleet" in collector["missing"]["collection"]
