"""A fleet of runner types in moto, shaped like a busy CI fleet in a steady minute.

Runner types alternate between two regions. One in 10 has jobs waiting (young
ones, under the 10-minute threshold), one in 100 has been queueing for 15 minutes
and fires; both spread over the two regions. CloudWatch holds an AWS/SQS age
datapoint for each queue that holds jobs (moto makes none, so the fleet puts them
in); an idle queue has none, as in AWS. With tracking on, the jobs table holds the
same jobs as GitHub would list them queued, one per scale-up request.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config as BotoConfig

from bench.floor import TickShape
from queuewatch.collect.history import history_span
from queuewatch.config.schema import TriageSettings
from queuewatch.model.jobs import history_buckets
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_state_table
from queuewatch_cli.devkit.seed import put_queue_ages, put_queued_jobs

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

REGIONS = ("us-east-1", "us-west-2")
HOME_REGION = REGIONS[0]
PREFIX = "gh-ci"
FAMILIES = ("linux", "linux-arm64", "windows", "linux-g5-4xlarge-nvidia-gpu", "linux-rocm-gpu", "macos-m1")
SIZES = ("large", "2xlarge", "4xlarge", "12xlarge", "metal")
T0 = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
YOUNG_AGE_SECONDS = 20.0  # jobs that will be picked up soon: not breaching
QUEUE_TIME_THRESHOLD = "10m"  # a tracked job's age grows tick by tick: the young ones stay under it for the run
FIRING_AGE_SECONDS = 900.0
STATE_TABLE = "queuewatch-bench-state"
NAIVE_TABLE = "queuewatch-bench-naive"
JOBS_TABLE = "queuewatch-bench-jobs"
TOPIC = "queuewatch-bench-alerts"
INBOX = "queuewatch-bench-pager"
EVIDENCE_QUERIES = 1  # per breaching runner type: its queue-depth history
SEED_CLIENT = BotoConfig(max_pool_connections=16, retries={"mode": "standard", "max_attempts": 5})


@dataclass(frozen=True)
class Fleet:
    size: int

    def name(self, index: int) -> str:
        return f"{FAMILIES[index % len(FAMILIES)]}-{SIZES[index // len(FAMILIES) % len(SIZES)]}-{index:05d}"

    def region(self, index: int) -> str:
        return REGIONS[index % len(REGIONS)]

    def queue(self, index: int) -> str:
        return f"{PREFIX}-{self.name(index)}-queued-builds"

    def queued(self, index: int) -> bool:
        return index % 20 in (3, 14)  # an odd and an even index: both regions

    def firing(self, index: int) -> bool:
        return index % 200 in (3, 114)  # queued ones, one in each region

    @property
    def indexes(self) -> range:
        return range(self.size)

    def in_region(self, region: str) -> list[int]:
        return [i for i in self.indexes if self.region(i) == region]

    def count(self, what: str) -> int:
        test = {"queued": self.queued, "firing": self.firing}[what]
        return sum(1 for i in self.indexes if test(i))

    def minimum_calls(self) -> dict[str, int]:
        """The floor for one steady tick, from the fleet's shape alone (not from queuewatch's code).

        GetMetricData: first the age of each queue holding a job (the others' is 0), which the rule
        judges; then the triage's evidence for the runner types that breach it, here the queue-depth
        history alone (the config names no other signal). Each is ceil(M/500) calls per region.
        """
        ages = {r: sum(1 for i in self.in_region(r) if self.queued(i)) for r in REGIONS}
        evidence = {r: EVIDENCE_QUERIES * sum(1 for i in self.in_region(r) if self.firing(i)) for r in REGIONS}
        return {
            "sqs.ListQueues": sum(max(1, math.ceil(len(self.in_region(r)) / 1000)) for r in REGIONS),
            "sqs.GetQueueAttributes": self.size,
            "cloudwatch.GetMetricData": sum(math.ceil(ages[r] / 500) + math.ceil(evidence[r] / 500) for r in REGIONS),
            "cloudwatch.metrics_requested": sum(ages.values()) + sum(evidence.values()),
            "dynamodb.Query": 1,
            "dynamodb.writes": 0,
            "sns.Publish": 0,
        }

    def jobs(self, index: int) -> int:
        """Jobs waiting on a runner type that has some: as many as its queue holds scale-up requests."""
        return 1 + index % 3

    def tracked_minimum_calls(self, at: datetime) -> dict[str, int]:
        """The floor for a steady tick with tracking on, the jobs judged: every queue read, as without
        tracking (the jobs and the queue check each other every tick); the jobs in one Query more; and the
        triage's evidence for the runner types that breach, from the jobs' history: one Query per UTC day and
        history shard their names hash to over the triage's window and baseline (the config names no other
        source of arrivals or run times). The rest as without tracking."""
        floor = self.minimum_calls()
        triage = TriageSettings()
        start, end = history_span(at, triage.window, triage.baseline)
        breaching: set[str | None] = {self.name(i) for i in self.indexes if self.firing(i)}
        floor["dynamodb.Query"] = 2 + (len(history_buckets(start, end, breaching)) if breaching else 0)
        floor["dynamodb.BatchGetItem"] = 1  # the job sources' heartbeats
        return floor

    def tick_shape(self) -> TickShape:
        """What a steady tick must ask, per region: the input of its latency floor (bench/floor.py)."""
        return TickShape(
            queues={r: len(self.in_region(r)) for r in REGIONS},
            judged_metrics={r: sum(1 for i in self.in_region(r) if self.queued(i)) for r in REGIONS},
            evidence_metrics={
                r: EVIDENCE_QUERIES * sum(1 for i in self.in_region(r) if self.firing(i)) for r in REGIONS
            },
        )

    def config_text(self) -> str:
        discovery = "".join(
            f'  - {{queue_name_pattern: "{{prefix}}-{{runner_type}}-queued-builds", prefix: {PREFIX}, region: {r}}}\n'
            for r in REGIONS
        )
        return (
            "version: 1\n"
            f"defaults:\n  region: {HOME_REGION}\n  metric_lookback: 10m\n"
            "  rule:\n    team: ci-infra\n    runbook_url: https://runbooks.example.com/jobs-queueing\n"
            "    keep_firing_for: 5m\n    repeat_interval: 4h\n"
            f"discovery:\n{discovery}"
            f"rules:\n  - {{name: jobs-queueing, thresholds: {{queue_time: {QUEUE_TIME_THRESHOLD}, queue_size: 0}}, "
            "priority: P2}\n"
            "monitor: {for: 5m}\n"
        )


@dataclass(frozen=True)
class Seeded:
    topic_arn: str
    inbox_url: str


def seed(fleet: Fleet) -> Seeded:
    """Queues, queued jobs, age datapoints, the two state tables, the topic and a subscriber."""
    with ThreadPoolExecutor(max_workers=16) as pool:
        for region in REGIONS:
            sqs = boto3.client("sqs", region_name=region, config=SEED_CLIENT)
            indexes = fleet.in_region(region)
            urls = list(pool.map(lambda i, c=sqs: c.create_queue(QueueName=fleet.queue(i))["QueueUrl"], indexes))
            queued = [(url, i) for url, i in zip(urls, indexes, strict=True) if fleet.queued(i)]
            list(pool.map(lambda pair, c=sqs: _enqueue(c, pair[0], fleet.jobs(pair[1])), queued))
            _put_ages(fleet, region, [i for i in indexes if fleet.queued(i)])
    dynamodb = boto3.client("dynamodb", region_name=HOME_REGION)
    create_state_table(dynamodb, STATE_TABLE)
    create_state_table(dynamodb, NAIVE_TABLE)
    sns = boto3.client("sns", region_name=HOME_REGION)
    topic_arn = sns.create_topic(Name=TOPIC)["TopicArn"]
    sqs = boto3.client("sqs", region_name=HOME_REGION)
    inbox_url = sqs.create_queue(QueueName=INBOX)["QueueUrl"]
    inbox_arn = sqs.get_queue_attributes(QueueUrl=inbox_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=inbox_arn)
    return Seeded(topic_arn=topic_arn, inbox_url=inbox_url)


def seed_jobs(fleet: Fleet, at: datetime) -> None:
    """The jobs table, and the jobs GitHub holds queued at `at`: the firing runner types' since 15 minutes
    before T0, as their queues' age says; the others' young at `at`."""
    dynamodb = boto3.client("dynamodb", region_name=HOME_REGION, config=SEED_CLIENT)
    create_jobs_table(dynamodb, JOBS_TABLE)

    def put(index: int) -> None:
        start = T0 - timedelta(seconds=FIRING_AGE_SECONDS) if fleet.firing(index) else at - timedelta(seconds=20)
        created = [start + timedelta(seconds=n) for n in range(fleet.jobs(index))]
        put_queued_jobs(dynamodb, JOBS_TABLE, fleet.name(index), created, now=at, first_id=1 + 10 * index)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(put, [i for i in fleet.indexes if fleet.queued(i)]))
    # AWS/SQS publishes a queue's age every minute while it holds requests: the datapoints put at T0 are past
    # metric_lookback by now, and with tracking the requests' age is judged beside the jobs'.
    for region in REGIONS:
        indexes = [i for i in fleet.in_region(region) if fleet.queued(i)]
        ages = {
            fleet.queue(i): FIRING_AGE_SECONDS + (at - T0).total_seconds() if fleet.firing(i) else YOUNG_AGE_SECONDS
            for i in indexes
        }
        put_queue_ages(boto3.client("cloudwatch", region_name=region, config=SEED_CLIENT), ages, at)


def _enqueue(sqs: SQSClient, url: str, jobs: int) -> None:
    sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": str(n), "MessageBody": f'{{"id": {n}, "eventType": "workflow_job"}}'} for n in range(jobs)],
    )


def _put_ages(fleet: Fleet, region: str, indexes: Sequence[int]) -> None:
    cloudwatch = boto3.client("cloudwatch", region_name=region, config=SEED_CLIENT)
    ages = {fleet.queue(i): FIRING_AGE_SECONDS if fleet.firing(i) else YOUNG_AGE_SECONDS for i in indexes}
    put_queue_ages(cloudwatch, ages, T0)


def drain_inbox(inbox_url: str) -> int:
    """Pages the subscriber received since the last call."""
    sqs = boto3.client("sqs", region_name=HOME_REGION)
    received = 0
    while True:
        messages = sqs.receive_message(QueueUrl=inbox_url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return received
        received += len(messages)
        sqs.delete_message_batch(
            QueueUrl=inbox_url,
            Entries=[{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(messages)],
        )


def item_bytes(item: dict[str, dict[str, object]]) -> int:
    """DynamoDB's size of an item: attribute names plus values (strings, numbers, lists and maps)."""
    return sum(len(name.encode()) + _value_bytes(value) for name, value in item.items())


