"""The collector's part of the SLOs: each SLO's burn windows, from its counters (a few Queries per SLO, whatever
the fleet and the job volume: adapters/slo_counters.py) and from the jobs still waiting, which it has in
hand (the census's Query). A job waiting past the threshold is bad from queued_at + threshold; once it
starts, the track stage's counters hold it in that same minute, so it is counted once either way."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from queuewatch.adapters.errors import describe
from queuewatch.adapters.slo_counters import read_tally
from queuewatch.config import Config
from queuewatch.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.slo import Counts, Slo, Tally, waiting_outcome
from queuewatch.snapshot import SloReading, SloWindowCount

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def add_waiting(tally: Tally, slo: Slo, config: Config, queued: Iterable[JobRecord], now: datetime) -> None:
    """Count the SLO's jobs still waiting past its threshold, at the moment each turned bad. A job queued past
    GitHub's limit is lost, not waiting (collect/jobs.py), and counts here no more."""
    for job in queued:
        if job.queued_at is None or now - job.queued_at > QUEUED_LIMIT:
            continue
        if not slo.selects(job.runner_type, config.team_of(job.runner_type or ""), job.labels):
            continue
        decided = waiting_outcome(job.queued_at, now, slo.queue_time_under)
        if decided is not None:
            tally.add(decided[1], Counts(bad=1))


def oldest_waiting(slo: Slo, config: Config, queued: Iterable[JobRecord], now: datetime) -> float | None:
    waits = [
        (now - job.queued_at).total_seconds()
        for job in queued
        if job.queued_at is not None
        and now - job.queued_at <= QUEUED_LIMIT
        and slo.selects(job.runner_type, config.team_of(job.runner_type or ""), job.labels)
    ]
    return max(0.0, *waits) if waits else None


def slo_readings(
    config: Config, dynamodb: DynamoDBClient, table: str, queued: list[JobRecord] | str, now: datetime
) -> list[SloReading]:
    """Every SLO's windows now; `queued` is the jobs queued now, or why they could not be read. A failed
    read leaves that SLO without figures and says why: its alerts hold, and the monitor page names it."""
    readings = []
    for slo in config.resolved_slos:
        if isinstance(queued, str):
            readings.append(SloReading(name=slo.name, error=f"queued jobs: {queued}"[:512]))
            continue
        try:
            counted = read_tally(dynamodb, table, slo.name, slo.longest_burn_window, now)
        except Exception as error:  # noqa: BLE001 - one SLO's failed read degrades that SLO alone
            readings.append(SloReading(name=slo.name, error=f"counters: {describe(error)}"[:512]))
            continue
        readings.append(reading_of(slo, config, counted, queued, now))
    return readings


def burn_windows(slo: Slo) -> list[int]:
    """The lengths of the SLO's burn windows, each once."""
    return sorted({s for a in slo.burn_alerts for s in (a.long_window, a.short_window)})


def reading_of(slo: Slo, config: Config, counted: Tally, queued: Iterable[JobRecord], now: datetime) -> SloReading:
    """The SLO's windows from its counters (the started jobs) and the jobs queued now."""
    queued = list(queued)
    tally = counted.copy()
    add_waiting(tally, slo, config, queued, now)
    windows = [SloWindowCount(seconds=s, **vars(tally.window(now, s))) for s in burn_windows(slo)]
    return SloReading(name=slo.name, windows=windows, oldest_waiting_seconds=oldest_waiting(slo, config, queued, now))
