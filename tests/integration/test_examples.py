"""The shipped example configs, end to end: the autoscaler's own metrics in moto, collect, evaluate, the page.

Each scenario puts the datapoints the real autoscaler would publish (names, namespaces and dimensions as the
example configs cite them) over the triage's window and baseline, and checks that the page names the true
cause first, with its numbers, from what that autoscaler really has.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import boto3
import pytest
from support import T0, StackInMoto

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.model.signals import SignalName
from queuewatch.track.stage import TrackResult
from queuewatch.track.telemetry import record_job
from queuewatch_cli.devkit.handlers import REPO_ROOT
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import put_finished_job, put_queued_jobs

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch.type_defs import MetricDatumTypeDef

EXAMPLES = REPO_ROOT / "config" / "examples"
BASELINE_MINUTES = range(16, 16 + 180)  # the 3 hours before the 15-minute window
WINDOW_MINUTES = range(1, 16)


def put(region: str, namespace: str, metric: str, dimensions: dict[str, str], points: dict[int, float]) -> None:
    """Datapoints by minutes before T0; CloudWatch takes at most 1000 a call."""
    client = boto3.client("cloudwatch", region_name=region)
    data: list[MetricDatumTypeDef] = [
        {
            "MetricName": metric,
            "Dimensions": [{"Name": k, "Value": v} for k, v in dimensions.items()],
            "Timestamp": T0 - timedelta(minutes=ago),
            "Value": value,
        }
        for ago, value in points.items()
    ]
    for start in range(0, len(data), 1000):
        client.put_metric_data(Namespace=namespace, MetricData=data[start : start + 1000])


def page_for(config: Config, region: str) -> dict[str, Any]:
    """Collect at T0, evaluate, and return the one page an SQS subscriber gets."""
    moto = StackInMoto.create(name="prod", region=region)
    inbox = moto.subscribe_queue("inbox")
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1")
    moto.evaluate(snap, config)
    [message] = boto3.client("sqs", region_name=region).receive_message(QueueUrl=inbox).get("Messages", [])
    return json.loads(json.loads(message["Body"])["Message"])  # type: ignore[no-any-return]


def findings(page: dict[str, Any], runner_type: str) -> list[tuple[str, str]]:
    [figures] = [f for f in page["runner_types"] if f["runner_type"] == runner_type]
    return [(f["cause"], f["detail"]) for f in figures["triage"]["findings"]]


# --- upstream: AWS/SQS is all there is --------------------------------------------------------

UPSTREAM_QUEUE = "multi-runner-linux-x64-queued-builds"


@pytest.fixture
def upstream(aws: None) -> Config:
    sqs = boto3.client("sqs", region_name="eu-west-1")
    url = sqs.create_queue(QueueName=UPSTREAM_QUEUE)["QueueUrl"]
    sqs.create_queue(QueueName="multi-runner-linux-arm64-queued-builds")
    sqs.create_queue(QueueName=UPSTREAM_QUEUE + "_dead_letter")
    for job in range(14):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": job, "eventType": "workflow_job"}))
    return load_config(EXAMPLES / "upstream-multi-runner.yaml")


def test_upstream_the_incident_is_a_stalled_scale_up(upstream: Config) -> None:
    queue = {"QueueName": UPSTREAM_QUEUE}
    put("eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", queue, {1: 114 * 60, 15: 100 * 60})
    put("eu-west-1", "AWS/SQS", "ApproximateNumberOfMessagesVisible", queue, {15: 3, 8: 8, 1: 14})
    # Jobs arrive as usual, one a minute; the scale-up Lambda stopped deleting them 15 minutes ago.
    put("eu-west-1", "AWS/SQS", "NumberOfMessagesSent", queue, dict.fromkeys([*BASELINE_MINUTES, *WINDOW_MINUTES], 1))
    put("eu-west-1", "AWS/SQS", "NumberOfMessagesDeleted", queue, dict.fromkeys(BASELINE_MINUTES, 1))
    page = page_for(upstream, "eu-west-1")
    assert page["max_queue_size"] == 14 and page["max_queue_time_seconds"] == 114 * 60
    [(cause, detail)] = findings(page, "linux-x64")
    assert cause == "scale_up_failing"
    assert "the queue grew from 3 to 14 jobs in 15m while the scale-up consumer dequeued 0 (usually 15 per 15m)" in (
        detail
    )
    [figures] = page["runner_types"]
    assert (
        "At the autoscaler's maximum: needs max_hit, or max_runners with total_runners"
        in (figures["triage"]["not_checked"])
    )


def test_upstream_an_arrival_surge_against_the_runner_types_own_baseline(upstream: Config) -> None:
    queue = {"QueueName": UPSTREAM_QUEUE}
    put("eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", queue, {1: 9 * 60})
    put("eu-west-1", "AWS/SQS", "ApproximateNumberOfMessagesVisible", queue, {15: 0, 1: 14})
    put(
        "eu-west-1",
        "AWS/SQS",
        "NumberOfMessagesSent",
        queue,
        {**dict.fromkeys(BASELINE_MINUTES, 0.2), **dict.fromkeys(WINDOW_MINUTES, 6)},
    )
    put(
        "eu-west-1",
        "AWS/SQS",
        "NumberOfMessagesDeleted",
        queue,
        {**dict.fromkeys(BASELINE_MINUTES, 0.2), **dict.fromkeys(WINDOW_MINUTES, 5)},
    )
    page = page_for(upstream, "eu-west-1")
    [(cause, detail)] = findings(page, "linux-x64")
    assert cause == "arrival_surge"
    assert detail == "90 jobs arrived in 15m, 30.0x the usual 3 per 15m over the 3h before"


def test_upstream_runners_short_of_memory_and_disk_from_the_cloudwatch_agent(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="eu-west-1")
    url = sqs.create_queue(QueueName=UPSTREAM_QUEUE)["QueueUrl"]
    for job in range(14):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": job, "eventType": "workflow_job"}))
    queue = {"QueueName": UPSTREAM_QUEUE}
    put("eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", queue, {1: 40 * 60})
    put("eu-west-1", "AWS/SQS", "ApproximateNumberOfMessagesVisible", queue, {15: 14, 1: 14})
    runner = {"RunnerType": "linux-x64"}  # the agent's aggregation by the dimension each runner config appends
    put("eu-west-1", "CWAgent", "cpu_usage_active", runner, dict.fromkeys([*BASELINE_MINUTES, *WINDOW_MINUTES], 55))
    put("eu-west-1", "CWAgent", "mem_used_percent", runner, {**dict.fromkeys(BASELINE_MINUTES, 62), 1: 98.6})
    put("eu-west-1", "CWAgent", "disk_used_percent", runner, {**dict.fromkeys(BASELINE_MINUTES, 80), 1: 94})
    page = page_for(load_config(EXAMPLES / "upstream-runner-resources.yaml"), "eu-west-1")
    [(cause, detail)] = findings(page, "linux-x64")
    assert cause == "short_of_resources"
    assert detail.startswith("memory 99% used (usually 62%); disk 94% used (usually 80%); at or above 90%")
    [figures] = page["runner_types"]
    assert figures["triage"]["findings"][0]["evidence"] == {"memory_used_percent": 98.6, "disk_used_percent": 94}
    assert not any(item.startswith("Runners short of") for item in figures["triage"]["not_checked"])


# --- the pytorch fork: its own per-runner-type metrics ----------------------------------------

FORK_TYPE = "linux.2xlarge"
ORG_TYPE = {"Org": "pytorch", "RunnerType": FORK_TYPE}


@pytest.fixture
def fork(aws: None) -> Config:
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="gh-ci-queued-builds")
    chron = {"RunnerType": FORK_TYPE}
    put(
        "us-east-1",
        "gh-ci-scaleUpChron-dim",
        "run.scaleupchron.perRunnerType.queuedRunners.numJobs",
        chron,
        {12: 9, 2: 14},
    )
    put(
        "us-east-1",
        "gh-ci-scaleUpChron-dim",
        "run.scaleupchron.perRunnerType.queuedRunners.maxMinutes",
        chron,
        {12: 104, 2: 114},
    )
    for metric, value in (("total", 40), ("busy", 40), ("available", 0)):
        put("us-east-1", "gh-ci-scaleUp-dim", f"run.ghrunners.perOrg.perRunnerType.{metric}", ORG_TYPE, {1: value})
    put(
        "us-east-1",
        "AWS/SQS",
        "NumberOfMessagesDeleted",
        {"QueueName": "gh-ci-queued-builds"},
        dict.fromkeys([*BASELINE_MINUTES, *WINDOW_MINUTES], 4),
    )
    return load_config(EXAMPLES / "pytorch-test-infra.yaml")


def test_fork_the_incident_is_the_autoscalers_maximum(fork: Config) -> None:
    put("us-east-1", "gh-ci-scaleUp-dim", "run.ghrunners.perOrg.perRunnerType.maxHit", ORG_TYPE, {1: 3, 4: 5, 9: 4})
    page = page_for(fork, "us-east-1")
    assert page["max_queue_size"] == 14 and page["max_queue_time_seconds"] == 114 * 60
    assert findings(page, FORK_TYPE) == [
        ("at_max", "the autoscaler refused 12 scale-ups at its maximum in 15m"),
        ("saturated", "40 of 40 runners busy (100%)"),
    ]
    assert page["likely_cause"] == (
        "linux.2xlarge: At the autoscaler's maximum: the autoscaler refused 12 scale-ups at its maximum in 15m. "
        "First: raise the autoscaler's runners_maximum_count for this runner type, or free runners; look in the "
        "scale-up log group (/aws/lambda/<prefix>-<key>-scale-up) for the scale-ups it refused"
    )


def test_fork_runner_creation_failing_names_the_ec2_exceptions(fork: Config) -> None:
    put("us-east-1", "gh-ci-scaleUp-dim", "run.runners.perOrg.perRunnerType.create.fail", ORG_TYPE, {2: 4, 6: 5})
    exception = "aws.ec2.perException.runInstances.exception"
    put("us-east-1", "gh-ci-scaleUp-dim", exception, {"Exception": "InsufficientInstanceCapacity"}, {2: 6, 6: 2})
    put("us-east-1", "gh-ci-scaleUp-dim", exception, {"Exception": "VcpuLimitExceeded"}, {3: 1})
    page = page_for(fork, "us-east-1")
    cause, detail = findings(page, FORK_TYPE)[0]
    assert cause == "scale_up_failing"
    assert "9 runner creations failed in 15m" in detail
    assert "EC2 RunInstances errors in 15m (fleet-wide): InsufficientInstanceCapacity 8, VcpuLimitExceeded 1" in detail


def test_fork_the_queue_metrics_link_opens_the_metric_the_figures_came_from(fork: Config) -> None:
    page = page_for(fork, "us-east-1")
    [listed] = [f for f in page["runner_types"] if f["runner_type"] == FORK_TYPE]
    link = listed["console_url"]
    # The fork's per-runner-type queue-time metric, not the AWS/SQS metrics of the queue all runner types share.
    assert "run.scaleupchron.perRunnerType.queuedRunners.maxMinutes" in link and FORK_TYPE in link
    assert "gh-ci-queued-builds" not in link


# --- upstream with tracking: the jobs' own history feeds the triage ---------------------------------


def test_tracked_jobs_name_the_missing_requests_then_the_surge_and_the_longer_jobs(aws: None) -> None:
    config = load_config(EXAMPLES / "upstream-tracked.yaml")
    boto3.client("sqs", region_name="eu-west-1").create_queue(QueueName=UPSTREAM_QUEUE)  # empty
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")  # the stack's region: the jobs table lives there
    create_jobs_table(dynamodb, "jobs")
    waiting = [T0 - timedelta(minutes=9, seconds=-i) for i in range(14)]
    put_queued_jobs(dynamodb, "jobs", "linux-x64", waiting, now=T0)
    # The history: over the 3 hours before the window, one job every 5 minutes, each running 10 minutes;
    # in the 15-minute window, 40 more, and the jobs that finished took 25 minutes.
    usual = [T0 - timedelta(minutes=m) for m in range(30, 190, 5)]
    for index, queued in enumerate(usual):
        put_finished_job(dynamodb, "jobs", "linux-x64", 1000 + index, queued, run=timedelta(minutes=10), now=T0)
    for index in range(40):
        queued = T0 - timedelta(minutes=14, seconds=-20 * index)
        put_finished_job(dynamodb, "jobs", "linux-x64", 2000 + index, queued, run=None, now=T0)
    for index in range(3):
        queued = T0 - timedelta(minutes=35, seconds=10 * index)
        put_finished_job(dynamodb, "jobs", "linux-x64", 3000 + index, queued, run=timedelta(minutes=25), now=T0)
    moto = StackInMoto.create(name="prod", region="eu-west-1")
    inbox = moto.subscribe_queue("inbox")
    clients = AwsClients()
    snap = collect(config, clients, now=T0, account_id="123456789012", snapshot_id="s1", jobs_table="jobs")
    moto.evaluate(snap, config)
    [message] = boto3.client("sqs", region_name="eu-west-1").receive_message(QueueUrl=inbox)["Messages"]
    page = json.loads(json.loads(message["Body"])["Message"])
    causes = dict(findings(page, "linux-x64"))
    assert list(causes) == ["no_scale_up_request", "arrival_surge", "jobs_longer"]
    assert "54 jobs arrived in 15m, 18.5x the usual 2.92 per 15m" in causes["arrival_surge"]  # 14 queued, 40 running
    assert "jobs take 25m, 2.5x the usual 10m" in causes["jobs_longer"]
    assert page["max_queue_size"] == 14 and page["max_queue_time_seconds"] == 9 * 60


def emitted_dimensions() -> set[str]:
    """The dimension names TrackFunction's metrics carry, from the EMF record_job prints, as the template
    sets the service name."""
    buffer = io.StringIO()
    result = TrackResult(outcome="applied", action="queued", job_id=1, runner_type="linux-x64", arrived=True)
    with patch.dict(os.environ, {"POWERTOOLS_SERVICE_NAME": "queuewatch"}), contextlib.redirect_stdout(buffer):
        record_job(result, "Queuewatch", stack="queuewatch")
    [blob] = [json.loads(line) for line in buffer.getvalue().splitlines()]
    [dimensions] = blob["_aws"]["CloudWatchMetrics"][0]["Dimensions"]
    return set(dimensions)


# --- upstream with job retry and redrive: every path a scale-up request takes --------------------


def test_upstream_job_retry_and_dead_letter_queues_page_under_their_own_rules(aws: None) -> None:
    config = load_config(EXAMPLES / "upstream-job-retry-dead-letter.yaml")
    sqs = boto3.client("sqs", region_name="eu-west-1")
    urls = {
        name: sqs.create_queue(QueueName=name)["QueueUrl"]
        for name in (
            "multi-runner-linux-x64-queued-builds",
            "multi-runner-linux-x64-job-retry",
            "multi-runner-linux-x64-queued-builds_dead_letter",
            "multi-runner-windows-x64-queued-builds",
            "windows-builds-redrive",
        )
    }
    sqs.send_message(QueueUrl=urls["multi-runner-linux-x64-job-retry"], MessageBody='{"id": 1}')
    sqs.send_message(QueueUrl=urls["windows-builds-redrive"], MessageBody='{"id": 2}')
    put("eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": "multi-runner-linux-x64-job-retry"},
        {1: 50 * 60})  # fmt: skip
    put("eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": "windows-builds-redrive"}, {1: 600})
    moto = StackInMoto.create(name="prod", region="eu-west-1")
    inbox = moto.subscribe_queue("inbox")
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1")
    moto.evaluate(snap, config)
    messages = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages", [])
    pages = {page["rule"]: page for page in (json.loads(json.loads(m["Body"])["Message"]) for m in messages)}
    assert set(pages) == {"job-retry", "dead-letter"}
    [stuck] = pages["job-retry"]["runner_types"]
    assert (stuck["runner_type"], stuck["queue"], stuck["queue_time_seconds"]) == (
        "linux-x64", "multi-runner-linux-x64-job-retry", 3000
    )  # fmt: skip
    [dead] = pages["dead-letter"]["runner_types"]
    assert (dead["runner_type"], dead["queue"], dead["team"]) == ("windows-x64", "windows-builds-redrive", "windows-ci")
    assert pages["dead-letter"]["priority"] == "P1" and pages["job-retry"]["priority"] == "P2"


# --- upstream with several GitHub Apps: the rate limit is per app -------------------------------


def test_upstream_several_apps_the_spent_app_is_named_beside_the_healthy_ones(aws: None) -> None:
    config = load_config(EXAMPLES / "upstream-several-apps.yaml")
    sqs = boto3.client("sqs", region_name="eu-west-1")
    url = sqs.create_queue(QueueName=UPSTREAM_QUEUE)["QueueUrl"]
    for job in range(6):
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": job}))
    put("eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": UPSTREAM_QUEUE}, {1: 20 * 60})
    # The primary app is spent; the two additional apps are not: their figure alone would hide it. Each series
    # as upstream's scale-up publishes it: Powertools adds its `service` dimension beside AppId.
    for app, left in (("123456", 12), ("234567", 4100), ("345678", 4800)):
        dimensions = {"service": "multi-runner-linux-x64-scale-up", "AppId": app}
        put("eu-west-1", "GitHub Runners", "GitHubAppRateLimitRemaining", dimensions, {1: left, 2: left + 40})
    page = page_for(config, "eu-west-1")
    cause, detail = findings(page, "linux-x64")[0]
    assert cause == "rate_limited"
    assert detail.startswith("app 123456: 12 requests left;")
    assert "the other apps have app 234567: 4100, app 345678: 4800" in detail


def test_upstream_several_apps_an_app_with_no_figure_is_a_degraded_signal_naming_it(aws: None) -> None:
    # Two apps publish; the third (a wrong AppId, or the scale-up's metrics off) publishes nothing: the reading
    # is missing with that app named, never the lowest of the apps that answered.
    config = load_config(EXAMPLES / "upstream-several-apps.yaml")
    sqs = boto3.client("sqs", region_name="eu-west-1")
    url = sqs.create_queue(QueueName=UPSTREAM_QUEUE)["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": 1}))
    # Queueing past the rule: the triage's evidence, the rate limit among it, is read for a breach.
    put("eu-west-1", "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": UPSTREAM_QUEUE}, {1: 20 * 60})
    for app in ("123456", "234567"):
        dimensions = {"service": "multi-runner-linux-x64-scale-up", "AppId": app}
        put("eu-west-1", "GitHub Runners", "GitHubAppRateLimitRemaining", dimensions, {1: 4000})
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1")
    [linux] = [rt for rt in snap.runner_types if rt.name == "linux-x64"]
    reason = linux.degraded[SignalName.GITHUB_APP_RATE_LIMIT]
    assert reason.startswith("app 345678: ") and "123456" not in reason


# --- upstream with `all` dispatch, and in several regions: a job counted once ------------------------


def tracked_page(config: Config, jobs: dict[str, int]) -> dict[str, Any]:
    """Collect at T0 with tracking on (`jobs`: queued jobs per runner type, 10 minutes old), evaluate, the page."""
    dynamodb = AwsClients().dynamodb()  # the jobs table is in the collector's own region
    create_jobs_table(dynamodb, "jobs")
    first = 1
    for runner_type, count in jobs.items():
        put_queued_jobs(dynamodb, "jobs", runner_type, [T0 - timedelta(minutes=10)] * count, now=T0, first_id=first)
        first += count
    moto = StackInMoto.create(name="prod", region="eu-west-1")
    inbox = moto.subscribe_queue("inbox")
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1", jobs_table="jobs")
    moto.evaluate(snap, config)
    [message] = boto3.client("sqs", region_name="eu-west-1").receive_message(QueueUrl=inbox).get("Messages", [])
    return json.loads(json.loads(message["Body"])["Message"])  # type: ignore[no-any-return]


def request_in(region: str, queue: str, age: int) -> None:
    sqs = boto3.client("sqs", region_name=region)
    url = sqs.create_queue(QueueName=queue)["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": 1}))
    put(region, "AWS/SQS", "ApproximateAgeOfOldestMessage", {"QueueName": queue}, {1: age})


def test_upstream_all_dispatch_one_job_in_both_pools_is_one_job(aws: None) -> None:
    config = load_config(EXAMPLES / "upstream-all-dispatch.yaml")
    for pool in ("spot", "ondemand"):  # the webhook sent the job's request to both pools
        request_in("eu-west-1", f"multi-runner-linux-x64-{pool}-queued-builds", 600)
    page = tracked_page(config, {"linux-x64-spot": 1})  # tracked once, under the first pool
    assert page["runner_types_affected"] == 2 and page["jobs_queued"] == 1, page["jobs_queued_basis"]


def test_upstream_multi_region_a_keys_queues_in_two_regions_are_one_demand(aws: None) -> None:
    config = load_config(EXAMPLES / "upstream-multi-region.yaml")
    request_in("eu-west-1", "multi-runner-linux-x64-queued-builds", 600)
    request_in("us-east-1", "multi-runner-linux-x64-queued-builds", 600)
    page = tracked_page(config, {"linux-x64": 2})  # one job dispatched to each region's queue
    figures = {f["runner_type"]: f["queue_size"] for f in page["runner_types"]}
    assert figures == {"linux-x64": 2, "linux-x64@us-east-1": 1}  # the jobs, and the copy's own requests
    assert page["jobs_queued"] == 2  # not 3


def test_upstream_multi_region_each_regions_job_retry_and_dead_letter_queues_are_its_copys(aws: None) -> None:
    config = load_config(EXAMPLES / "upstream-multi-region.yaml")
    for region, paths in (("eu-west-1", ["job-retry"]), ("us-east-1", ["queued-builds_dead_letter"])):
        sqs = boto3.client("sqs", region_name=region)
        for name in ("queued-builds", *paths):
            sqs.create_queue(QueueName=f"multi-runner-linux-x64-{name}")
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1")
    found = {rt.name: (rt.region, rt.job_retry_queue, rt.dead_letter_queue) for rt in snap.runner_types}
    assert found == {
        "linux-x64": ("eu-west-1", "multi-runner-linux-x64-job-retry", None),
        "linux-x64@us-east-1": ("us-east-1", None, "multi-runner-linux-x64-queued-builds_dead_letter"),
    }


def test_upstream_scale_set_lane_is_judged_on_its_jobs_beside_the_pools_two_signals(aws: None) -> None:
    config = load_config(EXAMPLES / "upstream-scale-set-lane.yaml")
    request_in("eu-west-1", "multi-runner-linux-x64-queued-builds", 600)  # a discovered pool, its request aging
    page = tracked_page(config, {"arc-linux-x64": 2})  # the lane: two jobs waiting 10 minutes, no queue at all
    figures = {f["runner_type"]: (f["queue_size"], f["queue_time_seconds"]) for f in page["runner_types"]}
    assert figures == {"arc-linux-x64": (2, 600), "linux-x64": (1, 600)}
    shown = {f["runner_type"]: f["shown_by"] for f in page["runner_types"]}
    assert set(shown["linux-x64"].values()) == {"queue"}  # no job tracked: its build queue showed it
    assert shown["arc-linux-x64"] == {}  # one signal, nothing cross-checked: no "shown by" to give
