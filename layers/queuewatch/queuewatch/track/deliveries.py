"""The webhook's deliveries, applied from its queue: each SQS record is one workflow_job event.

An event that fails to apply (a throttled write, any error) is reported as a batch item failure: SQS
makes it visible again, and past the queue's receive limit keeps it in the dead-letter queue, whose
alarm pages the monitor topic. An event that can never apply is refused and counted, not retried.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from queuewatch.adapters.deliveries import DELIVERY_ATTRIBUTE, RECEIVED_ATTRIBUTE
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.jobs import DEFAULT_HISTORY
from queuewatch.track.routing import Router
from queuewatch.track.stage import TrackResult, track

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


@dataclass
class Applied:
    """What one batch did: each record's result, and the message ids to be retried."""

    results: list[tuple[str, TrackResult]] = field(default_factory=list)  # (delivery, result)
    failed: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (delivery, why), for the log

    def response(self) -> dict[str, list[dict[str, str]]]:
        """Lambda's partial batch response (FunctionResponseTypes: ReportBatchItemFailures)."""
        return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in self.failed]}


def received_at(record: Mapping[str, Any]) -> datetime | None:
    """When the webhook received the record's event: the time it put on the message, else when SQS took
    the message (a message queued without it), else None. GitHub's body carries no time of the event."""
    attributes = record.get("messageAttributes") or {}
    stamped = (attributes.get(RECEIVED_ATTRIBUTE) or {}).get("stringValue")
    if isinstance(stamped, str):
        try:
            moment = datetime.fromisoformat(stamped)
        except ValueError:
            moment = None
        if moment is not None and moment.tzinfo is not None:
            return moment.astimezone(UTC)
    sent = (record.get("attributes") or {}).get("SentTimestamp")
    if isinstance(sent, str) and sent.isdigit():
        return datetime.fromtimestamp(int(sent) / 1000, UTC)
    return None


def apply_deliveries(
    records: Iterable[Mapping[str, Any]],
    router: Router,
    dynamodb: DynamoDBClient,
    table: str,
    now: datetime,
    *,
    history: timedelta = DEFAULT_HISTORY,
) -> Applied:
    """Apply each record's event as of its receipt (received_at): a job that waited for approval was queued
    when the webhook received its queued event, not when this batch ran."""
    applied = Applied()
    for record in records:
        message_id = str(record.get("messageId", ""))
        attributes = record.get("messageAttributes") or {}
        delivery = str((attributes.get(DELIVERY_ATTRIBUTE) or {}).get("stringValue", message_id))
        try:
            event = WorkflowJobEvent.model_validate_json(str(record.get("body", "")))
        except ValidationError as error:
            # The webhook queued only what parsed; a body that does not is not made right by retrying.
            first = error.errors(include_input=False, include_url=False)[0]
            reason = f"not a workflow_job event: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
            applied.results.append((delivery, TrackResult(outcome="refused", action="", job_id=None, reason=reason)))
            continue
        try:
            result = track(
                event, router, dynamodb, table, now, occurred_at=received_at(record), history=history, received=True
            )
            applied.results.append((delivery, result))
        except Exception as error:  # noqa: BLE001 - any failure is retried by SQS, then dead-lettered
            applied.failed.append(message_id)
            applied.errors.append((delivery, f"{type(error).__name__}: {error}"))
    return applied
