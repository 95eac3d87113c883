"""The webhook's deliveries, applied from its queue: each SQS record is one workflow_job event.

An event that fails to apply (a throttled write, any error) is reported as a batch item failure: SQS
makes it visible again, and past the queue's receive limit keeps it in the dead-letter queue, whose
alarm pages the monitor topic. An event that can never apply is refused and counted, not retried.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from queuewatch.adapters.deliveries import DELIVERY_ATTRIBUTE
from queuewatch.track.events import WorkflowJobEvent
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


def apply_deliveries(
    records: Iterable[Mapping[str, Any]], router: Router, dynamodb: DynamoDBClient, table: str, now: datetime
) -> Applied:
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
            applied.results.append((delivery, track(event, router, dynamodb, table, now)))
        except Exception as error:  # noqa: BLE001 - any failure is retried by SQS, then dead-lettered
            applied.failed.append(message_id)
            applied.errors.append((delivery, f"{type(error).__name__}: {error}"))
    return applied
