"""The track stage: apply one workflow_job event to the jobs table."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from queuewatch.adapters.job_store import put_job
from queuewatch.frozen import FrozenModel
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.jobs import PROGRESS, UnusableEvent, record_of
from queuewatch.track.routing import Router

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class TrackResult(FrozenModel):
    """What one event did; the handler returns it and turns it into metrics."""

    outcome: Literal["applied", "duplicate", "ignored", "refused"]
    action: str
    job_id: int | None  # None: the event did not say which job
    reason: str | None = None  # why it was refused
    status: str | None = None
    runner_type: str | None = None
    candidate: bool = False  # runner_type is a discovered name the collector has yet to confirm it watches
    label_set: str | None = None
    arrived: bool = False  # first seen queued, or further along
    queue_seconds: float | None = None
    run_seconds: float | None = None


def track(event: WorkflowJobEvent, router: Router, dynamodb: DynamoDBClient, table: str, now: datetime) -> TrackResult:
    """Store the job's state when the event moves it on; a duplicate or late event changes nothing.
    A failed write raises, so that Lambda retries the event (and, past its retries, keeps it in the DLQ);
    an event that can never be applied is refused, and said, not retried."""
    try:
        record = record_of(event, router, now)
    except UnusableEvent as error:
        return TrackResult(outcome="refused", action=event.action, job_id=event.workflow_job.id, reason=str(error))
    if record is None:
        return TrackResult(outcome="ignored", action=event.action, job_id=event.workflow_job.id)
    before = put_job(dynamodb, table, record)
    applied = before is not None
    # Each figure once per job, from the write that first got that far, whichever event it was: a job
    # whose queued event came after its in_progress still arrived, and a completed that overtook its
    # in_progress still gives the queue time.
    arrived = before is not None and before < PROGRESS["queued"] <= record.progress
    first_start = before is not None and before < PROGRESS["in_progress"] <= record.progress
    return TrackResult(
        outcome="applied" if applied else "duplicate",
        action=event.action,
        job_id=record.job_id,
        status=record.status,
        runner_type=record.runner_type,
        candidate=record.runner_type is not None and not router.configured(record.runner_type),
        label_set=record.label_set,
        arrived=arrived,
        # An older payload without created_at: how long it queued is unknown, not 0.
        queue_seconds=record.queue_seconds if first_start and event.workflow_job.created_at else None,
        run_seconds=record.run_seconds if applied and record.status == "completed" else None,
    )
