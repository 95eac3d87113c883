"""Lambda destination records: the sample events parse, and each becomes a snapshot or a failed collection."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import ValidationError

from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import CollectorFailure, Snapshot
from queuewatch.runtime.wire import DestinationRecord, observation_from

EVENTS = Path(__file__).resolve().parents[2] / "events"


def event(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / name).read_text(encoding="utf-8"))
    return document


@pytest.mark.parametrize(("name", "succeeded"), [("evaluate_success.json", True), ("evaluate_failure.json", False)])
def test_sample_destination_records_parse(name: str, succeeded: bool) -> None:
    record = DestinationRecord.model_validate(event(name))
    assert record.succeeded is succeeded
    assert record.request_context.function_arn.startswith("arn:aws:lambda:")
    assert record.timestamp.tzinfo is not None


def test_a_success_record_carries_the_snapshot() -> None:
    observation = observation_from(DestinationRecord.model_validate(event("evaluate_success.json")))
    assert isinstance(observation, Snapshot)
    by_name = {r.name: r for r in observation.runner_types}
    assert len(by_name) == 3
    assert by_name["linux.2xlarge"].value(SignalName.QUEUE_SIZE) == 14
    assert by_name["linux.2xlarge"].value(SignalName.QUEUE_TIME) == 6840
    assert by_name["linux.g5.4xlarge.nvidia.gpu"].team == "gpu-infra"


def test_a_failure_record_is_a_failed_collection_timed_by_its_tick() -> None:
    observation = observation_from(DestinationRecord.model_validate(event("evaluate_failure.json")))
    assert isinstance(observation, CollectorFailure)
    assert observation.error_type == "Sandbox.Timedout"
    assert "Task timed out" in observation.error_message
    assert observation.request_id == "0d7e3b5a-2c4f-4a9e-b1d6-8f3a6c2e9b47"
    # The scheduled event's time, not the later time the record was written.
    assert observation.at == datetime(2026, 11, 21, 18, 1, tzinfo=UTC)


def test_a_failure_without_an_error_payload_is_still_a_failed_collection() -> None:
    document = event("evaluate_failure.json")
    document["responsePayload"] = None
    document["requestPayload"] = None
    document["requestContext"]["condition"] = "EventAgeExceeded"
    observation = observation_from(DestinationRecord.model_validate(document))
    assert isinstance(observation, CollectorFailure)
    assert observation.error_message == "EventAgeExceeded"
    assert observation.at == datetime(2026, 11, 21, 18, 3, 5, 118000, tzinfo=UTC)


@pytest.mark.parametrize(
    "payload",
    [None, {"statusCode": 200, "body": "ok"}, {"snapshot_id": "s", "collected_at": "not a time", "runner_types": []}],
    ids=["none", "other-shape", "bad-snapshot"],
)
def test_a_success_record_without_a_snapshot_is_rejected(payload: object) -> None:
    document = event("evaluate_success.json")
    document["responsePayload"] = payload
    with pytest.raises(ValueError, match="responsePayload"):
        observation_from(DestinationRecord.model_validate(document))


def damaged(change: str) -> dict[str, Any]:
    document = event("evaluate_success.json")
    context = document["requestContext"]
    if change == "condition":
        context["condition"] = "Failure"
    elif change == "no-request-context":
        del document["requestContext"]
    elif change == "no-request-id":
        del context["requestId"]
    elif change == "not-a-lambda-arn":
        context["functionArn"] = "arn:aws:sqs:us-east-1:123456789012:q"
    elif change == "zero-invokes":
        context["approximateInvokeCount"] = 0
    elif change == "version":
        document["version"] = "2.0"
    elif change == "naive-timestamp":
        document["timestamp"] = "2026-11-21T18:00:03"
    return document


@pytest.mark.parametrize(
    "change",
    [
        "condition",
        "no-request-context",
        "no-request-id",
        "not-a-lambda-arn",
        "zero-invokes",
        "version",
        "naive-timestamp",
    ],
)
def test_a_malformed_record_fails_validation(change: str) -> None:
    with pytest.raises(ValidationError):
        DestinationRecord.model_validate(damaged(change))


def test_the_scheduled_collect_event_is_an_eventbridge_event() -> None:
    scheduled = EventBridgeModel.model_validate(event("collect_scheduled.json"))
    assert scheduled.detail_type == "Scheduled Event"
    assert scheduled.source == "aws.events"
    assert scheduled.time == datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
