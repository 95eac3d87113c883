"""A job's state from its events, whatever order they arrive in and however often.

Each event carries the whole job, so the newest state is the event furthest along GitHub's order
(waiting, queued, in_progress, completed) and the store keeps only that one: an event not further
along than what is stored is a duplicate or arrived late, and changes nothing. So an `in_progress`
seen before its `queued` means the job is not queued, and a completed job is never brought back.
"""

from __future__ import annotations

from datetime import UTC, datetime

from queuewatch.frozen import FrozenModel
from queuewatch.track.events import JobStatus, WorkflowJobEvent
from queuewatch.track.routing import Router, label_set
from queuewatch.track.schema import KEEP_FINISHED, QUEUED_LIMIT, RUN_LIMIT

PROGRESS: dict[str, int] = {"waiting": 0, "queued": 1, "in_progress": 2, "completed": 3}


class JobRecord(FrozenModel):
    """One job as the jobs table holds it (adapters/job_store.py maps it to an item)."""

    job_id: int
    run_id: int
    status: JobStatus
    progress: int
    runner_type: str | None
    labels: tuple[str, ...]
    label_set: str
    org: str
    repo: str
    html_url: str | None
    created_at: datetime
    started_at: datetime | None = None
    completed_at: datetime | None = None
    updated_at: datetime
    expires_at: datetime
    history_only: bool = False  # from a replayed event of the past: kept out of the queued index (track/stage.py)

    @property
    def queued(self) -> bool:
        """Whether it belongs in the queued index: queued now, as a live event said."""
        return self.status == "queued" and not self.history_only

    @property
    def queue_seconds(self) -> float | None:
        """How long it waited for a runner: started_at - created_at, never negative (GitHub's clocks
        sometimes stamp started_at a little before created_at)."""
        if self.started_at is None:
            return None
        return max(0.0, (self.started_at - self.created_at).total_seconds())

    @property
    def run_seconds(self) -> float | None:
        if self.started_at is None or self.completed_at is None:
            return None
        return max(0.0, (self.completed_at - self.started_at).total_seconds())


def record_of(event: WorkflowJobEvent, router: Router, now: datetime) -> JobRecord | None:
    """The state the event stands for, or None for an action that says nothing about waiting."""
    if not event.tracked:
        return None
    status: JobStatus = event.action  # type: ignore[assignment]  # tracked: one of JobStatus
    job = event.workflow_job
    started = job.started_at if status in ("in_progress", "completed") else None
    if status == "completed" and job.runner_name is None:
        started = None  # cancelled or skipped before any runner took it: it never ran, nor stopped waiting
    completed = job.completed_at if status == "completed" else None
    return JobRecord(
        job_id=job.id,
        run_id=job.run_id,
        status=status,
        progress=PROGRESS[status],
        runner_type=router.runner_type(job.labels),
        labels=tuple(job.labels),
        label_set=label_set(job.labels),
        org=event.org,
        repo=event.repository.full_name,
        html_url=job.html_url,
        created_at=job.created_at,
        started_at=started,
        completed_at=completed,
        updated_at=now.astimezone(UTC),
        expires_at=_expiry(status, job.created_at, started, now),
    )


def _expiry(status: JobStatus, created: datetime, started: datetime | None, now: datetime) -> datetime:
    """When the table may forget the job: past GitHub's own limits, or a day after it finished."""
    if status in ("waiting", "queued"):
        return max(created + QUEUED_LIMIT, now) + KEEP_FINISHED
    if status == "in_progress":
        return max(started or created, now) + RUN_LIMIT + KEEP_FINISHED
    return now + KEEP_FINISHED
