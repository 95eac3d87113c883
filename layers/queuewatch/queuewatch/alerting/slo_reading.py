"""Each SLO's burn windows (pure), from its counters (a Query per SLO, whatever the fleet and the job
volume: adapters/slo_table/) and from the jobs still waiting, which it has in
hand (the census's Query). A job waiting past the threshold is bad from queued_at + threshold; once it
starts, the track stage's counters hold it in that same minute, so it is counted once either way."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from queuewatch.config import Config
from queuewatch.model.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.model.slo import Counts, Slo, Tally, waiting_outcome
from queuewatch.model.snapshot import SloReading, SloWindowCount


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
