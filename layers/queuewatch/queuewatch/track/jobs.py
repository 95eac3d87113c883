"""A job's state from its events, whatever order they arrive in and however often.

Each event carries the whole job, so the newest state is the event furthest along GitHub's order
(waiting, queued, in_progress, completed) and the store keeps only that one: an event not further
along than what is stored is a duplicate or arrived late, and changes nothing. So an `in_progress`
seen before its `queued` means the job is not queued, and a completed job is never brought back.

When the job was queued for a runner (`queued_at`) is the one thing an event does not carry: GitHub keeps a
deployment job's `created_at` while it waits for approval. A job first seen queued, or further along, was
queued when it was created; one seen waiting first was queued when its approval's event happened.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from queuewatch.model.jobs import (
    HISTORY_DAYS,
    KEEP_FINISHED,
    PROGRESS,
    QUEUED_LIMIT,
    RUN_LIMIT,
    JobRecord,
    JobStatus,
    StoredJob,
)
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.routing import Router, label_set

DEFAULT_HISTORY = timedelta(days=HISTORY_DAYS)


class UnusableEvent(ValueError):
    """An event that can never be applied, however often it is retried: counted and said, not retried."""


def record_of(
    event: WorkflowJobEvent, router: Router, now: datetime, *, history: timedelta = DEFAULT_HISTORY
) -> JobRecord | None:
    """The state the event stands for, as if no waiting stage came before it (see `rebased`), or None for an
    action that says nothing about waiting.

    An event of GitHub's older shape has no created_at. Past the queue it still says the job no longer
    waits, and is applied with the earliest time it vouches for (its start, else now) in created_at: its
    queue time is unknown (track.stage emits none). A waiting or queued job without it cannot be aged."""
    if not event.tracked:
        return None
    status: JobStatus = event.action  # type: ignore[assignment]  # tracked: one of JobStatus
    job = event.workflow_job
    started = job.started_at if status in ("in_progress", "completed") else None
    if status == "completed" and job.runner_name is None:
        started = None  # cancelled or skipped before any runner took it: it never ran, nor stopped waiting
    completed = job.completed_at if status == "completed" else None
    created = job.created_at
    if created is None:
        if status in ("waiting", "queued"):
            raise UnusableEvent(f"a {status} workflow_job with no created_at: how long it waits is unknown")
        created = min(started or now, completed or now, now)
    record = JobRecord(
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
        created_at=created,
        queued_at=None if status == "waiting" else created,
        started_at=started,
        completed_at=completed,
        updated_at=now.astimezone(UTC),
        expires_at=now,  # set below, from the times above
    )
    return _expiring(record, now, history)


def rebased(
    record: JobRecord, stored: StoredJob, occurred_at: datetime, now: datetime, *, history: timedelta = DEFAULT_HISTORY
) -> JobRecord | None:
    """The record to write over what is stored, or None when the stored job is as far along (a duplicate or a
    late event). It keeps the stored queued_at; a job stored waiting for approval was queued when this event
    happened (`occurred_at`: the bus event's time, or the webhook's receipt), or, for an event further along
    (its queued event lost or late), when a runner took it: the approval wait is never queue time."""
    if stored.progress >= record.progress:
        return None
    if stored.queued_at is not None:
        queued_at: datetime | None = stored.queued_at
    elif record.status == "queued":
        queued_at = _within(occurred_at, record.created_at, now)
    elif record.started_at is not None:
        queued_at = _within(record.started_at, record.created_at, now)
    else:
        queued_at = None  # rejected or cancelled while it waited for approval: never queued for a runner
    return _expiring(record.model_copy(update={"queued_at": queued_at}), now, history)


def _within(moment: datetime, earliest: datetime, latest: datetime) -> datetime:
    """A time from another clock, kept between what is certain: not before the job existed, not in the future."""
    return max(earliest, min(moment.astimezone(UTC), latest.astimezone(UTC)))


def _expiring(record: JobRecord, now: datetime, history: timedelta) -> JobRecord:
    """When the table may forget the job: past GitHub's own limits, or a day after it finished; and a job a
    runner took or that finished, never before the history's days from when it was queued have passed. A
    job still waiting or queued is not kept longer: past GitHub's limit its later events were lost, and the
    collector reads every queued job at each tick."""
    created, started = record.created_at, record.started_at
    if record.status in ("waiting", "queued"):
        return record.model_copy(update={"expires_at": max(created + QUEUED_LIMIT, now) + KEEP_FINISHED})
    if record.status == "in_progress":
        limit = max(started or created, now) + RUN_LIMIT + KEEP_FINISHED
    else:
        limit = now + KEEP_FINISHED
    return record.model_copy(update={"expires_at": max(limit, record.queued_since + history)})
