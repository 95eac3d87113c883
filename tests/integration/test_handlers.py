"""The real handlers on the events/ files: the shapes AWS documents, and bad input that changes nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
import urllib3
from aws_lambda_powertools.utilities.parser import ValidationError
from support import load_template

from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.runtime.settings import SettingsError
from queuewatch_cli.devkit.handlers import (
    EVENTS_DIR,
    REPO_ROOT,
    FakeContext,
    destination_record,
    load_event,
    load_handler_module,
)
from queuewatch_cli.devkit.moto_tables import create_state_table

CONFIG = REPO_ROOT / "config" / "queuewatch.yaml"
EVENT_TICK = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)  # the scheduled time in every events/ file


@pytest.fixture
def stack(aws: None, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What template.yaml deploys, made in moto, and the environment it gives the functions."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    for name in ("gh-ci-linux-2xlarge-queued-builds", "gh-ci-linux-4xlarge-queued-builds"):
        sqs.create_queue(QueueName=name)
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
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


# Every scheduled invocation AWS documents, as events/collect_*.json: the tick time and id each gives,
# or None where the event says nothing and the invocation's clock and request id stand in.
SCHEDULE_SHAPES: dict[str, tuple[str | None, str | None]] = {
    "collect_scheduled.json": ("2026-11-21T18:00:00Z", "5f3b2c1e-8d4a-4f6e-9b0c-2a7d1e6f4c3b"),  # EventBridge rule
    "collect_scheduler_default.json": (None, None),  # EventBridge Scheduler, no Input: {}
    "collect_scheduler_input.json": ("2026-11-21T18:00:00Z", "7c1e4a9f02b35d68"),  # Scheduler's context attributes
}


def test_every_collect_event_file_has_its_expected_tick() -> None:
    assert sorted(SCHEDULE_SHAPES) == sorted(path.name for path in EVENTS_DIR.glob("collect_*.json"))


@pytest.mark.parametrize("name", sorted(SCHEDULE_SHAPES))
def test_collect_handler_collects_on_every_scheduled_event_shape(stack: dict[str, str], name: str) -> None:
    collect = load_handler_module("collect").lambda_handler
    before = datetime.now(UTC)
    snapshot = collect(load_event(name), FakeContext("collect", aws_request_id="req-7f3a"))
    after = datetime.now(UTC)
    scheduled, tick_id = SCHEDULE_SHAPES[name]
    collected_at = datetime.fromisoformat(snapshot["collected_at"])
    if scheduled is None:
        assert before <= collected_at <= after  # no scheduled time given: the invocation's clock
    else:
        assert collected_at == datetime.fromisoformat(scheduled)
    assert snapshot["snapshot_id"] == (tick_id or "req-7f3a")
    assert {"linux.2xlarge", "linux.4xlarge"} <= {rt["name"] for rt in snapshot["runner_types"]}
    json.dumps(snapshot)


@pytest.mark.parametrize("name", sorted(SCHEDULE_SHAPES))
def test_a_failed_tick_of_every_shape_is_judged_at_its_scheduled_time(stack: dict[str, str], name: str) -> None:
    """A failed collection orders on the same clock as the snapshots: its scheduled time, else the record's."""
    record = destination_record(
        load_event(name),
        {"errorMessage": "Task timed out after 45.00 seconds", "errorType": "Sandbox.Timedout"},
        at=datetime(2026, 11, 21, 18, 0, 47, tzinfo=UTC),
        succeeded=False,
    )
    evaluate_handler(timedelta(seconds=47))(record, FakeContext("evaluate"))
    applied_at = load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").applied_at
    scheduled, _ = SCHEDULE_SHAPES[name]
    assert applied_at == datetime.fromisoformat(scheduled or "2026-11-21T18:00:47Z")


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


def emitted_dimensions(out: str) -> dict[str, dict[str, str]]:
    """Each metric in a handler's EMF output, by name, with the dimensions it went out under."""
    found: dict[str, dict[str, str]] = {}
    for blob in (json.loads(line) for line in out.splitlines() if '"_aws"' in line):
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            [dimension_set] = directive["Dimensions"]
            for metric in directive["Metrics"]:
                found.setdefault(metric["Name"], {name: blob[name] for name in dimension_set})
    return found


@pytest.mark.parametrize("stack_name", ["queuewatch-linux", "queuewatch-other"])
def test_each_stacks_alarms_watch_exactly_the_metrics_its_own_evaluator_emits(
    stack: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, stack_name: str
) -> None:
    """CloudWatch matches an alarm to a metric by its exact dimension set. Stacks side by side in one account
    and region must not share one: another stack's heartbeat would keep a dead evaluator "healthy"."""
    template = load_template()
    function_env = template["Globals"]["Function"]["Environment"]["Variables"]
    for key in ("POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"):
        monkeypatch.setenv(key, function_env[key])
    monkeypatch.setenv("STACK_NAME", stack_name)  # template.yaml: !Ref AWS::StackName
    evaluate_handler()(load_event("evaluate_success.json"), FakeContext("evaluate"))
    emitted = emitted_dimensions(capsys.readouterr().out)
    this_stack = {"Ref": "AWS::StackName"}
    for alarm in ("HeartbeatAlarm", "PagesFailedAlarm"):
        props = template["Resources"][alarm]["Properties"]
        watched = {d["Name"]: stack_name if d["Value"] == this_stack else d["Value"] for d in props["Dimensions"]}
        assert props["Namespace"] == function_env["POWERTOOLS_METRICS_NAMESPACE"]
        assert emitted[props["MetricName"]] == watched, alarm
        assert watched["Stack"] == stack_name


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


