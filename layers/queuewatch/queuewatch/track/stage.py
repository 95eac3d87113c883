"""The track stage: apply one workflow_job event to the jobs table."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from queuewatch.adapters.jobs_table.jobs import put_job
from queuewatch.base.frozen import FrozenModel
from queuewatch.model.jobs import PROGRESS, JobRecord, StoredJob
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.jobs import DEFAULT_HISTORY, UnusableEvent, rebased, record_of
from queuewatch.track.routing import Router
from queuewatch.track.slo import count as count_for_slos

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_WRITES = 4  # a write rebased on what it found, again if another event moved the job in between
# An event applied this long after what it tells happened is a recovery's (a redelivery, a dead-letter queue's
# redrive, an archive's replay): it tells the job's history, not what waits now. A live event reaches the stage
# within minutes: the bus's retries end within 10 (template.yaml), the webhook's queue applies each event as of
# its receipt, and GitHub delivers within seconds. The evaluator refuses ticks this old too.
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
    history: bool = False  # an event of the past (of_the_past): stored as history, never queued now, no metrics
    # The autoscaler's matcher config was expected and could not be read: why. The job is stored unrouted
    # unless the config's own label sets took it; the heartbeat carries this to the collector.
    matcher_error: str | None = None


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
    received: bool = False,
) -> TrackResult:
    """Store the job's state when the event moves it on; a duplicate or late event changes nothing.
    `occurred_at` is when the event happened (the bus envelope's time; the webhook's receipt, carried on
    its queue's message; `now` if None): the time a job that waited for approval was queued. A failed write
    raises, so that Lambda retries the event (and, past its retries, keeps it in the DLQ); an event that
    can never be applied is refused, and said, not retried.
    `received`: `occurred_at` is when the webhook received the event (GitHub's body carries no time of the
    event), not when it happened; `replayed`: the event comes from an archive's replay (EventBridge marks it).
    An event of the past (of_the_past: a webhook redelivery, in any order, or a replay) is the job's history:
    stored, never as queued now, so no tick counts a job of an hour ago as waiting between its queued event and
    its in_progress; and none of its figures is emitted as if it happened now.
    With `slo_table`, a job that started (or was cancelled after it turned bad) is counted for its SLOs,
    once (track/slo.py): also on a duplicate, which may be Lambda's retry of an event whose count failed."""
    try:
        record = record_of(event, router, now, history=history)
    except UnusableEvent as error:
        return TrackResult(outcome="refused", action=event.action, job_id=event.workflow_job.id, reason=str(error))
    if record is None:
        return TrackResult(outcome="ignored", action=event.action, job_id=event.workflow_job.id)
    occurred = occurred_at or now
    record = record.model_copy(update={"history_only": of_the_past(record, occurred, now, replayed, received)})
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
            # Stored as far along: a duplicate, or an event that arrived after a later one. Its SLO count (a
            # retry of one that failed) takes the stored queued_at: this event's own is its creation, which
            # counts an approval wait as queue time.
            if answer.queued_at is not None:
                record = record.model_copy(update={"queued_at": answer.queued_at})
            break
        # Rebased, its queued_at may be the approval's, not the creation's: judged again.
        past = of_the_past(rebase, occurred, now, replayed, received)
        record, expect = rebase.model_copy(update={"history_only": past}), answer
    else:
        raise TrackConflict(f"job {record.job_id}: its item changed under {MAX_WRITES} writes in a row")
    applied = before is not None
    if slo_table and record.progress >= PROGRESS["in_progress"]:
        count_for_slos(record, router.config, dynamodb, slo_table, history, now)
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
        history=record.history_only,
        matcher_error=router.matcher_error,
    )


def of_the_past(record: JobRecord, occurred: datetime, now: datetime, replayed: bool, received: bool) -> bool:
    """Whether the event behind `record` tells the job's past rather than what waits now.

    - Received by the webhook (`received`): when it was received HISTORY_AFTER after the moment its state began
      (queued: when the job was queued for a runner; in_progress: its start; completed: its end). GitHub
      delivers within seconds, so only a redelivery is that late: received now, telling of a job queued an
      hour ago. Or when it is applied HISTORY_AFTER after its receipt: the webhook's queue retries an event
      for about 15 minutes, so only a redrive of its dead-letter queue is that late. A job waiting for
      approval was queued when its queued event was received (track/jobs.py `rebased`), so an approval after
      a long wait is live.
    - From the bus: when it is an archive's replay (`replayed`) of HISTORY_AFTER ago. The bus's own deliveries,
      however late, are live: its envelope's time is the event's, and its retries end within 10 minutes.

    A job of the past that still waits is shown by its queue's scale-up requests until its next event."""
    if not received:
        return replayed and now - occurred > HISTORY_AFTER
    moments = {
        "waiting": None,  # not queued for a runner: nothing to page about, whenever it is applied
        "queued": record.queued_at,
        "in_progress": record.started_at,
        "completed": record.completed_at,
    }
    moment = moments[record.status]
    redriven = now - occurred > HISTORY_AFTER  # past the webhook queue's 10 receives: a dead-letter queue's redrive
    return redriven or (moment is not None and occurred - moment > HISTORY_AFTER)
