"""The scheduled invocations that start a collection tick, and the time and id each one stands for.

AWS starts a scheduled Lambda invocation in one of three shapes (events/collect_*.json):
- an EventBridge rule (the template's Schedule event): the EventBridge event, whose `time` is the
  scheduled time and whose `id` is the same on Lambda's retries;
- EventBridge Scheduler with no Input: Scheduler's default input, an empty JSON object, which says
  neither when nor which tick;
- EventBridge Scheduler with an Input: that JSON, which can carry Scheduler's context attributes,
  e.g. {"scheduled_time": "<aws.scheduler.scheduled-time>", "execution_id": "<aws.scheduler.execution-id>"}.

A tick's time is its scheduled time when the event gives one: ticks then sit on the schedule's grid,
a late or retried invocation keeps its tick's time, and the evaluator orders ticks by it. Without
one, the invocation's clock is the best statement of when the queues were read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, RootModel, ValidationError


class SchedulerInput(BaseModel):
    """EventBridge Scheduler's input to the collector: empty (its default) or the context attributes.

    Other keys are refused, so that a misspelt key is an error rather than a silently ignored time.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    scheduled_time: AwareDatetime | None = None
    execution_id: str | None = Field(default=None, min_length=1, max_length=128)


@dataclass(frozen=True)
class Tick:
    at: datetime
    tick_id: str


class ScheduleEvent(RootModel[EventBridgeModel | SchedulerInput]):
    """Any shape of scheduled invocation the collector accepts."""

    def tick(self, *, now: datetime, request_id: str) -> Tick:
        """This invocation's tick; `now` and `request_id` stand in for what the event does not say."""
        event = self.root
        if isinstance(event, EventBridgeModel):
            return Tick(at=event.time, tick_id=event.id)
        return Tick(at=event.scheduled_time or now, tick_id=event.execution_id or request_id)


def scheduled_time(payload: Any) -> datetime | None:
    """The scheduled time a collector's request payload names, if any (for a failed tick's record)."""
    try:
        event = ScheduleEvent.model_validate(payload).root
    except ValidationError:
        return None
    return event.time if isinstance(event, EventBridgeModel) else event.scheduled_time
