"""The track stage: apply one workflow_job event to the job's item, and say what it changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from queuewatch.adapters import job_store
from queuewatch.track.payload import BusEvent, WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.schema import label_set
from queuewatch.track.transitions import Effects, TrackInputError, effects, plan_write

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

WORKFLOW_JOB = "workflow_job"

Outcome = Literal["applied", "unchanged", "ignored"]


@dataclass(frozen=True, slots=True)
class TrackResult:
    outcome: Outcome  # unchanged: the item was as far along already; ignored: nothing to write
    job_id: int
    action: str
    runner_type: str | None
    label_set: str
    effects: Effects | None = None


def parse_body(body: Mapping[str, Any], where: str) -> WorkflowJobEvent:
    """GitHub's workflow_job body, or a TrackInputError naming the first fields that were wrong."""
    if WORKFLOW_JOB not in body:
        raise TrackInputError(f"{where}: not a workflow_job event (no 'workflow_job' object); nothing stored")
    try:
        return WorkflowJobEvent.model_validate(body)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(part) for part in e['loc'])}: {e['msg']}" for e in error.errors()[:5])
        raise TrackInputError(f"{where}: not a valid workflow_job event ({problems}); nothing stored") from None


def bus_event(event: Mapping[str, Any]) -> BusEvent:
    """The EventBridge envelope, or a TrackInputError saying which of its fields were wrong."""
    try:
        return BusEvent.model_validate(event)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()[:5])
        raise TrackInputError(
            f"not an EventBridge event from the autoscaler's bus nor a Function URL request ({problems}); "
            "nothing stored"
        ) from None


def parse_bus_event(event: BusEvent) -> WorkflowJobEvent:
    where = f"EventBridge event {event.id}"
    if event.detail_type != WORKFLOW_JOB:
        raise TrackInputError(
            f"{where}: detail-type {event.detail_type!r}, expected 'workflow_job' (check the rule's pattern); "
            "nothing stored"
        )
    return parse_body(event.detail, where)


def track(event: WorkflowJobEvent, router: Router, client: DynamoDBClient, table: str, now: datetime) -> TrackResult:
    job = event.workflow_job
    runner_type = router.route(job.labels)
    write = plan_write(event, runner_type, now)
    result = TrackResult(
        outcome="ignored", job_id=job.id, action=event.action, runner_type=runner_type, label_set=label_set(job.labels)
    )
    if write is None:
        return result
    previous = job_store.apply(client, table, write)
    if previous is None:
        return TrackResult(
            outcome="unchanged", job_id=job.id, action=event.action, runner_type=runner_type, label_set=write.label_set
        )
    return TrackResult(
        outcome="applied",
        job_id=job.id,
        action=event.action,
        runner_type=runner_type,
        label_set=write.label_set,
        effects=effects(write, previous),
    )
