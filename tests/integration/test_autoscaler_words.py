"""The autoscaler's own words on the page: its scale-up and job-retry lines read for the runner types in breach,
through the real collect and evaluate stages, moto holding the lines (Logs Insights answered over them)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest
from support import T0, StackInMoto, arriving_now

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.collect import collect
from queuewatch.collect.autoscaler_log import logs_query
from queuewatch.config.load import parse_config
from queuewatch.model.autoscaler_log import MAX_READ_PER_TICK, PAST_THE_BOUND
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.status.status import build_view, text_lines
from queuewatch_cli.devkit.insights_moto import InsightsOverMoto, powertools_line, put_lines
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import put_queue_ages, put_queued_jobs

JOBS = "jobs"
QUEUE = "gh-ci-linux-2xlarge-queued-builds"
SCALE_UP = "/aws/lambda/gh-ci-linux-2xlarge-scale-up"
CONFIG = """
version: 1
autoscaler: {prefix: gh-ci}
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
"""
FUNCTION = "gh-ci-linux-2xlarge-scale-up"


@pytest.fixture
def at_maximum(aws: None) -> AwsClients:
    """Upstream at runners_maximum_count with non-ephemeral runners: it deleted the requests (the queue is
    empty) while GitHub holds two jobs queued, and wrote why."""
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName=QUEUE)
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {QUEUE: 0}, T0)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    put_queued_jobs(dynamodb, JOBS, "linux.2xlarge", [T0 - timedelta(minutes=20), T0 - timedelta(minutes=9)], now=T0)
    lines = []
    for minute in (19, 8):  # one scale-up per job, each refused at the maximum
        at = T0 - timedelta(minutes=minute)
        lines += [
            (at, powertools_line("Current runners", FUNCTION, currentRunners=50, maximumRunners=50)),
            (
                at + timedelta(milliseconds=5),
                powertools_line(
                    "Not all runners will be created for this group, maximum number of runners reached.",
                    FUNCTION,
                    desiredNewRunners=1,
                ),
            ),
        ]
    put_lines(boto3.client("logs", region_name="us-east-1"), SCALE_UP, lines)
    return AwsClients()


def _tick(clients: AwsClients, insights: InsightsOverMoto, config: str = CONFIG) -> tuple[Snapshot, Any]:
    parsed = parse_config(config, source="t.yaml")
    read = logs_query(lambda region: insights, wait_seconds=2)
    snap = collect(
        parsed, clients, now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=JOBS, read_logs=read
    )
    return snap, parsed


def test_a_page_at_the_maximum_leads_with_the_autoscalers_words_and_status_shows_them(at_maximum: AwsClients) -> None:
    insights = InsightsOverMoto(boto3.client("logs", region_name="us-east-1"))
    snap, config = _tick(at_maximum, insights)
    moto = StackInMoto.create(name="prod")
    inbox = moto.subscribe_queue("inbox")
    result = moto.evaluate(snap, config, clock=arriving_now(snap))
    assert [str(key) for key in result.firing] == ["jobs-queueing#linux.2xlarge"]
    [message] = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox)["Messages"]
    alert = json.loads(json.loads(message["Body"])["Message"])
    [figures] = alert["runner_types"]
    assert alert["likely_cause"].startswith("linux.2xlarge: The autoscaler says: maximum reached: ")
    assert "maximum reached (50 of 50 runners) (2x, 17:41 to 17:52 UTC, " + SCALE_UP in alert["likely_cause"]
    finding = figures["triage"]["findings"][0]
    assert finding["cause"] == "log_max_reached" and finding["guess"] is False
    assert "Not all runners will be created for this group" in finding["detail"]
    # The log says why the requests are missing; the drop it explains is seen, not guessed, and stays after it.
    assert [f["cause"] for f in figures["triage"]["findings"]][:2] == ["log_max_reached", "no_scale_up_request"]
    said = figures["autoscaler_log"]
    assert said["log_groups"] == [SCALE_UP] and said["error"] is None
    assert said["causes"][0]["current_runners"] == 50 and said["causes"][0]["count"] == 2
    assert said["query_url"].startswith("https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#")
    assert insights.calls.count("StartQuery") == 1

    state = load_state(moto.dynamodb, "state")
    text = "\n".join(text_lines(build_view(state, T0), "state", T0))
    assert "likely cause at the last page: linux.2xlarge: The autoscaler says: maximum reached" in text
    assert "(50 of 50 runners)" in text


def test_logs_that_cannot_be_read_are_a_degraded_reading_naming_the_log_group(at_maximum: AwsClients) -> None:
    logs = boto3.client("logs", region_name="us-east-1")
    denied = InsightsOverMoto(logs, denied=lambda group: group == SCALE_UP)
    snap, _ = _tick(at_maximum, denied)
    [found] = snap.runner_types
    assert found.autoscaler_log is not None and found.autoscaler_log.causes == []
    assert found.autoscaler_log.error is not None
    assert SCALE_UP in found.autoscaler_log.error and "AccessDenied" in found.autoscaler_log.error

    still_running = InsightsOverMoto(logs, status="Running")
    snap, config = _tick(at_maximum, still_running)
    [found] = snap.runner_types
    assert found.autoscaler_log is not None and "still Running" in (found.autoscaler_log.error or "")
    assert "StopQuery" in still_running.calls
    moto = StackInMoto.create(name="prod")
    inbox = moto.subscribe_queue("inbox")
    moto.evaluate(snap, config, clock=arriving_now(snap))
    [message] = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox)["Messages"]
    findings = json.loads(json.loads(message["Body"])["Message"])["runner_types"][0]["triage"]["findings"]
    # No log said why: the drop is named (seen, not guessed), and the unread log is named.
    assert findings[0]["cause"] == "no_scale_up_request" and findings[0]["guess"] is False
    assert findings[-1]["cause"] == "log_unread" and SCALE_UP in findings[-1]["detail"]


def test_a_missing_log_group_degrades_its_runner_type_alone(at_maximum: AwsClients) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.create_queue(QueueName="gh-ci-arm64-queued-builds")  # no scale-up log group: never deployed
    put_queued_jobs(
        boto3.client("dynamodb", region_name="us-east-1"),
        JOBS,
        "arm64",
        [T0 - timedelta(minutes=30)],
        now=T0,
        first_id=100,
    )
    config = CONFIG.replace(
        "runner_types:\n", "runner_types:\n  - {name: arm64, queue: {name: gh-ci-arm64-queued-builds}}\n"
    )
    insights = InsightsOverMoto(boto3.client("logs", region_name="us-east-1"))
    snap, _ = _tick(at_maximum, insights, config)
    by_name = {rt.name: rt.autoscaler_log for rt in snap.runner_types}
    arm, linux = by_name["arm64"], by_name["linux.2xlarge"]
    assert arm is not None and "/aws/lambda/gh-ci-arm64-scale-up" in (arm.error or "")
    assert "ResourceNotFound" in (arm.error or "")
    assert linux is not None and linux.error is None and linux.causes[0].maximum_runners == 50
    assert insights.calls.count("StartQuery") == 3  # both together, then each alone


def test_no_log_is_read_for_a_runner_type_not_in_breach_nor_without_an_autoscaler(at_maximum: AwsClients) -> None:
    insights = InsightsOverMoto(boto3.client("logs", region_name="us-east-1"))
    _tick(at_maximum, insights, CONFIG.replace("queue_time: 1m", "queue_time: 1h"))
    _tick(at_maximum, insights, CONFIG.replace("autoscaler: {prefix: gh-ci}\n", ""))
    assert insights.calls == []


def test_past_the_bound_the_runner_types_not_read_say_so(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    logs = boto3.client("logs", region_name="us-east-1")
    names = [f"rt{i:02d}" for i in range(MAX_READ_PER_TICK + 2)]
    for minute, name in enumerate(names):
        sqs.create_queue(QueueName=f"gh-ci-{name}-queued-builds")
        put_queued_jobs(dynamodb, JOBS, name, [T0 - timedelta(minutes=10 + minute)], now=T0, first_id=minute + 1)
        put_lines(logs, f"/aws/lambda/gh-ci-{name}-scale-up", [(T0 - timedelta(minutes=5), "{}")])
    config = CONFIG.replace(
        "  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}\n",
        "".join(f"  - {{name: {n}, queue: {{name: gh-ci-{n}-queued-builds}}}}\n" for n in names),
    )
    insights = InsightsOverMoto(logs)
    snap, _ = _tick(AwsClients(), insights, config)
    read = sorted(rt.name for rt in snap.runner_types if rt.autoscaler_log and rt.autoscaler_log.error is None)
    assert read == names[2:]  # the longest-waiting; the two that waited least are counted, not read
    assert snap.autoscaler_logs_unread == 2
    assert insights.calls.count("StartQuery") == 1  # 25 runner types, 25 log groups: one query

    moto = StackInMoto.create(name="prod")
    inbox = moto.subscribe_queue("inbox")
    moto.evaluate(snap, parse_config(config, source="t.yaml"), clock=arriving_now(snap))
    [message] = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox)["Messages"]
    rows = {f["runner_type"]: f for f in json.loads(json.loads(message["Body"])["Message"])["runner_types"]}
    for name in names[:2]:  # their rows say the log was not read this tick, not that it said nothing
        assert rows[name]["autoscaler_log"]["error"] == PAST_THE_BOUND
        assert rows[name]["triage"]["findings"][-1]["cause"] == "log_unread"
    assert rows[names[2]]["autoscaler_log"]["error"] is None


def test_a_launch_error_upstream_deletes_and_a_dropped_retry_are_named_with_code_and_job(aws: None) -> None:
    """UnauthorizedOperation (outside scale_errors: the request deleted) and a job-retry check that met a 502
    (upstream #5423: the check deleted), in v7.11's words, each on the page with what it names."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.create_queue(QueueName=QUEUE)
    sqs.create_queue(QueueName="gh-ci-linux-2xlarge-job-retry")
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    put_queued_jobs(dynamodb, JOBS, "linux.2xlarge", [T0 - timedelta(minutes=12)], now=T0, first_id=4242)
    logs = boto3.client("logs", region_name="us-east-1")
    error = {"name": "UnauthorizedOperation", "message": "You are not authorized to perform this operation."}
    put_lines(
        logs,
        SCALE_UP,
        [
            (
                T0 - timedelta(minutes=11),
                powertools_line("Create fleet request failed.", FUNCTION, "WARN", error=error, retryable=False),
            )
        ],
    )
    retry = "gh-ci-linux-2xlarge-job-retry"
    dropped = powertools_line(
        "Error processing job retry: Server Error",
        retry,
        "WARN",
        error={"name": "HttpError", "message": "Server Error", "status": 502},
        github={"event": "workflow_job", "workflow_job_id": "4242"},
    )
    put_lines(logs, f"/aws/lambda/{retry}", [(T0 - timedelta(minutes=3), dropped)])
    insights = InsightsOverMoto(logs)
    named = "queue: {name: gh-ci-linux-2xlarge-queued-builds}, job_retry_queue: gh-ci-linux-2xlarge-job-retry"
    snap, config = _tick(
        AwsClients(), insights, CONFIG.replace("queue: {name: gh-ci-linux-2xlarge-queued-builds}", named)
    )
    [found] = snap.runner_types
    assert found.autoscaler_log is not None and found.autoscaler_log.log_groups == [SCALE_UP, f"/aws/lambda/{retry}"]
    moto = StackInMoto.create(name="prod")
    inbox = moto.subscribe_queue("inbox")
    moto.evaluate(snap, config, clock=arriving_now(snap))
    [message] = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox)["Messages"]
    findings = json.loads(json.loads(message["Body"])["Message"])["runner_types"][0]["triage"]["findings"]
    assert [f["cause"] for f in findings[:2]] == ["log_launch_failed", "log_retry_dropped"]
    assert "launch failed: UnauthorizedOperation, not retried: the request is deleted" in findings[0]["detail"]
    assert (
        "retry dropped (job 4242) (1x, 17:57 UTC, /aws/lambda/gh-ci-linux-2xlarge-job-retry)" in findings[1]["detail"]
    )
