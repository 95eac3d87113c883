"""The track stage: apply one workflow_job event to the jobs table."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from queuewatch.adapters.job_store import put_job
from queuewatch.frozen import FrozenModel
from queuewatch.jobs import PROGRESS, StoredJob
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.jobs import DEFAULT_HISTORY, UnusableEvent, rebased, record_of
from queuewatch.track.routing import Router
from queuewatch.track.slo import count as count_for_slos

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_WRITES = 4  # a write rebased on what it found, again if another event moved the job in between
# A replayed event this far in the past tells the job's history, not what waits now: a live event reaches the
# stage within minutes, so an older one is the archive's (the evaluator refuses ticks this old too).
HISTORY_AFTER = timedelta(minutes=15)


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
    history: bool = False  # a replayed event of the past: stored as history, never queued now, no metrics


class TrackConflict(RuntimeError):
    """The job's item kept changing under this event's writes: raised so that Lambda retries the event."""


def track(
    event: WorkflowJobEvent,
    router: Router,
    dynamodb: DynamoDBClient,
    table: str,
    now: datetime,
    *,
    occurred_at: datetime | None = None,
    history: timedelta = DEFAULT_HISTORY,
    replayed: bool = False,
    slo_table: str | None = None,
) -> TrackResult:
    """Store the job's state when the event moves it on; a duplicate or late event changes nothing.
    `occurred_at` is when the event happened (the bus envelope's time; the webhook's receipt, carried on
    its queue's message; `now` if None): the time a job that waited for approval was queued. A failed write
    raises, so that Lambda retries the event (and, past its retries, keeps it in the DLQ); an event that
    can never be applied is refused, and said, not retried.
    An event `replayed` from an archive that happened more than HISTORY_AFTER ago is the job's history: stored,
    never as queued now, so no tick counts a job of hours ago as waiting between its replayed queued and
    in_progress; and none of its figures is emitted as if it happened now.
    With `slo_table`, a job that started (or was cancelled after it turned bad) is counted for its SLOs,
    once (track/slo.py): also on a duplicate, which may be Lambda's retry of an event whose count failed."""
    try:
        record = record_of(event, router, now, history=history)
    except UnusableEvent as error:
        return TrackResult(outcome="refused", action=event.action, job_id=event.workflow_job.id, reason=str(error))
    if record is None:
        return TrackResult(outcome="ignored", action=event.action, job_id=event.workflow_job.id)
    past = replayed and now - (occurred_at or now) > HISTORY_AFTER
    if past:
        record = record.model_copy(update={"history_only": True})
    writer = uuid.uuid4().hex  # this event's writes: a retried write that took effect is recognised by it
    expect: StoredJob | None = None
    before: int | None = None
    for _ in range(MAX_WRITES):
        answer = put_job(dynamodb, table, record, writer, expect=expect)
        if answer is None:  # no item (it expired between the writes): write as if first seen
            expect = None
            continue
        if isinstance(answer, int):
            before = answer
            break
        rebase = rebased(record, answer, occurred_at or now, now, history=history)
        if rebase is None:
            break  # stored as far along: a duplicate, or an event that arrived after a later one
        record, expect = rebase, answer
    else:
        raise TrackConflict(f"job {record.job_id}: its item changed under {MAX_WRITES} writes in a row")
    applied = before is not None
    if slo_table and record.progress >= PROGRESS["in_progress"]:
        count_for_slos(record, router.config, dynamodb, slo_table, history)
    # Each figure once per job, from the write that first got that far, whichever event it was: a job
    # whose queued event came after its in_progress still arrived, and a completed that overtook its
    # in_progress still gives the queue time.
    arrived = before is not None and before < PROGRESS["queued"] <= record.progress and record.queued_at is not None
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
        history=past,
    )
