"""The track stage: apply one workflow_job event to the jobs table."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from queuewatch.adapters.job_store import put_job
from queuewatch.frozen import FrozenModel
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.jobs import PROGRESS, record_of
from queuewatch.track.routing import Router

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

# A replayed event this far in the past tells the job's history, not what waits now: a live event reaches the
# stage within minutes, so an older one is the archive's (the evaluator refuses ticks this old too).
HISTORY_AFTER = timedelta(minutes=15)


class TrackResult(FrozenModel):
    """What one event did; the handler returns it and turns it into metrics."""

    outcome: Literal["applied", "duplicate", "ignored"]
    action: str
    job_id: int
    status: str | None = None
    runner_type: str | None = None
    label_set: str | None = None
    arrived: bool = False  # first seen queued, or further along
    queue_seconds: float | None = None
    run_seconds: float | None = None
    history: bool = False  # a replayed event of the past: stored as history, never queued now, no metrics


def track(
    event: WorkflowJobEvent,
    router: Router,
    dynamodb: DynamoDBClient,
    table: str,
    now: datetime,
    replayed_from: datetime | None = None,
) -> TrackResult:
    """Store the job's state when the event moves it on; a duplicate or late event changes nothing.
    A failed write raises, so that Lambda retries the event (and, past its retries, keeps it in the DLQ).
    An event replayed from an archive (`replayed_from`: when it first happened) more than HISTORY_AFTER ago is
    the job's history: stored, but never in the queued index, so no tick counts a job of hours ago as waiting
    between its replayed queued and in_progress; and none of its figures is emitted as if it happened now."""
    record = record_of(event, router, now)
    if record is None:
        return TrackResult(outcome="ignored", action=event.action, job_id=event.workflow_job.id)
    history = replayed_from is not None and now - replayed_from > HISTORY_AFTER
    if history:
        record = record.model_copy(update={"history_only": True})
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
        label_set=record.label_set,
        arrived=arrived,
        queue_seconds=record.queue_seconds if first_start else None,
        run_seconds=record.run_seconds if applied and record.status == "completed" else None,
        history=history,
    )