def _value_bytes(value: dict[str, object]) -> int:
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(str(raw).encode())
    if kind == "N":
        digits = str(raw).lstrip("-").replace(".", "").lstrip("0") or "0"
        return math.ceil(len(digits) / 2) + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "B":  # the group's members, compressed (adapters/state_table/alerts.py)
        assert isinstance(raw, bytes)
        return len(raw)
    if kind == "L":
        assert isinstance(raw, list)
        return 3 + sum(1 + _value_bytes(v) for v in raw)
    if kind == "M":
        assert isinstance(raw, dict)
        return 3 + sum(1 + len(k.encode()) + _value_bytes(v) for k, v in raw.items())
    if kind == "SS":
        assert isinstance(raw, list)
        return sum(len(str(v).encode()) for v in raw)
    raise ValueError(f"unexpected DynamoDB type {kind}")


def state_read_floor(table: str, partition: str = "queuewatch") -> dict[str, int]:
    """Items and bytes in the state partition, and the read units one strongly consistent Query costs."""
    dynamodb = boto3.client("dynamodb", region_name=HOME_REGION)
    items: list[dict[str, dict[str, object]]] = []
    kwargs: dict[str, object] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": partition}},
    }
    while True:
        page = dynamodb.query(**kwargs)  # type: ignore[arg-type]
        items.extend(page.get("Items", []))  # type: ignore[arg-type]
        if "LastEvaluatedKey" not in page:
            break
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    size = sum(item_bytes(item) for item in items)
    return {"items": len(items), "bytes": size, "read_units": max(1, math.ceil(size / 4096))}
