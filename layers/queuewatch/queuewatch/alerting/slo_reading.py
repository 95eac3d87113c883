"""Each SLO's burn windows (pure), from its counters (one Query per SLO, whatever the fleet and the job
volume: adapters/slo_table/) and from the jobs still waiting, which it has in
hand (the census's Query). A job waiting past the threshold is bad from queued_at + threshold; once it
starts, the track stage's counter holds it in that same bucket, so it is counted once either way."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from queuewatch.config import Config
from queuewatch.model.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.model.slo import Counts, Slo, bucket_start, waiting_outcome, window_counts
from queuewatch.model.snapshot import SloReading, SloWindowCount


def waiting_buckets(slo: Slo, config: Config, queued: Iterable[JobRecord], now: datetime) -> dict[datetime, Counts]:
    """The SLO's jobs still waiting past its threshold, by the bucket of the moment each turned bad. A job
    queued past GitHub's limit is lost, not waiting (collect/jobs.py), and counts here no more."""
    buckets: dict[datetime, Counts] = defaultdict(Counts)
    for job in queued:
        if job.queued_at is None or now - job.queued_at > QUEUED_LIMIT:
            continue
        if not slo.selects(job.runner_type, config.team_of(job.runner_type or ""), job.labels):
            continue
        decided = waiting_outcome(job.queued_at, now, slo.queue_time_under)
        if decided is not None:
            buckets[bucket_start(decided[1])] += Counts(bad=1)
    return dict(buckets)


def oldest_waiting(slo: Slo, config: Config, queued: Iterable[JobRecord], now: datetime) -> float | None:
    waits = [
        (now - job.queued_at).total_seconds()
        for job in queued
        if job.queued_at is not None
        and now - job.queued_at <= QUEUED_LIMIT
        and slo.selects(job.runner_type, config.team_of(job.runner_type or ""), job.labels)
    ]
    return max(0.0, *waits) if waits else None


def reading_of(
    slo: Slo, config: Config, counted: dict[datetime, Counts], queued: Iterable[JobRecord], now: datetime
) -> SloReading:
    """The SLO's windows from its counters (the started jobs) and the jobs queued now."""
    queued = list(queued)
    buckets = dict(counted)
    for start, waiting in waiting_buckets(slo, config, queued, now).items():
        buckets[start] = buckets.get(start, Counts()) + waiting
    spans = sorted({s for a in slo.burn_alerts for s in (a.long_window, a.short_window)})
    windows = [SloWindowCount(seconds=s, **vars(window_counts(buckets, now, s))) for s in spans]
    return SloReading(name=slo.name, windows=windows, oldest_waiting_seconds=oldest_waiting(slo, config, queued, now))
