"""The real handlers on the events/ files: the shapes AWS documents, and bad input that changes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities.parser import ValidationError

from queuewatch.adapters.state_table import create_table, load_state
from queuewatch.settings import SettingsError
from queuewatch_cli.localrun import REPO_ROOT, FakeContext, load_event, load_handler_module

CONFIG = REPO_ROOT / "config" / "queuewatch.yaml"
EVENT_TICK = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)  # the scheduled time in every events/ file


@pytest.fixture
def stack(aws: None, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What template.yaml deploys, made in moto, and the environment it gives the functions."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    for name in ("gh-ci-linux-2xlarge-queued-builds", "gh-ci-linux-4xlarge-queued-builds"):
        sqs.create_queue(QueueName=name)
    create_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    topic = boto3.client("sns", region_name="us-east-1").create_topic(Name="alerts")["TopicArn"]
    inbox = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    boto3.client("sns", region_name="us-east-1").subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    env = {"QUEUEWATCH_CONFIG": str(CONFIG), "STATE_TABLE": "state", "ALERT_TOPIC_ARN": topic, "STACK_NAME": "test"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return {"inbox": inbox, **env}


def evaluate_handler(delay: timedelta = timedelta(seconds=30)) -> Any:
    """The evaluate handler, its wall clock `delay` after the tick the events/ files share."""
    module = load_handler_module("evaluate")
    module.clock = lambda: EVENT_TICK + delay  # type: ignore[attr-defined]
    return module.lambda_handler


def received(inbox: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    return [
        json.loads(json.loads(m["Body"])["Message"]) for m in sqs.receive_message(QueueUrl=inbox).get("Messages", [])
    ]


def test_collect_handler_takes_the_scheduled_event_and_returns_a_snapshot(stack: dict[str, str]) -> None:
    collect = load_handler_module("collect").lambda_handler
    snapshot = collect(load_event("collect_scheduled.json"), FakeContext("collect"))
    assert snapshot["collected_at"] == "2026-11-21T18:00:00Z"
    assert snapshot["snapshot_id"] == load_event("collect_scheduled.json")["id"]
    names = {rt["name"] for rt in snapshot["runner_types"]}
    assert {"linux.2xlarge", "linux.4xlarge", "linux.g5.4xlarge.nvidia.gpu"} <= names
    json.dumps(snapshot)  # what Lambda hands the destination must be plain JSON


def test_evaluate_handler_pages_on_the_success_record(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    evaluate = evaluate_handler()
    result = evaluate(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert result["firing"] == ["jobs-queueing#linux.2xlarge"]
    [page] = received(stack["inbox"])
    assert page["runner_types"][0]["queue_size"] == 14 and page["max_queue_time_seconds"] == 6840
    emf = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    names = {m["Name"] for blob in emf for d in blob["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    assert {"Heartbeat", "AlertsFiring", "QueueSize", "QueueTime", "PagesSent"} <= names
    per_type = [blob for blob in emf if blob.get("RunnerType") == "linux.2xlarge"]
    assert per_type and per_type[0]["QueueSize"] == [14] and per_type[0]["QueueTime"] == [6840]
    # Per runner type only while jobs wait: linux.4xlarge's queue is empty, so it costs no custom metric.
    assert {blob.get("RunnerType") for blob in emf} == {None, "linux.2xlarge", "linux.g5.4xlarge.nvidia.gpu"}


def per_runner_type_metrics(out: str) -> set[str]:
    """The runner types that got their own EMF blob in a handler's stdout."""
    return {blob["RunnerType"] for line in out.splitlines() if '"RunnerType"' in line for blob in [json.loads(line)]}


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("queued", {"linux.2xlarge", "linux.g5.4xlarge.nvidia.gpu"}),
        ("alerting", {"linux.2xlarge"}),  # the GPU queue holds jobs, but not long enough to alert
        ("off", set()),
    ],
)
def test_runner_type_metrics_choose_which_runner_types_get_their_own_metrics(
    stack: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    setting: str,
    expected: set[str],
) -> None:
    monkeypatch.setenv("RUNNER_TYPE_METRICS", setting)
    evaluate = evaluate_handler()
    result = evaluate(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert result["pending"] == [] and result["firing"] == ["jobs-queueing#linux.2xlarge"]
    out = capsys.readouterr().out
    assert per_runner_type_metrics(out) == expected
    assert '"Heartbeat"' in out  # whatever the setting, the heartbeat the alarm watches still goes out
    assert len(received(stack["inbox"])) == 1


def test_a_bad_runner_type_metrics_setting_names_the_variable(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNNER_TYPE_METRICS", "some")
    with pytest.raises(SettingsError, match="RUNNER_TYPE_METRICS"):
        evaluate_handler()(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").applied_at is None
    assert received(stack["inbox"]) == []


def test_evaluate_handler_takes_the_failure_record(stack: dict[str, str]) -> None:
    evaluate = evaluate_handler()
    result = evaluate(load_event("evaluate_failure.json"), FakeContext("evaluate"))
    assert result["pending"] == ["queuewatch-health#collector"]  # pages once it lasts monitor.for
    assert received(stack["inbox"]) == []


@pytest.mark.parametrize(
    "event",
    [
        {"hello": "world"},
        {**load_event("evaluate_success.json"), "requestContext": {"condition": "Maybe"}},
        {**load_event("evaluate_success.json"), "timestamp": "yesterday"},
    ],
)
def test_a_malformed_record_is_rejected_and_changes_nothing(stack: dict[str, str], event: dict[str, Any]) -> None:
    evaluate = evaluate_handler()
    with pytest.raises(ValidationError):
        evaluate(event, FakeContext("evaluate"))
    assert load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").instances == {}
    assert received(stack["inbox"]) == []


def test_a_forged_success_payload_is_rejected_and_changes_nothing(stack: dict[str, str]) -> None:
    event = load_event("evaluate_success.json")
    event["responsePayload"] = {"runner_types": "all fine, trust me"}
    with pytest.raises(ValueError, match="responsePayload is not a queuewatch Snapshot"):
        evaluate_handler()(event, FakeContext("evaluate"))
    assert load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").applied_at is None
    assert received(stack["inbox"]) == []


def test_collect_handler_rejects_an_event_that_is_not_a_schedule(stack: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        load_handler_module("collect").lambda_handler({"time": "now"}, FakeContext("collect"))


def test_a_bad_config_fails_the_function_with_the_file_and_key(
    stack: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nrules:\n  - name: r\n    thresholds: {queue_time: soon}\nrunner_types: []\n")
    monkeypatch.setenv("QUEUEWATCH_CONFIG", str(bad))
    with pytest.raises(Exception, match=r"bad.yaml:4: rules\[0\]\.thresholds\.queue_time"):
        evaluate_handler()(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert received(stack["inbox"]) == []
