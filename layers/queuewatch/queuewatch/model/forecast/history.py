"""A runner type's forecast inputs from its jobs' history, as of a moment: the collector's definitions
(collect/forecast.py) in one pure function a backtest can ask at every tick.

Pure: the jobs' times in (epoch seconds), ForecastInputs out. The live collector reads the jobs queued over the
triage's window and baseline and reads them as they are now; a backtest holds the whole history, so each job is
read as it was at `now` (a start or completion after it is not yet known). What each figure means:
- arrived: the jobs queued for a runner in the triage window [now - window, now);
- run_seconds: the median run (started to completed) of the jobs read that completed by now;
- startup_seconds: the median wait (queued to started) of the jobs read that found no job of their runner type
  ahead of them still queued: what they waited was a runner's launch and boot, not a slot's release;
- running, running_seconds: the jobs read that started by now and had not completed, and their median run so
  far. A job queued before the span read (a run longer than it) is not read: its slot shows only in the
  autoscaler's count of its runners, where that is read.
Medians are rounded to a tenth of a second, as the collector's are. The runners counted and the maximum come
from the autoscaler (its log line, a metric) or, in a backtest, from what the user gives: `pool`; a log count
older than STALE_COUNT_SECONDS keeps its maximum but not its runners, as the collector's does.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.jobs import JobRecord

STALE_COUNT_SECONDS = 300
"""A log count older than this is stale: the autoscaler writes one each time its scale-up runs for the pool, so a
busy pool's is a minute old or less; at five minutes (upstream's default runner boot time), runners it launched
have booted and runs have ended since, and the count says little about the slots free now. Its maximum is kept
(configuration: it changes with a deploy), its runners are not: the outlook then counts the jobs running."""


@dataclass(frozen=True, slots=True)
class JobTimes:
    """One job's moments, epoch seconds: queued for a runner, started, completed (None: not yet, or never)."""

    queued: float
    started: float | None = None
    completed: float | None = None

    @classmethod
    def of(cls, job: JobRecord) -> JobTimes | None:
        """A tracked job's times; None for one never queued for a runner (waiting for an approval)."""
        if job.status == "waiting":
            return None
        started = job.started_at.timestamp() if job.started_at else None
        completed = job.completed_at.timestamp() if job.completed_at else None
        return cls(job.queued_since.timestamp(), started, completed)


@dataclass(frozen=True, slots=True)
class PoolCount:
    """The autoscaler's runners for a type, and its maximum, with where and how long ago they were read."""

    runners: int | None
    maximum: int | None
    source: Literal["log", "metric"] | None = None
    age_seconds: float | None = None


def forecast_inputs(
    jobs: Iterable[JobTimes],
    now: float,
    *,
    window: int,
    history: int,
    pool: PoolCount | None = None,
) -> ForecastInputs:
    """One runner type's inputs at `now` from its jobs (any order; those queued outside [now - history, now] are
    not read). `window`: the triage's; `history`: the span read, the triage's window and baseline."""
    since, arrivals_since = now - history, now - window
    read = sorted((job for job in jobs if since <= job.queued <= now), key=lambda job: job.queued)
    arrived = 0
    runs: list[float] = []
    startups: list[float] = []
    running: list[float] = []
    ahead_left = -math.inf  # when the last job queued before this one left the queue (inf: it had not by now)
    for job in read:
        if arrivals_since <= job.queued < now:
            arrived += 1
        started = job.started if job.started is not None and job.started <= now else None
        completed = job.completed if job.completed is not None and job.completed <= now else None
        if started is not None and ahead_left <= job.queued:
            startups.append(max(0.0, started - job.queued))
        left = started if started is not None else completed  # a job cancelled while queued left when it ended
        ahead_left = max(ahead_left, left if left is not None else math.inf)
        if started is None:
            continue
        if completed is not None:
            runs.append(max(0.0, completed - started))
        else:
            running.append(now - started)
    demand = ForecastInputs(
        window_seconds=window,
        arrived=arrived,
        run_seconds=_median(runs),
        startup_seconds=_median(startups),
        running=len(running),
        running_seconds=_median(running),
    )
    return with_pool(demand, pool) if pool is not None else demand


def with_pool(inputs: ForecastInputs, pool: PoolCount) -> ForecastInputs:
    """The inputs with the autoscaler's count: a log count older than STALE_COUNT_SECONDS keeps its maximum only."""
    stale = pool.source == "log" and pool.age_seconds is not None and pool.age_seconds > STALE_COUNT_SECONDS
    return inputs.model_copy(
        update={
            "runners": None if stale else pool.runners,
            "maximum": pool.maximum,
            "runners_from": pool.source,
            "runners_age_seconds": None if pool.age_seconds is None else round(pool.age_seconds, 1),
        }
    )


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None
