"""The track stage through its handlers, on moto: the bus, the webhook, and every way events go wrong."""

from __future__ import annotations

import base64
import copy
import hmac
import itertools
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote_from_bytes as quote

import boto3
import pytest
from botocore.exceptions import ClientError
from faults import inject
from moto.dynamodb.responses import DynamoHandler
from support import race

from queuewatch.adapters.jobs_table.jobs import queued_jobs
from queuewatch.config.load import load_config
from queuewatch.track import webhook as webhook_module
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.signature import sign, signature_valid
from queuewatch.track.stage import track
from queuewatch_cli.devkit.handlers import REPO_ROOT, FakeContext, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_jobs_table

TABLE = "jobs"
SECRET = "queuewatch-local-webhook-secret"  # what signed events/webhook_workflow_job.json
STAGES = ("track_queued.json", "track_in_progress.json", "track_completed.json")
DELIVERIES, DEAD_LETTERS, MAX_RECEIVES = "webhook-deliveries", "webhook-dead-letters", 3


@pytest.fixture
def tracker(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, TABLE)
    arn = boto3.client("secretsmanager", region_name="us-east-1").create_secret(Name="gh", SecretString=SECRET)["ARN"]
    sqs = boto3.client("sqs", region_name="us-east-1")
    dead_letters = sqs.create_queue(QueueName=DEAD_LETTERS)["QueueUrl"]
    dead_letters_arn = sqs.get_queue_attributes(QueueUrl=dead_letters, AttributeNames=["QueueArn"])["Attributes"]
    redrive = {"deadLetterTargetArn": dead_letters_arn["QueueArn"], "maxReceiveCount": str(MAX_RECEIVES)}
    attributes = {"VisibilityTimeout": "0", "RedrivePolicy": json.dumps(redrive)}  # as template.yaml, sooner
    deliveries = sqs.create_queue(QueueName=DELIVERIES, Attributes=attributes)["QueueUrl"]  # type: ignore[arg-type]
    env = {
        "QUEUEWATCH_CONFIG": str(REPO_ROOT / "config" / "queuewatch.yaml"),
        "JOBS_TABLE": TABLE,
        "STACK_NAME": "test",
        "WEBHOOK_SECRET_ARN": arn,
        "WEBHOOK_QUEUE_URL": deliveries,
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


def test_a_bus_event_that_is_not_a_workflow_job_is_refused_and_counted_not_retried(
    tracker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Raising would have Lambda retry it, dead-letter it and page the monitor: no retry can make it parse.
    event = load_event("track_queued.json")
    del event["detail"]["workflow_job"]
    result = tracker.lambda_handler(event, FakeContext("track"))
    assert result["outcome"] == "refused" and "workflow_job" in result["reason"] and job() is None
    assert [b["JobEventsRefused"] for b in emf(capsys.readouterr().out) if "JobEventsRefused" in b] == [[1]]


def older_in_progress() -> dict[str, Any]:
    """GitHub's own example of an in_progress of the older shape: no created_at."""
    event = load_event("track_in_progress.json")
    del event["detail"]["workflow_job"]["created_at"]
    return event


def test_an_older_in_progress_without_created_at_still_takes_the_job_off_the_queue(
    tracker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    tracker.lambda_handler(load_event("track_queued.json"), FakeContext("track"))
    assert queued() == [29679449]
    result = tracker.lambda_handler(older_in_progress(), FakeContext("track"))
    assert result["outcome"] == "applied" and queued() == []
    assert "queue_seconds" not in result or result["queue_seconds"] is None  # unknown, not 0
    blobs = emf(capsys.readouterr().out)
    assert not [b for b in blobs if "JobQueueTime" in b or "JobEventsRefused" in b]


def test_an_older_in_progress_arriving_first_leaves_the_job_not_queued(tracker: Any) -> None:
    assert tracker.lambda_handler(older_in_progress(), FakeContext("track"))["outcome"] == "applied"
    assert tracker.lambda_handler(load_event("track_queued.json"), FakeContext("track"))["outcome"] == "duplicate"
    assert queued() == []


def test_a_queued_event_without_created_at_is_refused_and_counted_not_retried(
    tracker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    event = load_event("track_queued.json")
    del event["detail"]["workflow_job"]["created_at"]
    result = tracker.lambda_handler(event, FakeContext("track"))
    assert result["outcome"] == "refused" and "created_at" in result["reason"] and job() is None
    assert [b["JobEventsRefused"] for b in emf(capsys.readouterr().out) if "JobEventsRefused" in b] == [[1]]


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


def waiting_deliveries() -> int:
    sqs = boto3.client("sqs", region_name="us-east-1")
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url(), AttributeNames=["ApproximateNumberOfMessages"])
    return int(attributes["Attributes"]["ApproximateNumberOfMessages"])


def queue_url(name: str = DELIVERIES) -> str:
    return boto3.client("sqs", region_name="us-east-1").get_queue_url(QueueName=name)["QueueUrl"]


def deliver(tracker: Any) -> list[dict[str, Any]]:
    """What Lambda's event source mapping does: receive a batch, invoke WebhookDeliveriesFunction, delete the
    records it did not report as failed (the others come back once their visibility timeout passes)."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = queue_url()
    responses: list[dict[str, Any]] = []
    while True:
        messages = sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], AttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            return responses
        records = [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {
                    k: {"stringValue": v["StringValue"], "dataType": v["DataType"]}
                    for k, v in m.get("MessageAttributes", {}).items()
                },
                "eventSource": "aws:sqs",
            }
            for m in messages
        ]
        response = tracker.deliveries_handler({"Records": records}, FakeContext("deliveries"))
        responses.append(response)
        failed = {f["itemIdentifier"] for f in response["batchItemFailures"]}
        for m in messages:
            if m["MessageId"] not in failed:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        if failed:
            return responses  # as Lambda would: the failed ones wait out their visibility timeout


@pytest.mark.usefixtures("received_live")
def test_the_webhook_queues_a_signed_workflow_job_and_the_consumer_applies_it(
    tracker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    response = tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))
    assert response["statusCode"] == 202 and json.loads(response["body"])["job_id"] == 29679449
    assert waiting_deliveries() == 1 and queued() == []  # acknowledged once SQS holds it, applied after
    [applied] = deliver(tracker)
    assert applied == {"batchItemFailures": []} and queued() == [29679449] and waiting_deliveries() == 0
    assert "gh/someone/42/head" not in capsys.readouterr().out  # the body is never logged


@pytest.mark.usefixtures("received_live")
def test_a_delivery_whose_write_is_throttled_is_retried_from_the_queue_not_lost(tracker: Any) -> None:
    # Before, the webhook wrote the table itself: a throttled write answered GitHub 502, and GitHub never retries.
    assert tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))["statusCode"] == 202
    fault = inject(tracker.aws.dynamodb(), "UpdateItem", "throttling")  # every attempt, botocore's retries included
    [first] = deliver(tracker)
    assert len(first["batchItemFailures"]) == 1 and job() is None
    fault.enabled = False
    [again] = deliver(tracker)  # the queue's visibility timeout is 0 here: it comes straight back
    assert again == {"batchItemFailures": []} and queued() == [29679449]


@pytest.mark.usefixtures("received_live")
def test_a_delivery_that_never_applies_ends_in_the_dead_letter_queue(tracker: Any) -> None:
    tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))
    inject(tracker.aws.dynamodb(), "UpdateItem", "5xx")
    for _ in range(MAX_RECEIVES + 1):
        deliver(tracker)
    sqs = boto3.client("sqs", region_name="us-east-1")
    [kept] = sqs.receive_message(QueueUrl=queue_url(DEAD_LETTERS), MessageAttributeNames=["All"])["Messages"]
    assert kept["MessageAttributes"]["delivery"]["StringValue"] == "72d3162e-cc78-11e3-81ab-4c9367dc0958"
    assert WorkflowJobEvent.model_validate_json(kept["Body"]).workflow_job.id == 29679449


def test_a_delivery_the_queue_does_not_take_is_not_acknowledged(tracker: Any) -> None:
    # The Function URL then answers 5xx, GitHub records the delivery as failed (to be redelivered), and
    # WebhookErrorsAlarm counts it: never a 2xx for an event nothing holds.
    inject(tracker.aws.sqs("us-east-1"), "SendMessage", "throttling")
    with pytest.raises(ClientError):
        tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))


@pytest.mark.parametrize(
    "spoil",
    [
        lambda e: e.update(body=e["body"].replace("linux.2xlarge", "linux.4xlarge")),  # tampered after signing
        lambda e: e["headers"].update({"x-hub-signature-256": sign("not-the-secret", e["body"].encode())}),
        lambda e: e["headers"].pop("x-hub-signature-256"),
        lambda e: e["headers"].update({"x-hub-signature-256": "sha256=" + "0" * 64}),
        lambda e: e["headers"].update({"x-hub-signature-256": "sha256=" + "é" * 64}),
        lambda e: e["headers"].update({"x-hub-signature-256": "sha256=\ud800" + "0" * 63}),
    ],
    ids=["tampered body", "wrong secret", "missing header", "forged digest", "non-ascii digest", "lone surrogate"],
)
def test_the_webhook_refuses_what_github_did_not_sign(tracker: Any, spoil: Any) -> None:
    event = load_event("webhook_workflow_job.json")
    spoil(event)
    assert tracker.webhook_handler(event, FakeContext("webhook"))["statusCode"] == 401
    assert waiting_deliveries() == 0


@pytest.mark.usefixtures("received_live")
def test_githubs_signature_over_a_non_ascii_body_is_accepted_and_a_tampered_one_refused(tracker: Any) -> None:
    # A Function URL passes a JSON body as text: the signature is over its UTF-8 bytes, as GitHub signs them.
    payload = json.loads(load_event("webhook_workflow_job.json")["body"])
    payload["repository"]["full_name"] = "équipe-zürich/ci-✓"
    payload["workflow_job"]["name"] = "tests (日本語, 🚀)"
    text = json.dumps(payload, ensure_ascii=False)
    event = load_event("webhook_workflow_job.json")
    event["body"] = text
    event["headers"]["x-hub-signature-256"] = "sha256=" + hmac.new(SECRET.encode(), text.encode(), "sha256").hexdigest()
    assert tracker.webhook_handler(copy.deepcopy(event), FakeContext("webhook"))["statusCode"] == 202
    deliver(tracker)
    item = job()
    assert item is not None and item["repo"]["S"] == "équipe-zürich/ci-✓"
    event["body"] = text.replace("zürich", "zurich")
    assert tracker.webhook_handler(event, FakeContext("webhook"))["statusCode"] == 401


@pytest.mark.usefixtures("received_live")
def test_a_redelivery_is_applied_once(tracker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    event = load_event("webhook_workflow_job.json")
    first = tracker.webhook_handler(copy.deepcopy(event), FakeContext("webhook"))
    again = tracker.webhook_handler(copy.deepcopy(event), FakeContext("webhook"))
    assert (first["statusCode"], again["statusCode"]) == (202, 202)
    deliver(tracker)
    assert queued() == [29679449]
    assert len([b for b in emf(capsys.readouterr().out) if "JobsQueued" in b]) == 1


def test_other_events_get_2xx_and_queue_nothing(tracker: Any) -> None:
    ping = signed(b'{"zen":"Keep it logically awesome."}', **{"x-github-event": "ping"})
    assert tracker.webhook_handler(ping, FakeContext("webhook"))["statusCode"] == 202
    assert waiting_deliveries() == 0


DEEP = 100_000


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b'{"action":"queued"}',
        b"\xff\xfe",
        b"[" * DEEP + b"]" * DEEP,
        b'{"a":' * DEEP + b"1" + b"}" * DEEP,
        webhook_body().replace(b'"labels":', b'"deep":' + b"[" * DEEP + b"]" * DEEP + b',"labels":', 1),
        b'{"action":"queued","workflow_job":{"id":1e999999}}',
        b'{"action":"\\ud800"}',
        b"",
        b"null",
    ],
    ids=["json", "shape", "utf-8", "deep array", "deep object", "deep in an ignored field", "huge number",
         "lone surrogate", "empty", "null"],
)  # fmt: skip
def test_a_signed_but_malformed_body_is_a_400_that_says_where(tracker: Any, body: bytes) -> None:
    event = signed(body)
    response = tracker.webhook_handler(event, FakeContext("webhook"))
    assert response["statusCode"] == 400 and "not a workflow_job payload" in json.loads(response["body"])["message"]
    assert waiting_deliveries() == 0


def test_a_body_over_githubs_limit_is_a_413(tracker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webhook_module, "MAX_BODY_BYTES", len(webhook_body()) - 1)
    response = tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))
    assert response["statusCode"] == 413 and waiting_deliveries() == 0


def test_job_metrics_are_off_unless_asked_for(
    tracker: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("JOB_METRICS")  # the template's default: the triage reads the jobs' history instead
    tracker.lambda_handler(load_event("track_queued.json"), FakeContext("track"))
    tracker.lambda_handler(load_event("track_in_progress.json"), FakeContext("track"))
    assert emf(capsys.readouterr().out) == [] and queued() == []  # the jobs are tracked all the same


# Signed by GitHub's own signing library (@octokit/webhooks-methods), made once offline: see "generator".
OCTOKIT = json.loads((REPO_ROOT / "tests" / "integration" / "octokit_signed.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("signed_by_octokit", OCTOKIT["deliveries"], ids=["workflow_job", "ascii", "non-ascii"])
def test_signatures_made_by_githubs_library_verify_and_tampering_does_not(signed_by_octokit: dict[str, str]) -> None:
    body, header = signed_by_octokit["body"].encode(), signed_by_octokit["signature"]
    assert OCTOKIT["secret"] == SECRET and signature_valid(SECRET, body, header)
    assert not signature_valid(SECRET, body.replace(b"e", b"\xc3\xa9", 1), header)


@pytest.mark.usefixtures("received_live")
def test_a_non_ascii_workflow_job_signed_by_githubs_library_is_queued_and_applied(tracker: Any) -> None:
    [signed_by_octokit, *_] = OCTOKIT["deliveries"]
    event = load_event("webhook_workflow_job.json")
    event["body"] = signed_by_octokit["body"]  # a Function URL passes a JSON body as text
    event["headers"]["x-hub-signature-256"] = signed_by_octokit["signature"]
    assert tracker.webhook_handler(copy.deepcopy(event), FakeContext("webhook"))["statusCode"] == 202
    deliver(tracker)
    item = job(job_id=29679451)
    assert item is not None and item["repo"]["S"] == "équipe-zürich/ci-✓"
    event["body"] = event["body"].replace("zürich", "zurich")
    assert tracker.webhook_handler(event, FakeContext("webhook"))["statusCode"] == 401


class Clock(datetime):
    """The handlers' clock, set by the test: datetime.now(UTC) answers `at`."""

    at = datetime(2026, 11, 21, 16, 6, tzinfo=UTC)

    @classmethod
    def now(cls, tz: Any = None) -> Clock:
        return cls.fromtimestamp(cls.at.timestamp(), tz)


@pytest.fixture
def received_live(tracker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The webhook's clock at the moment GitHub sent events/webhook_workflow_job.json (its job was created at
    16:06:00): a delivery received when it happened, not a redelivery of the past (test_recovery.py)."""
    monkeypatch.setattr(tracker, "datetime", Clock)
    monkeypatch.setattr(Clock, "at", datetime(2026, 11, 21, 16, 6, 2, tzinfo=UTC))


def webhook_delivery(action: str, delivery: str, **job: Any) -> dict[str, Any]:
    """events/webhook_workflow_job.json as GitHub would send it for `action`, signed again."""
    body = json.loads(webhook_body())
    body["action"] = action
    body["workflow_job"].update(job)
    return signed(json.dumps(body).encode(), **{"x-github-delivery": delivery})


def test_an_approval_wait_through_the_webhook_is_not_queue_time(
    tracker: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The webhook's body carries no time: a job that waited for approval was queued when the webhook received
    its queued event, which the queue's message carries to the consumer, not when the consumer applied it."""
    created = datetime(2026, 11, 21, 16, 6, tzinfo=UTC)  # the body's created_at
    approved, started = created + timedelta(minutes=30), created + timedelta(minutes=30, seconds=50)
    monkeypatch.setattr(tracker, "datetime", Clock)
    Clock.at = created + timedelta(seconds=1)
    assert tracker.webhook_handler(webhook_delivery("waiting", "d-1"), FakeContext("webhook"))["statusCode"] == 202
    Clock.at = approved
    assert tracker.webhook_handler(webhook_delivery("queued", "d-2"), FakeContext("webhook"))["statusCode"] == 202
    Clock.at = approved + timedelta(minutes=10)  # the consumer applies both 10 minutes later (a backlog)
    deliver(tracker)
    [waiting] = queued_jobs(boto3.client("dynamodb", region_name="us-east-1"), TABLE)
    assert waiting.queued_at == approved  # its receipt, not its creation nor when it was applied

    Clock.at = started + timedelta(seconds=1)  # GitHub sends it as the job starts
    assert tracker.webhook_handler(
        webhook_delivery("in_progress", "d-3", status="in_progress", started_at=started.isoformat(), runner_name="i-1"),
        FakeContext("webhook"),
    )["statusCode"] == 202  # fmt: skip
    deliver(tracker)
    waits = [b["JobQueueTime"] for b in emf(capsys.readouterr().out) if "JobQueueTime" in b]
    assert waits == [[50]]  # not 30m50s, nor the backlog's 10 minutes


FORM = "application/x-www-form-urlencoded"


@pytest.mark.parametrize("as_base64", [True, False], ids=["base64", "text"])
@pytest.mark.usefixtures("received_live")
def test_a_form_delivery_signed_as_github_signs_it_is_queued_and_applied(
    tracker: Any, capsys: pytest.CaptureFixture[str], as_base64: bool
) -> None:
    """GitHub's default content type: the body is `payload=<the JSON, form-encoded>`, signed over exactly those
    bytes (here by GitHub's own signing library, see "form_generator")."""
    [form] = OCTOKIT["form_deliveries"]
    event = load_event("webhook_workflow_job.json")
    body = form["body"].encode()
    event.update(body=base64.b64encode(body).decode() if as_base64 else form["body"], isBase64Encoded=as_base64)
    event["headers"].update({"content-type": form["content_type"], "x-hub-signature-256": form["signature"]})
    response = tracker.webhook_handler(copy.deepcopy(event), FakeContext("webhook"))
    assert response["statusCode"] == 202 and json.loads(response["body"])["job_id"] == 29679452
    deliver(tracker)
    item = job(job_id=29679452)
    assert item is not None and item["repo"]["S"] == "équipe-zürich/ci-✓" and queued() == [29679452]
    # The signature is over the raw form, not the JSON inside it: one changed byte of the form is refused.
    tampered = form["body"].replace("z%C3%BCrich", "zurich")
    assert tampered != form["body"]
    event.update(body=tampered, isBase64Encoded=False)
    assert tracker.webhook_handler(event, FakeContext("webhook"))["statusCode"] == 401
    counted = [
        (b.get("Reason"), name) for b in emf(capsys.readouterr().out) for name in b if name.startswith("Webhook")
    ]
    assert counted == [(None, "WebhookDeliveriesTaken"), ("signature", "WebhookDeliveriesRefused")]


def form_signed(body: bytes) -> dict[str, Any]:
    return signed(body, **{"content-type": f"{FORM}; charset=utf-8"})


@pytest.mark.parametrize(
    ("spoil", "status", "reason"),
    [
        (lambda e: e["headers"].update({"x-hub-signature-256": sign("rotated", webhook_body())}), 401, "signature"),
        (lambda e: e["headers"].pop("x-hub-signature-256"), 401, "signature"),
        (lambda e: e["headers"].update({"content-type": "text/plain"}), 415, "content-type"),
        (lambda e: e.update(form_signed(b"payload=%7Bnot+json")), 400, "parse"),
        (lambda e: e.update(form_signed(b"other=1&payload=" + quote(webhook_body()).encode())), 400, "parse"),
        (lambda e: e.update(form_signed(webhook_body())), 400, "parse"),  # JSON sent as a form
        (lambda e: e.update(signed(b"{not json")), 400, "parse"),
        (lambda e: e.update(body="not base64!", isBase64Encoded=True), 400, "parse"),
        (lambda e: e["headers"].pop("x-github-delivery"), 400, "parse"),
        (lambda e: setattr(webhook_module, "MAX_BODY_BYTES", 10), 413, "size"),
    ],
    ids=["wrong secret", "unsigned", "content type", "form not json", "form of two fields", "json as form",
         "json", "base64", "no delivery id", "size"],
)  # fmt: skip
def test_every_refusal_is_counted_by_its_reason_and_queues_nothing(
    tracker: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    spoil: Any,
    status: int,
    reason: str,
) -> None:
    monkeypatch.setattr(webhook_module, "MAX_BODY_BYTES", webhook_module.MAX_BODY_BYTES)  # restored after
    event = load_event("webhook_workflow_job.json")
    spoil(event)
    assert tracker.webhook_handler(event, FakeContext("webhook"))["statusCode"] == status
    assert waiting_deliveries() == 0
    [refused] = [b for b in emf(capsys.readouterr().out) if "WebhookDeliveriesRefused" in b]
    assert (refused["Reason"], refused["Stack"], refused["WebhookDeliveriesRefused"]) == (reason, "test", [1])


@pytest.mark.parametrize("body", ["{not json", '{"action":"queued"}', ""], ids=["json", "shape", "empty"])
@pytest.mark.usefixtures("received_live")
def test_an_unparsable_record_on_the_webhook_queue_is_refused_and_counted_never_retried(
    tracker: Any, capsys: pytest.CaptureFixture[str], body: str
) -> None:
    """Retrying cannot make a body parse: the record is acknowledged (not a batch item failure), counted as a
    refused event, and never comes back nor reaches the dead-letter queue, whose alarm would page for nothing."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.send_message(
        QueueUrl=queue_url(),
        MessageBody=body or " ",  # SQS refuses an empty body; a blank one is as unparsable
        MessageAttributes={"delivery": {"DataType": "String", "StringValue": "d-1"}},
    )
    tracker.webhook_handler(load_event("webhook_workflow_job.json"), FakeContext("webhook"))  # a good one beside it
    responses = [response for _ in range(MAX_RECEIVES + 1) for response in deliver(tracker)]
    assert responses == [{"batchItemFailures": []}]  # one batch, both acknowledged; nothing comes back
    assert queued() == [29679449] and waiting_deliveries() == 0
    dead = sqs.get_queue_attributes(QueueUrl=queue_url(DEAD_LETTERS), AttributeNames=["ApproximateNumberOfMessages"])
    assert dead["Attributes"]["ApproximateNumberOfMessages"] == "0"
    refused = [b for b in emf(capsys.readouterr().out) if "JobEventsRefused" in b]
    assert [(b["JobEventsRefused"], b["Stack"]) for b in refused] == [([1], "test")]
