"""The collector against moto SQS and CloudWatch, in several regions: right values, minimal calls, no consumption."""

from __future__ import annotations

import math
from collections import Counter
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from support import T0

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.devkit.seed import put_queue_ages

CONFIG = """
version: 1
defaults:
  region: us-east-1
  signals:
    busy_runners:
      {namespace: GitHub Runners, metric: BusyRunners, dimensions: {RunnerType: "{runner_type}"}, stat: Maximum}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.arm64, queue: {name: gh-ci-linux-arm64-queued-builds, region: eu-west-1}}
  - name: linux.fork
    queue: {url: "https://sqs.us-east-1.amazonaws.com/123456789012/gh-ci-fork-queued-builds"}
    signals:
      queue_time:
        {namespace: GitHub Runners, metric: QueuedJobsMaxMinutes, dimensions: {RunnerType: linux.fork}, unit: minutes}
  - {name: linux.gone, queue: {name: gh-ci-linux-gone-queued-builds}}
discovery:
  - {queue_name_pattern: "{prefix}-{runner_type}-queued-builds", prefix: gh-ci, region: us-east-1}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}
"""


class CallCounter:
    """Counts API calls per operation on every client the collector makes."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1


def counting_clients(counter: CallCounter) -> AwsClients:
    """Clients whose every SQS and CloudWatch call the counter sees (registered on their session)."""
    session = boto3.Session()
    session.events.register_first("before-call.sqs", counter, unique_id="qw-count-sqs")
    session.events.register_first("before-call.cloudwatch", counter, unique_id="qw-count-cw")
    return AwsClients(session)


def put_metric(
    region: str, namespace: str, metric: str, dimensions: dict[str, str], value: float, minutes_ago: int = 1
) -> None:
    boto3.client("cloudwatch", region_name=region).put_metric_data(
        Namespace=namespace,
        MetricData=[
            {
                "MetricName": metric,
                "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
                "Timestamp": T0 - timedelta(minutes=minutes_ago),
                "Value": value,
            }
        ],
    )


@pytest.fixture
def fleet(aws: None) -> dict[str, str]:
    east = boto3.client("sqs", region_name="us-east-1")
    west = boto3.client("sqs", region_name="eu-west-1")
    urls = {
        name: east.create_queue(QueueName=name)["QueueUrl"]
        for name in (
            "gh-ci-linux-2xlarge-queued-builds",
            "gh-ci-fork-queued-builds",
            "gh-ci-windows-queued-builds",  # discovered
            "gh-ci-windows-queued-builds-dlq",  # not a runner type's queue
        )
    }
    urls["gh-ci-linux-arm64-queued-builds"] = west.create_queue(QueueName="gh-ci-linux-arm64-queued-builds")["QueueUrl"]
    for i in range(14):
        east.send_message(QueueUrl=urls["gh-ci-linux-2xlarge-queued-builds"], MessageBody=f'{{"id": {i}}}')
    east.send_message(QueueUrl=urls["gh-ci-linux-2xlarge-queued-builds"], MessageBody="{}", DelaySeconds=60)
    west.send_message(QueueUrl=urls["gh-ci-linux-arm64-queued-builds"], MessageBody="{}")
    put_metric(
        "us-east-1",
        "AWS/SQS",
        "ApproximateAgeOfOldestMessage",
        {"QueueName": "gh-ci-linux-2xlarge-queued-builds"},
        6840,
    )
    put_metric(
        "eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": "gh-ci-linux-arm64-queued-builds"}, 90
    )
    put_metric("us-east-1", "GitHub Runners", "QueuedJobsMaxMinutes", {"RunnerType": "linux.fork"}, 3, minutes_ago=2)
    put_metric("us-east-1", "GitHub Runners", "BusyRunners", {"RunnerType": "linux.2xlarge"}, 40)
    return urls


def run(counter: CallCounter | None = None, config_text: str = CONFIG) -> Snapshot:
    clients = counting_clients(counter or CallCounter())
    return collect(parse_config(config_text), clients, now=T0, account_id="123456789012", snapshot_id="s1")


def by_name(snap: Snapshot) -> dict[str, Any]:
    return {rt.name: rt for rt in snap.runner_types}


def test_reads_every_signal_from_its_source_across_regions(fleet: dict[str, str]) -> None:
    types = by_name(run())
    assert set(types) == {"linux.2xlarge", "linux.arm64", "linux.fork", "linux.gone", "windows"}
    east = types["linux.2xlarge"]
    assert east.value(SignalName.QUEUE_SIZE) == 15  # 14 visible + 1 delayed
    assert east.value(SignalName.QUEUE_TIME) == 6840
    assert east.signals[SignalName.QUEUE_TIME].age_seconds == 60
    assert east.value(SignalName.BUSY_RUNNERS) == 40
    west = types["linux.arm64"]
    assert (west.region, west.value(SignalName.QUEUE_SIZE), west.value(SignalName.QUEUE_TIME)) == ("eu-west-1", 1, 90)
    assert types["linux.fork"].value(SignalName.QUEUE_TIME) == 180  # 3 minutes, from the fork's own metric


def test_an_empty_queue_without_an_age_datapoint_has_queue_time_zero(fleet: dict[str, str]) -> None:
    windows = by_name(run())["windows"]
    assert windows.value(SignalName.QUEUE_SIZE) == 0 and windows.value(SignalName.QUEUE_TIME) == 0


def test_a_missing_queue_degrades_only_its_runner_type(fleet: dict[str, str]) -> None:
    types = by_name(run())
    gone = types["linux.gone"]
    assert gone.value(SignalName.QUEUE_SIZE) is None
    assert "NonExistentQueue" in (gone.signals[SignalName.QUEUE_SIZE].error or "") or "QueueDoesNotExist" in (
        gone.signals[SignalName.QUEUE_SIZE].error or ""
    )
    assert [name for name, rt in types.items() if rt.degraded and SignalName.QUEUE_SIZE in rt.degraded] == [
        "linux.gone"
    ]


def test_missing_metric_data_is_reported_with_its_reason(fleet: dict[str, str]) -> None:
    arm = by_name(run())["linux.arm64"]
    # The call reaches back over the triage's baseline (3h) and window (15m): nothing in all of it.
    assert arm.signals[SignalName.BUSY_RUNNERS].error == "no datapoints in the last 3h15m"


def test_a_datapoint_older_than_the_lookback_is_stale_with_its_age(fleet: dict[str, str]) -> None:
    put_metric("eu-west-1", "GitHub Runners", "BusyRunners", {"RunnerType": "linux.arm64"}, 7, minutes_ago=47)
    arm = by_name(run())["linux.arm64"]
    assert arm.value(SignalName.BUSY_RUNNERS) is None
    assert arm.signals[SignalName.BUSY_RUNNERS].error == (
        "stale: the last datapoint is 47m old, beyond metric_lookback 10m"
    )


@pytest.mark.parametrize(
    ("queue_time", "metric_calls"),
    [
        # The first round, one call per region: us-east-1 asks 3 ages (AWS/SQS for linux.2xlarge and the
        # unreadable linux.gone, linux.fork's own metric; windows is empty), eu-west-1 linux.arm64's.
        # linux.2xlarge (114m) and linux.arm64 (90s) breach 1m: one more call in each region for their
        # busy runners and queue-depth history.
        ("1m", 2 + 2),
        ("3h", 2),  # nothing breaches: no second round
    ],
)
def test_calls_per_tick_are_the_minimum(fleet: dict[str, str], queue_time: str, metric_calls: int) -> None:
    counter = CallCounter()
    snap = run(counter, CONFIG.replace("queue_time: 1m", f"queue_time: {queue_time}"))
    queues = len(snap.runner_types)
    assert counter.calls["GetQueueAttributes"] == queues
    assert counter.calls["GetMetricData"] == metric_calls
    assert counter.calls["ListQueues"] == 1
    assert set(counter.calls) == {"GetQueueAttributes", "GetMetricData", "ListQueues"}


def test_metric_queries_are_batched_500_to_a_call(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    names = [f"gh-ci-t{i:03d}-queued-builds" for i in range(260)]
    for name in names:
        sqs.send_message(QueueUrl=sqs.create_queue(QueueName=name)["QueueUrl"], MessageBody="{}")
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), dict.fromkeys(names, 600.0), T0)
    config = CONFIG.split("runner_types:", maxsplit=1)[0] + (
        "discovery:\n  - {queue_name_pattern: 'gh-ci-{runner_type}-queued-builds'}\n"
        "rules:\n  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}\n"
    )
    counter = CallCounter()
    snap = run(counter, config)
    judged = 260  # the age of each queue: every one holds a job
    evidence = 260 + 260  # every one breaches: its busy runners and its queue-depth history
    assert len(snap.runner_types) == 260
    assert counter.calls["GetQueueAttributes"] == 260
    assert counter.calls["GetMetricData"] == math.ceil(judged / 500) + math.ceil(evidence / 500) == 3


def test_an_empty_queues_age_is_not_requested(fleet: dict[str, str]) -> None:
    requested: list[str] = []

    def record(params: dict[str, Any], **_: Any) -> None:
        for query in params["MetricDataQueries"]:
            metric = query["MetricStat"]["Metric"]
            requested.append(f"{metric['MetricName']}:{metric['Dimensions'][0]['Value']}")

    aws = AwsClients()
    for region in ("us-east-1", "eu-west-1"):
        aws.cloudwatch(region).meta.events.register("provide-client-params.cloudwatch.GetMetricData", record)
    # CloudWatch still holds a stale age for the queue that has since drained: it must not count.
    put_metric(
        "us-east-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": "gh-ci-windows-queued-builds"}, 600
    )
    snap = collect(parse_config(CONFIG), aws, now=T0, account_id="123456789012", snapshot_id="s")
    ages = sorted(r for r in requested if r.startswith("ApproximateAgeOfOldestMessage"))
    # linux.2xlarge and linux.arm64 hold jobs; linux.gone could not be read, so its age is still asked for.
    assert ages == [
        "ApproximateAgeOfOldestMessage:gh-ci-linux-2xlarge-queued-builds",
        "ApproximateAgeOfOldestMessage:gh-ci-linux-arm64-queued-builds",
        "ApproximateAgeOfOldestMessage:gh-ci-linux-gone-queued-builds",
    ]
    windows = by_name(snap)["windows"]
    assert windows.value(SignalName.QUEUE_SIZE) == 0 and windows.value(SignalName.QUEUE_TIME) == 0
    # The triage's other signals, only for the runner types that breach a rule.
    assert sorted(r for r in requested if r.startswith("BusyRunners")) == [
        "BusyRunners:linux.2xlarge",
        "BusyRunners:linux.arm64",
    ]


def test_a_denied_metric_call_degrades_that_region_only(fleet: dict[str, str]) -> None:
    aws = AwsClients()

    def deny(**_: Any) -> None:
        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "not authorized"}}, "GetMetricData")

    west = aws.cloudwatch("eu-west-1")
    west.meta.events.register("before-call.cloudwatch.GetMetricData", deny)
    snap = collect(parse_config(CONFIG), aws, now=T0, account_id="123456789012", snapshot_id="s")
    types = by_name(snap)
    assert "AccessDenied" in (types["linux.arm64"].signals[SignalName.QUEUE_TIME].error or "")
    assert types["linux.arm64"].value(SignalName.QUEUE_SIZE) == 1  # SQS still answered
    assert types["linux.2xlarge"].value(SignalName.QUEUE_TIME) == 6840


def test_a_failed_discovery_is_reported_and_named_runner_types_still_collected(fleet: dict[str, str]) -> None:
    aws = AwsClients()

    def deny(**_: Any) -> None:
        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "no ListQueues"}}, "ListQueues")

    aws.sqs("us-east-1").meta.events.register("before-call.sqs.ListQueues", deny)
    snap = collect(parse_config(CONFIG), aws, now=T0, account_id="123456789012", snapshot_id="s")
    assert snap.failed_discovery_regions == {"us-east-1"}
    assert "AccessDenied" in (snap.discovery[0].error or "")
    assert "linux.2xlarge" in by_name(snap) and "windows" not in by_name(snap)


def test_the_collector_never_consumes_a_message(fleet: dict[str, str]) -> None:
    counter = CallCounter()
    for _ in range(5):
        run(counter)
    assert not {"ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "PurgeQueue"} & set(counter.calls)
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = fleet["gh-ci-linux-2xlarge-queued-builds"]
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "14"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
    # The first receive anyone makes is ours: the collector never received a message.
    message = sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"])["Messages"][0]
    assert message["Attributes"]["ApproximateReceiveCount"] == "1"


HISTORY = CONFIG.replace(
    "defaults:\n  region: us-east-1\n  signals:\n",
    "defaults:\n  region: us-east-1\n  signals:\n"
    "    job_arrivals: sqs\n"
    "    creation_failures: {namespace: Fleet, metric: CreateFailures, stat: Sum, missing: zero}\n",
)


def test_the_triage_evidence_comes_in_a_second_round_for_breaching_runner_types(fleet: dict[str, str]) -> None:
    queue = {"QueueName": "gh-ci-linux-2xlarge-queued-builds"}
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    points = [("NumberOfMessagesSent", ago, 2.0) for ago in range(16, 196)]  # the 3h baseline: 2 a minute
    points += [("NumberOfMessagesSent", ago, 5.0) for ago in range(1, 16)]  # the 15m window: 5 a minute
    points += [("ApproximateNumberOfMessagesVisible", 15, 3.0), ("ApproximateNumberOfMessagesVisible", 1, 14.0)]
    for start in range(0, len(points), 500):
        cloudwatch.put_metric_data(
            Namespace="AWS/SQS",
            MetricData=[
                {
                    "MetricName": name,
                    "Dimensions": [{"Name": "QueueName", "Value": queue["QueueName"]}],
                    "Timestamp": T0 - timedelta(minutes=ago),
                    "Value": value,
                }
                for name, ago, value in points[start : start + 500]
            ],
        )
    put_metric("us-east-1", "Fleet", "CreateFailures", {}, 3, minutes_ago=4)
    counter = CallCounter()
    queries: list[int] = []
    clients = counting_clients(counter)
    east = clients.cloudwatch("us-east-1")
    east.meta.events.register(
        "provide-client-params.cloudwatch.GetMetricData",
        lambda params, **_: queries.append(len(params["MetricDataQueries"])),
    )
    snap = collect(
        parse_config(HISTORY),
        clients,
        now=T0,
        account_id="123456789012",
        snapshot_id="h",
    )
    # Two calls for us-east-1. First what the rules judge: the AWS/SQS age of linux.2xlarge and of
    # linux.gone (its depth is unknown), linux.fork's own queue-time metric; windows is empty, so its
    # age is not asked. Then the evidence, for linux.2xlarge only, the one runner type that breaches:
    # its queue-depth history, busy runners and arrivals, and the fleet-wide creation failures.
    assert queries == [3, 3 + 1]
    xl = by_name(snap)["linux.2xlarge"]
    arrivals = xl.signals[SignalName.JOB_ARRIVALS]
    assert (arrivals.window_sum, arrivals.baseline_sum) == (75, 30)  # 15 x 5 now, 180 x 2 / 12 usually
    size = xl.signals[SignalName.QUEUE_SIZE]
    assert (size.value, size.window_first, size.window_last) == (15, 3, 14)  # the value is still SQS's own
    failures = xl.signals[SignalName.CREATION_FAILURES]
    assert (failures.window_sum, failures.fleet_wide) == (3, True)
    for calm in ("linux.gone", "linux.fork", "windows"):  # none breaches: nothing to explain
        assert SignalName.CREATION_FAILURES not in by_name(snap)[calm].signals
