"""Recovery never pages the past: after an outage of job tracking, the missed events sent again (GitHub's
redeliveries through the webhook; `queuewatch track backfill`, the bus archive's replay), in any order and twice,
fill the jobs' history, and no tick in between pages about jobs that finished long ago.

Defect reproduced: redelivered in event order, each `queued` went into the queued partition until its
`in_progress` came, and a tick in between paged "3 queued, oldest 1h2m" about jobs that each waited 2 minutes
an hour earlier."""

from __future__ import annotations

import base64
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from support import StackInMoto

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.deliveries import send_delivery
from queuewatch.adapters.jobs_table.jobs import read_history
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.signature import sign
from queuewatch_cli.devkit.handlers import FakeContext, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_jobs_table

JOBS, SECRET, DELIVERIES = "jobs", "recovery-secret", "webhook-deliveries"
TRACKED = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, for: 0s, priority: P2}
"""
ACTIONS = ("queued", "in_progress", "completed")
JOB_IDS = (101, 102, 103)
WAITED = timedelta(minutes=2)  # each job's queue time, an hour before the recovery
RAN = timedelta(minutes=5)


@pytest.fixture
def tracker(aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    path = tmp_path / "queuewatch.yaml"
    path.write_text(TRACKED)
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.create_queue(QueueName="gh-ci-linux-2xlarge-queued-builds")  # the autoscaler's, empty: nothing waits
    deliveries = sqs.create_queue(QueueName=DELIVERIES, Attributes={"VisibilityTimeout": "0"})["QueueUrl"]
    secret = boto3.client("secretsmanager", region_name="us-east-1").create_secret(Name="gh", SecretString=SECRET)
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS)
    settings = {
        "QUEUEWATCH_CONFIG": str(path),
        "JOBS_TABLE": JOBS,
        "STACK_NAME": "test",
        "JOB_METRICS": "on",  # on, to check that no figure of the past is emitted as if it happened now
        "WEBHOOK_SECRET_ARN": secret["ARN"],
        "WEBHOOK_QUEUE_URL": deliveries,
    }
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    return load_handler_module("track")


@pytest.fixture
def stack(tracker: Any) -> StackInMoto:
    return StackInMoto.create()


def tick(stack: StackInMoto, now: datetime) -> tuple[float | None, list[str]]:
    """The collector and the evaluator on the jobs table at `now`: the queue size judged, and what paged."""
    config = parse_config(TRACKED, source="t.yaml")
    snap = collect(
        config, AwsClients(), now=now, account_id="123456789012", snapshot_id=f"s{now:%H%M%S%f}", jobs_table=JOBS
    )
    result = stack.evaluate(snap, config, clock=lambda: now)
    [observed] = snap.runner_types
    return observed.value(SignalName.QUEUE_SIZE), [str(key) for key in result.firing]


def job_times(job_id: int, created: datetime) -> dict[str, Any]:
    started, completed = created + WAITED, created + WAITED + RAN
    return {"id": job_id, "created_at": created, "started_at": started, "completed_at": completed}


def webhook_delivery(action: str, job_id: int, created: datetime) -> dict[str, Any]:
    """GitHub's delivery of the job's `action`, as the Function URL passes it, signed."""
    event = load_event("webhook_workflow_job.json")
    body = json.loads(event["body"])
    times = job_times(job_id, created)
    job = body["workflow_job"]
    job.update(id=job_id, status=action, created_at=times["created_at"].isoformat())
    job.update(started_at=(times["started_at"] if action != "queued" else times["created_at"]).isoformat())
    job.update(completed_at=times["completed_at"].isoformat() if action == "completed" else None)
    job.update(runner_name=None if action == "queued" else "i-0123456789abcdef0")
    body["action"] = action
    raw = json.dumps(body).encode()
    event.update(body=base64.b64encode(raw).decode(), isBase64Encoded=True)
    event["headers"].update({"x-hub-signature-256": sign(SECRET, raw), "x-github-delivery": f"{job_id}-{action}"})
    return event


def deliver(tracker: Any) -> None:
    """What Lambda's event source mapping does with the webhook's queue: every record applied, then deleted."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.get_queue_url(QueueName=DELIVERIES)["QueueUrl"]
    while messages := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"], AttributeNames=["All"]
    ).get("Messages", []):
        records = [
            {
                "messageId": m["MessageId"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {
                    k: {"stringValue": v["StringValue"], "dataType": v["DataType"]}
                    for k, v in m.get("MessageAttributes", {}).items()
                },
            }
            for m in messages
        ]
        assert tracker.deliveries_handler({"Records": records}, FakeContext("deliveries"))["batchItemFailures"] == []
        for m in messages:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def in_event_order() -> list[tuple[str, int]]:
    return [(action, job_id) for action in ACTIONS for job_id in JOB_IDS]


def orders() -> dict[str, list[tuple[str, int]]]:
    shuffled = in_event_order() * 2  # and every delivery twice
    random.Random(25).shuffle(shuffled)
    return {
        "event order": in_event_order(),
        "reversed": in_event_order()[::-1],
        "queued last": [(a, j) for a, j in in_event_order() if a != "queued"] + [("queued", j) for j in JOB_IDS],
        "shuffled, twice": shuffled,
    }


def assert_history_filled(now: datetime, created: datetime) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    jobs = list(read_history(dynamodb, JOBS, now - timedelta(hours=3), now, ["linux.2xlarge"]))
    assert sorted(j.job_id for j in jobs) == list(JOB_IDS)
    assert {(j.status, j.queue_seconds, j.run_seconds) for j in jobs} == {
        ("completed", WAITED.total_seconds(), RAN.total_seconds())
    }
    assert all(j.queued_at == created for j in jobs)


@pytest.mark.parametrize("order", list(orders().values()), ids=list(orders()))
def test_redelivered_webhook_deliveries_in_any_order_fill_the_history_and_page_nothing(
    tracker: Any, stack: StackInMoto, capsys: pytest.CaptureFixture[str], order: list[tuple[str, int]]
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)  # the handlers read the wall clock
    created = now - timedelta(hours=1, minutes=2)  # each job waited 2 minutes an hour ago; the webhook was down
    for action, job_id in order:
        response = tracker.webhook_handler(webhook_delivery(action, job_id, created), FakeContext("webhook"))
        assert response["statusCode"] == 202
        deliver(tracker)
        assert tick(stack, datetime.now(UTC)) == (0, []), f"after {action} of job {job_id}"
    assert_history_filled(now, created)
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    job_figures = {"JobsQueued", "JobQueueTime", "JobRunTime"}
    assert not [b for b in blobs if job_figures & set(b)]  # nothing of an hour ago emitted as if it happened now


def test_an_approved_jobs_deliveries_redelivered_newest_first_page_nothing(tracker: Any, stack: StackInMoto) -> None:
    """A job that waited for approval: its queued delivery carries no time of the approval, so the recovery
    procedure redelivers newest first (tracking.md), as the hook's Recent Deliveries lists them, and its furthest
    event arrives first: no tick counts it as queued."""
    now = datetime.now(UTC).replace(microsecond=0)
    created = now - timedelta(hours=1, minutes=2)
    for action in ("completed", "in_progress", "queued", "waiting"):
        delivery = webhook_delivery("queued" if action == "waiting" else action, 101, created)
        if action == "waiting":
            body = json.loads(base64.b64decode(delivery["body"]))
            body["action"], body["workflow_job"]["status"] = "waiting", "waiting"
            raw = json.dumps(body).encode()
            delivery.update(body=base64.b64encode(raw).decode())
            delivery["headers"].update({"x-hub-signature-256": sign(SECRET, raw), "x-github-delivery": "101-waiting"})
        assert tracker.webhook_handler(delivery, FakeContext("webhook"))["statusCode"] == 202
        deliver(tracker)
        assert tick(stack, datetime.now(UTC)) == (0, []), f"after {action}"
    [job] = read_history(boto3.client("dynamodb", region_name="us-east-1"), JOBS, now - timedelta(hours=3), now,
                         ["linux.2xlarge"])  # fmt: skip
    assert (job.status, job.queue_seconds) == ("completed", WAITED.total_seconds())


def test_a_live_delivery_still_pages(tracker: Any, stack: StackInMoto) -> None:
    """The same door, live: a job queued a minute ago and still waiting is watched and pages."""
    now = datetime.now(UTC).replace(microsecond=0)
    tracker.webhook_handler(webhook_delivery("queued", 201, now - timedelta(minutes=2)), FakeContext("webhook"))
    deliver(tracker)
    assert tick(stack, datetime.now(UTC)) == (1, ["jobs-queueing#linux.2xlarge"])


def bus_event(action: str, job_id: int, created: datetime, replay: bool = True) -> dict[str, Any]:
    """The job's event as the autoscaler's bus carried it, with the time it happened; from the backfill's replay
    of the archive (EventBridge marks it with replay-name) if `replay`."""
    event = load_event("track_in_progress.json" if action != "queued" else "track_queued.json")
    times = job_times(job_id, created)
    job = event["detail"]["workflow_job"]
    job.update(id=job_id, created_at=times["created_at"].isoformat())
    job.update(started_at=(times["started_at"] if action != "queued" else times["created_at"]).isoformat())
    job.update(completed_at=times["completed_at"].isoformat() if action == "completed" else None)
    job.update(runner_name=None if action == "queued" else "i-0123456789abcdef0")
    event["detail"]["action"] = action
    moment = {"queued": "created_at", "in_progress": "started_at", "completed": "completed_at"}[action]
    event["time"] = times[moment].isoformat()
    if replay:
        event["replay-name"] = "queuewatch-backfill-0123456789ab"
    return event


@pytest.mark.parametrize("order", list(orders().values()), ids=list(orders()))
def test_a_backfill_over_an_outage_in_any_order_pages_nothing(
    tracker: Any, stack: StackInMoto, order: list[tuple[str, int]]
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    created = now - timedelta(hours=1, minutes=2)
    for action, job_id in order:
        tracker.lambda_handler(bus_event(action, job_id, created), FakeContext("track"))
        assert tick(stack, datetime.now(UTC)) == (0, []), f"after {action} of job {job_id}"
    assert_history_filled(now, created)


def test_the_bus_own_late_delivery_is_live(tracker: Any, stack: StackInMoto) -> None:
    """Not replayed, it is the bus's own delivery (Lambda retries it for 10 minutes at most, template.yaml)."""
    now = datetime.now(UTC).replace(microsecond=0)
    event = bus_event("queued", 301, now - timedelta(minutes=9), replay=False)
    result = tracker.lambda_handler(event, FakeContext("track"))
    assert result["history"] is False
    assert tick(stack, datetime.now(UTC)) == (1, ["jobs-queueing#linux.2xlarge"])


def test_the_webhook_dead_letter_queue_redriven_after_an_outage_pages_nothing(tracker: Any, stack: StackInMoto) -> None:
    """Deliveries the webhook acknowledged but could not apply (the table was unreachable for an hour), redriven
    to its queue once fixed: each keeps the time the webhook received it, an hour ago, and is the job's history."""
    now = datetime.now(UTC).replace(microsecond=0)
    created = now - timedelta(hours=1, minutes=2)
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.get_queue_url(QueueName=DELIVERIES)["QueueUrl"]
    for action, job_id in in_event_order():
        delivery = webhook_delivery(action, job_id, created)
        event = WorkflowJobEvent.model_validate_json(base64.b64decode(delivery["body"]))
        moment = job_times(job_id, created)[
            {"queued": "created_at", "in_progress": "started_at"}.get(action, "completed_at")
        ]
        send_delivery(sqs, url, f"{job_id}-{action}", event.model_dump_json(exclude_none=True), received_at=moment)
        deliver(tracker)
        assert tick(stack, datetime.now(UTC)) == (0, []), f"after {action} of job {job_id}"
    assert_history_filled(now, created)
