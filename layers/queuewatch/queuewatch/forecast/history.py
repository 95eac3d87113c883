"""A runner type's forecast inputs from its jobs' history: one definition for the live collector and the backtest.

Pure: the jobs' times in (epoch seconds), ForecastInputs out. The collector reads the jobs queued in the last
HISTORY_SECONDS (the jobs table's history index, by queued time); the backtest replays the same span of the
same history at each tick. What each figure means:
- arrived: the jobs queued for a runner in the window [now - window, now);
- run_seconds: the median run (started to completed) of the jobs read that completed by now;
- startup_seconds: the median wait (queued to started) of the jobs read that started within BOOT_GRACE of
  being queued: those a runner was launched for at once, not those that waited for a slot;
- running, running_seconds: the jobs read that started by now and had not completed, and their median run so
  far. A job queued before the span (a run longer than it) is not read: its slot shows only in the
  autoscaler's count of its runners, where that is read.
The runners counted and the maximum come from the autoscaler (its log line, a metric) or, in a backtest, from
what the user gives: `pool`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from queuewatch.forecast.inputs import ForecastInputs
from queuewatch.jobs import BOOT_GRACE, JobRecord

WINDOW_SECONDS = 600
"""The arrivals counted: the last 10 minutes, long enough for a rate, short enough to see a build-up."""
HISTORY_SECONDS = 3600
"""The jobs read for run times, start-ups and the jobs running: those queued in the last hour."""
_BOOT_GRACE = BOOT_GRACE.total_seconds()


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
    window: int = WINDOW_SECONDS,
    history: int = HISTORY_SECONDS,
    pool: PoolCount | None = None,
) -> ForecastInputs:
    """One runner type's inputs at `now` from its jobs (any order; those queued outside the history's span or
    after now are not read)."""
    since, arrivals_since = now - history, now - window
    arrived = 0
    runs: list[float] = []
    startups: list[float] = []
    running: list[float] = []
    for job in jobs:
        if not since <= job.queued <= now:
            continue
        if arrivals_since <= job.queued < now:
            arrived += 1
        started = job.started
        if started is None or started > now:
            continue
        wait = max(0.0, started - job.queued)
        if wait <= _BOOT_GRACE:
            startups.append(wait)
        completed = job.completed
        if completed is not None and completed <= now:
            runs.append(max(0.0, completed - started))
        else:
            running.append(now - started)
    return ForecastInputs(
        window_seconds=window,
        arrived=arrived,
        run_seconds=statistics.median(runs) if runs else None,
        startup_seconds=statistics.median(startups) if startups else None,
        running=len(running),
        running_seconds=statistics.median(running) if running else None,
        runners=pool.runners if pool else None,
        maximum=pool.maximum if pool else None,
        runners_from=pool.source if pool else None,
        runners_age_seconds=pool.age_seconds if pool else None,
    )
