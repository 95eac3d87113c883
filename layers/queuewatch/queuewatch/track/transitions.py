"""A job's state as the events move it: the write one event asks for, and what that write changed.

A job only moves forward: waiting -> queued -> in_progress -> completed. The store applies a write
only if it moves the job further than the stored item (a conditional write on STATUS_RANK), so
duplicates, retries and events out of order converge on the furthest state whatever their order:
an in_progress before its queued leaves the job not queued; a completed job never comes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.errors import QueuewatchError
from queuewatch.track.payload import WorkflowJobEvent
from queuewatch.track.schema import (
    COMPLETED_EXPIRY,
    IN_PROGRESS_EXPIRY,
    QUEUED_EXPIRY,
    STATUS_RANK,
    WAITING_EXPIRY,
    JobStatus,
    label_set,
)

# GitHub's clock and ours differ by seconds; a job created further ahead than this is a bad event.
FUTURE_TOLERANCE = timedelta(minutes=15)


class TrackInputError(QueuewatchError):
    """An event the track stage cannot apply: not a workflow_job, or not a plausible one."""


@dataclass(frozen=True, slots=True)
class JobWrite:
    """The item one event asks for; the store writes it only if `rank` is above the stored item's."""

    job_id: int
    status: JobStatus
    rank: int
    runner_type: str | None
    labels: tuple[str, ...]
    label_set: str
    org: str
    repo: str
    run_id: int
    html_url: str
    created_at: datetime
    started_at: datetime | None
    completed_at: datetime | None
    has_runner: bool
    updated_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class Previous:
    """What the stored item was before a write took effect (None: there was none)."""

    rank: int | None
    started_at: datetime | None


@dataclass(frozen=True, slots=True)
class Effects:
    """What a write that took effect tells the metrics, each at most once per job."""

    arrived: bool  # first seen queued or further
    queue_time: float | None  # seconds, when the write first gives the job its start
    run_time: float | None  # seconds, when the write completes a job that ran


def plan_write(event: WorkflowJobEvent, runner_type: str | None, now: datetime) -> JobWrite | None:
    """The write this event asks for; None when it asks for none: an action this version does not know,
    or a queued or waiting job past GitHub's limit (a replayed old event must not queue it again)."""
    status = event.status
    if status is None:
        return None
    job = event.workflow_job
    if job.created_at > now + FUTURE_TOLERANCE:
        raise TrackInputError(
            f"workflow_job {job.id}: created_at {job.created_at.isoformat()} is more than "
            f"{int(FUTURE_TOLERANCE.total_seconds() // 60)} minutes ahead of this function's clock "
            f"({now.isoformat()}); expected a job that exists already"
        )
    started = job.started_at if status in ("in_progress", "completed") else None
    completed = (job.completed_at or now) if status == "completed" else None
    expires = _expiry(status, job.created_at, started, completed, now)
    if expires <= now:
        return None
    return JobWrite(
        job_id=job.id,
        status=status,
        rank=STATUS_RANK[status],
        runner_type=runner_type,
        labels=tuple(job.labels),
        label_set=label_set(job.labels),
        org=event.org,
        repo=event.repository.full_name,
        run_id=job.run_id,
        html_url=job.html_url,
        created_at=job.created_at,
        started_at=started,
        completed_at=completed,
        has_runner=job.has_runner,
        updated_at=now,
        expires_at=expires,
    )


def _expiry(
    status: JobStatus, created: datetime, started: datetime | None, completed: datetime | None, now: datetime
) -> datetime:
    # A started or completed item outlives the queued limit: it is the tombstone that keeps a late or
    # replayed queued event for the same job from queueing it again.
    tombstone = created + QUEUED_EXPIRY
    if status == "waiting":
        return created + WAITING_EXPIRY
    if status == "queued":
        return tombstone
    if status == "in_progress":
        return max((started or now) + IN_PROGRESS_EXPIRY, tombstone, now + COMPLETED_EXPIRY)
    return max((completed or now) + COMPLETED_EXPIRY, tombstone, now + COMPLETED_EXPIRY)


def effects(write: JobWrite, previous: Previous) -> Effects:
    before = -1 if previous.rank is None else previous.rank
    arrived = before < STATUS_RANK["queued"] <= write.rank
    queue_time = None
    if write.started_at is not None and write.has_runner and previous.started_at is None:
        queue_time = max(0.0, (write.started_at - write.created_at).total_seconds())
    run_time = None
    start = write.started_at or previous.started_at
    if write.status == "completed" and write.has_runner and write.completed_at is not None and start is not None:
        run_time = max(0.0, (write.completed_at - start).total_seconds())
    return Effects(arrived=arrived, queue_time=queue_time, run_time=run_time)