@pytest.mark.parametrize(
    "event",
    [
        {"time": "now"},
        {"scheduledTime": "2026-11-21T18:00:00Z"},  # a misspelt key is refused, not ignored
        {"scheduled_time": "2026-11-21T18:00:00"},  # no time zone
        {"scheduled_time": "<aws.scheduler.scheduled-time>"},  # an Input given to something other than Scheduler
        {"execution_id": ""},
        {**load_event("collect_scheduled.json"), "time": None},
    ],
)
def test_collect_handler_rejects_an_event_that_is_not_a_schedule(stack: dict[str, str], event: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        load_handler_module("collect").lambda_handler(event, FakeContext("collect", aws_request_id="req-1"))


def test_a_bad_config_fails_the_function_with_the_file_and_key(
    stack: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nrules:\n  - name: r\n    thresholds: {queue_time: soon}\nrunner_types: []\n")
    monkeypatch.setenv("QUEUEWATCH_CONFIG", str(bad))
    with pytest.raises(Exception, match=r"bad.yaml:4: rules\[0\]\.thresholds\.queue_time"):
        evaluate_handler()(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert received(stack["inbox"]) == []


def test_the_evaluator_links_each_page_to_the_dashboard_it_is_told(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DASHBOARD_NAME", "test-queuewatch")  # template.yaml: ${AWS::StackName}-queuewatch
    evaluate_handler()(load_event("evaluate_success.json"), FakeContext("evaluate"))
    [page] = received(stack["inbox"])
    assert page["view_url"].startswith(
        "https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#dashboards/dashboard/test-queuewatch?"
    )


@pytest.mark.parametrize("name", ["has space", "x" * 256, "semi;colon"])
def test_a_malformed_dashboard_name_is_refused_with_its_variable_named(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("DASHBOARD_NAME", name)
    with pytest.raises(SettingsError, match="DASHBOARD_NAME"):
        evaluate_handler()(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert received(stack["inbox"]) == []


STATUS_URL = "http://127.0.0.1:9/api/v2/summary.json"  # loopback: a client the test failed to replace stays here


class StatusPageAnswer:
    """What the evaluator's HTTP client answers for GitHub's status page: a recorded document, or an error."""

    def __init__(self, document: str | None = None, error: Exception | None = None) -> None:
        self.document, self.error, self.asked = document, error, 0
        self.status = 200
        self.sent = False

    def request(self, *_: Any, **__: Any) -> StatusPageAnswer:
        self.asked += 1
        if self.error is not None:
            raise self.error
        return self

    def read(self, *_: Any) -> bytes:
        """The document, then the end of the stream, as a response read in chunks gives it."""
        if self.sent:
            return b""
        self.sent = True
        return (Path(__file__).parent / "githubstatus" / f"{self.document}.json").read_bytes()

    def release_conn(self) -> None:
        pass


def with_status_page(answer: StatusPageAnswer) -> Any:
    """The evaluate handler, as evaluate_handler() gives it, whose HTTP client answers as told (no network)."""
    module = load_handler_module("evaluate")
    module.clock = lambda: EVENT_TICK + timedelta(seconds=30)  # type: ignore[attr-defined]
    module.http = answer  # type: ignore[attr-defined]
    return module.lambda_handler


def test_the_evaluator_asks_githubs_status_only_where_the_stack_turns_it_on(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = StatusPageAnswer("summary_actions_incident")
    with_status_page(answer)(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert answer.asked == 0  # off by default: a function with no way out never tries
    [page] = received(stack["inbox"])
    assert page["github_incident"] is None


def test_with_githubs_status_on_the_page_names_its_incident(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_STATUS_URL", STATUS_URL)
    evaluate = with_status_page(StatusPageAnswer("summary_actions_incident"))
    evaluate(load_event("evaluate_success.json"), FakeContext("evaluate"))
    [page] = received(stack["inbox"])
    said = "GitHub is investigating an Actions incident: Incident with Actions (https://stspg.io/"
    assert page["summary"].startswith(said)


# urllib3 raises its timeout with the pool it read from; a test's has none.
READ_TIMEOUT = urllib3.exceptions.ReadTimeoutError(None, "/", "timed out")  # type: ignore[arg-type]


@pytest.mark.parametrize("error", [READ_TIMEOUT, OSError("no route")])
def test_a_status_page_that_times_out_or_fails_leaves_the_tick_to_page_as_ever(
    stack: dict[str, str], monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    monkeypatch.setenv("GITHUB_STATUS_URL", STATUS_URL)
    evaluate = with_status_page(StatusPageAnswer(error=error))
    result = evaluate(load_event("evaluate_success.json"), FakeContext("evaluate"))
    assert result["firing"] == ["jobs-queueing#linux.2xlarge"]
    [page] = received(stack["inbox"])
    assert page["github_incident"] is None and page["summary"].startswith("1 runner type")
