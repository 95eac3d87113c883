"""The track stage through its handlers, on moto: the bus, the webhook, and every way events go wrong."""

from __future__ import annotations

import base64
import copy
import itertools
import json
import threading
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from faults import inject
from moto.dynamodb.responses import DynamoHandler
from pydantic import ValidationError
from support import race

from queuewatch.adapters.job_store import create_jobs_table, queued_jobs
from queuewatch.config.load import load_config
from queuewatch.track import webhook as webhook_module
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.signature import sign
from queuewatch.track.stage import track
from queuewatch_cli.localrun import REPO_ROOT, FakeContext, load_event, load_handler_module

TABLE = "jobs"
SECRET = "queuewatch-local-webhook-secret"  # what signed events/webhook_workflow_job.json
STAGES = ("track_queued.json", "track_in_progress.json", "track_completed.json")


@pytest.fixture
def tracker(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, TABLE)
    arn = boto3.client("secretsmanager", region_name="us-east-1").create_secret(Name="gh", SecretString=SECRET)["ARN"]
    env = {
        "QUEUEWATCH_CONFIG": str(REPO_ROOT / "config" / "queuewatch.yaml"),
        "JOBS_TABLE": TABLE,
        "STACK_NAME": "test",
        "WEBHOOK_SECRET_ARN": arn,
        "JOB_METRICS": "on",  # the per-runner-type job metrics are an option: on here, to check them
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return load_handler_module("track")


def job(dynamodb: Any = None, job_id: int = 29679449) -> dict[str, Any] | None:
    client = dynamodb or boto3.client("dynamodb", region_name="us-east-1")
    return client.get_item(TableName=TABLE, Key={"pk": {"S": f"job#{job_id}"}}).get("Item")


def queued() -> list[int]:
    return [record.job_id for record in queued_jobs(boto3.client("dynamodb", region_name="us-east-1"), TABLE)]


def emf(output: str) -> list[dict[str, Any]]:
    """The EMF blobs printed, each metric's values as one flat list."""
    blobs = [json.loads(line) for line in output.splitlines() if '"_aws"' in line]
    for blob in blobs:
        for name in [m["Name"] for d in blob["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]]:
            value = blob[name]
            blob[name] = value if isinstance(value, list) else [value]
    return blobs


def test_a_queued_job_is_listed_until_a_runner_takes_it(tracker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    result = tracker.lambda_handler(load_event("track_queued.json"), FakeContext("track"))
    assert (result["outcome"], result["runner_type"]) == ("applied", "linux.2xlarge")
    assert queued() == [29679449]
    started = tracker.lambda_handler(load_event("track_in_progress.json"), FakeContext("track"))
    assert started["queue_seconds"] == 114 * 60 and queued() == []
    blobs = emf(capsys.readouterr().out)
    waits = [b["JobQueueTime"] for b in blobs if "JobQueueTime" in b]
    assert waits == [[114 * 60]] and [b["RunnerType"] for b in blobs if "JobsQueued" in b] == ["linux.2xlarge"]
    assert all(b["Stack"] == "test" for b in blobs)


@pytest.mark.parametrize("order", list(itertools.permutations(STAGES)))
def test_events_in_any_order_and_twice_end_in_the_furthest_state(tracker: Any, order: tuple[str, ...]) -> None:
    for name in order + order:  # every event arrives twice
        tracker.lambda_handler(load_event(name), FakeContext("track"))
    item = job()
    assert item is not None and item["status"]["S"] == "completed" and "queued" not in item
    assert queued() == []


def test_an_in_progress_before_its_queued_means_not_queued(tracker: Any) -> None:
    tracker.lambda_handler(load_event("track_in_progress.json"), FakeContext("track"))
    late = tracker.lambda_handler(load_event("track_queued.json"), FakeContext("track"))
    assert late["outcome"] == "duplicate" and queued() == []


@pytest.mark.parametrize("order", list(itertools.permutations(STAGES)))
def test_in_any_order_each_figure_is_counted_once(
    tracker: Any, capsys: pytest.CaptureFixture[str], order: tuple[str, ...]
) -> None:
    # A queued event after its in_progress still leaves one arrival; a completed that overtook its
    # in_progress still gives the queue time.
    for name in order + order:
        tracker.lambda_handler(load_event(name), FakeContext("track"))
    blobs = emf(capsys.readouterr().out)
    assert [b["JobsQueued"] for b in blobs if "JobsQueued" in b] == [[1]]
    assert [b["JobQueueTime"] for b in blobs if "JobQueueTime" in b] == [[114 * 60]]
    assert len([b for b in blobs if "JobRunTime" in b]) == 1


@pytest.fixture
def atomic_update_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB returns ALL_OLD atomically with the conditional UpdateItem; moto reads the old item before it
    writes, so two racing threads could both see none. One lock around moto's UpdateItem handler gives
    DynamoDB's guarantee back (conftest's backend lock sits inside it)."""
    lock = threading.Lock()
    handler = DynamoHandler.update_item

    def under_lock(self: DynamoHandler) -> Any:
        with lock:
            return handler(self)

    monkeypatch.setattr(DynamoHandler, "update_item", under_lock)


@pytest.mark.usefixtures("atomic_update_returns")
def test_racing_events_for_one_job_count_each_figure_once(tracker: Any) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    router = Router(load_config(REPO_ROOT / "config" / "queuewatch.yaml"))
    events = iter([load_event(name) for name in STAGES] * 4)  # each event four times, all at once
    now = datetime(2026, 11, 21, 18, 30, tzinfo=UTC)

    def prepare() -> Any:
        event = WorkflowJobEvent.model_validate(next(events)["detail"])
        return lambda: track(event, router, dynamodb, TABLE, now)

    results = race(len(STAGES) * 4, prepare)
    item = job()
    assert item is not None and item["status"]["S"] == "completed" and queued() == []
    assert sum(r.arrived for r in results) == 1
    assert sum(r.queue_seconds is not None for r in results) == 1
    assert sum(r.run_seconds is not None for r in results) == 1


def test_a_duplicate_counts_nothing_twice(tracker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    for _ in range(3):
        tracker.lambda_handler(load_event("track_in_progress.json"), FakeContext("track"))
    assert [b["JobQueueTime"] for b in emf(capsys.readouterr().out) if "JobQueueTime" in b] == [[114 * 60]]


def test_a_job_no_runner_type_serves_is_stored_and_counted_by_its_labels(
    tracker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    result = tracker.lambda_handler(load_event("track_queued_user_repository.json"), FakeContext("track"))
    assert result["runner_type"] is None and result["outcome"] == "applied"
    item = job(job_id=29679450)
    assert item is not None and "runner_type" not in item and item["label_set"]["S"] == "a100,gpu,linux,self-hosted"
    [blob] = [b for b in emf(capsys.readouterr().out) if "JobsUnmatched" in b]
    assert blob["LabelSet"] == "a100,gpu,linux,self-hosted"


def test_waiting_and_unknown_actions_store_no_queued_job(tracker: Any) -> None:
    tracker.lambda_handler(load_event("track_waiting.json"), FakeContext("track"))
    assert queued() == []
    unknown = load_event("track_queued.json")
    unknown["detail"]["action"] = "escalated"
    assert tracker.lambda_handler(unknown, FakeContext("track"))["outcome"] == "ignored"


def test_a_bus_event_that_is_not_a_workflow_job_fails_and_stores_nothing(tracker: Any) -> None:
    event = load_event("track_queued.json")
    del event["detail"]["workflow_job"]
    with pytest.raises(ValidationError, match="workflow_job"):
        tracker.lambda_handler(event, FakeContext("track"))
    assert job() is None


def test_a_throttled_write_fails_the_invocation_so_lambda_retries_it(tracker: Any) -> None:
    inject(tracker.aws.dynamodb(), "UpdateItem", "throttling")  # every attempt, botocore's retries included
    with pytest.raises(ClientError, match=r"ProvisionedThroughputExceeded|Throttling"):
        tracker.lambda_handler(load_event("track_queued.json"), FakeContext("track"))
    assert job() is None


def signed(body: bytes, secret: str = SECRET, **headers: str) -> dict[str, Any]:
    event = load_event("webhook_workflow_job.json")
    event.update(body=base64.b64encode(body).decode(), isBase64Encoded=True)  # as a Function URL sends bytes
    event["headers"]["x-hub-signature-256"] = sign(secret, body)
    event["headers"].update(headers)
    return event


def webhook_body() -> bytes:
    return load_event("webhook_workflow_job.json")["body"].encode()  # type: ignore[no-any-return]


def test_the_webhook_stores_a_signed_workflow_job(tracker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    response = tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))
    assert response["statusCode"] == 200 and queued() == [29679449]
    assert "gh/someone/42/head" not in capsys.readouterr().out  # the body is never logged


@pytest.mark.parametrize(
    "spoil",
    [
        lambda e: e.update(body=e["body"].replace("linux.2xlarge", "linux.4xlarge")),  # tampered after signing
        lambda e: e["headers"].update({"x-hub-signature-256": sign("not-the-secret", e["body"].encode())}),
        lambda e: e["headers"].pop("x-hub-signature-256"),
        lambda e: e["headers"].update({"x-hub-signature-256": "sha256=" + "0" * 64}),
    ],
    ids=["tampered body", "wrong secret", "missing header", "forged digest"],
)
def test_the_webhook_refuses_what_github_did_not_sign(tracker: Any, spoil: Any) -> None:
    event = load_event("webhook_workflow_job.json")
    spoil(event)
    assert tracker.webhook_handler(event, FakeContext("webhook"))["statusCode"] == 401
    assert job() is None


def test_a_redelivery_is_answered_as_a_duplicate(tracker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    event = load_event("webhook_workflow_job.json")
    first = tracker.webhook_handler(copy.deepcopy(event), FakeContext("webhook"))
    again = tracker.webhook_handler(copy.deepcopy(event), FakeContext("webhook"))
    assert (first["statusCode"], again["statusCode"]) == (200, 200)
    assert "already applied" in json.loads(again["body"])["message"]
    assert len([b for b in emf(capsys.readouterr().out) if "JobsQueued" in b]) == 1


def test_other_events_get_2xx_and_store_nothing(tracker: Any) -> None:
    ping = signed(b'{"zen":"Keep it logically awesome."}', **{"x-github-event": "ping"})
    assert tracker.webhook_handler(ping, FakeContext("webhook"))["statusCode"] == 202
    assert job() is None


@pytest.mark.parametrize("body", [b"{not json", b'{"action":"queued"}', b"\xff\xfe"], ids=["json", "shape", "utf-8"])
def test_a_signed_but_malformed_body_is_a_400_that_says_where(tracker: Any, body: bytes) -> None:
    event = signed(body)
    response = tracker.webhook_handler(event, FakeContext("webhook"))
    assert response["statusCode"] == 400 and "not a workflow_job payload" in json.loads(response["body"])["message"]
    assert job() is None


def test_a_body_over_githubs_limit_is_a_413(tracker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webhook_module, "MAX_BODY_BYTES", len(webhook_body()) - 1)
    response = tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))
    assert response["statusCode"] == 413 and job() is None


def test_job_metrics_are_off_unless_asked_for(
    tracker: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("JOB_METRICS")  # the template's default: the triage reads the jobs' history instead
    tracker.lambda_handler(load_event("track_queued.json"), FakeContext("track"))
    tracker.lambda_handler(load_event("track_in_progress.json"), FakeContext("track"))
    assert emf(capsys.readouterr().out) == [] and queued() == []  # the jobs are tracked all the same
