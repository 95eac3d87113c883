"""The track stage's heartbeat per job source (queuewatch/model/job_sources.py): written at most once a minute per
container, so a busy fleet's events cost a write a minute, not one each. A failed write never fails the
event it follows (the job is stored already): it is returned for the log, and the next event writes again."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.jobs_table.heartbeats import beat
from queuewatch.model.job_sources import BEAT_EVERY, Source

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


class Heartbeat:
    """One container's memory of when it last wrote each source's heartbeat."""

    def __init__(self) -> None:
        self.written: dict[str, datetime] = {}
        self.matcher_errors: dict[str, str | None] = {}

    def event_from(
        self, source: Source, client: DynamoDBClient, table: str, now: datetime, matcher_error: str | None = None
    ) -> str | None:
        """Note an event from `source`; returns why the heartbeat could not be written, if it could not.
        A change in `matcher_error` (the autoscaler's matcher config unread, or read again) is written at once."""
        last = self.written.get(source)
        changed = self.matcher_errors.get(source) != matcher_error
        if last is not None and abs(now - last) < BEAT_EVERY and not changed:
            return None
        try:
            beat(client, table, source, now, matcher_error)
        except Exception as error:  # noqa: BLE001 - the event is applied already; the next one writes again
            return describe(error)
        self.written[source] = now
        self.matcher_errors[source] = matcher_error
        return None
