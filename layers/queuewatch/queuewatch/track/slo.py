"""The track stage's part of the SLOs: a job that started (or was cancelled after it turned bad) is counted
good or bad for every SLO that selects it, once (adapters/slo_table/counters.py). A job still waiting is the
collector's to count (alerting/slo_reading.py): it has every queued job in hand at each tick."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from queuewatch.adapters.slo_table.counters import Contribution, count_job
from queuewatch.config import Config
from queuewatch.model.jobs import JobRecord
from queuewatch.model.slo import outcome_of

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

KEEP_PAST = timedelta(days=1)  # counters and marks outlive what reads them by a day
MARKED_AT_LEAST = timedelta(days=6)  # a job's mark stands this long past its queueing, or the history's days


def contributions(record: JobRecord, config: Config) -> list[Contribution]:
    """The job's count for each SLO that selects it; none while it waits or for a job no runner type serves."""
    if record.queued_at is None or record.runner_type is None:
        return []
    team = config.team_of(record.runner_type)
    found: list[Contribution] = []
    for slo in config.resolved_slos:
        if not slo.selects(record.runner_type, team, record.labels):
            continue
        decided = outcome_of(record.queued_at, record.started_at, record.completed_at, slo.queue_time_under)
        if decided is not None:
            outcome, at = decided
            keep = timedelta(seconds=max(slo.window, slo.longest_burn_window)) + KEEP_PAST
            found.append(Contribution(slo.name, outcome, at, at + keep))
    return found


def count(
    record: JobRecord, config: Config, dynamodb: DynamoDBClient, table: str, history: timedelta, now: datetime
) -> bool:
    """Count the job for its SLOs if it is decided and was not counted before; True if this call counted it.
    An event of the past (a webhook redelivery, an archive's replay) counts its job too, while the mark of any
    earlier count of it must still stand: a start delivered late, of a job the collector counted as waiting,
    is not lost; a replay of jobs older than their marks counts nothing, rather than some twice."""
    if record.queued_at is None:
        return False
    marked_for = max(history, MARKED_AT_LEAST)
    if record.history_only and now - record.queued_at > marked_for:
        return False
    found = contributions(record, config)
    if not found:
        return False
    # The mark lasts as long as any event of the job can still arrive: its history, and a day more.
    return count_job(dynamodb, table, record.job_id, found, record.queued_at + marked_for + KEEP_PAST)
