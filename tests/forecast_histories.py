"""Generated job histories for the forecast's backtests: arrivals at a rate that changes over time, served by a
pool of `maximum` runners first come, first served (the pool model, model/forecast/model.py), so each job's start and
completion are those such a pool gives."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from job_records import job_record

from queuewatch.model.forecast.model import simulate
from queuewatch.model.jobs import JobRecord


def arrivals(rate_per_minute: Callable[[float], float], minutes: int) -> list[float]:
    """Seconds from the start: the k-th job arrives when the rate's running total first reaches k (evenly spread,
    no randomness: a test's history is the same on every run)."""
    moments: list[float] = []
    total, step = 0.0, 1.0  # seconds
    second = 0.0
    while second < minutes * 60:
        total += rate_per_minute(second / 60) / 60 * step
        while total >= len(moments) + 1:
            moments.append(second)
        second += step
    return moments


def served(
    start: datetime,
    offsets: list[float],
    runner_type: str,
    *,
    maximum: int,
    run: float,
    startup: float,
    first_id: int = 1,
) -> list[JobRecord]:
    """The jobs queued at `offsets` (seconds after `start`), each running `run` seconds, on at most `maximum`
    runners that take `startup` seconds to start a job; every job completed."""
    waits = simulate(offsets, [run] * len(offsets), maximum, startup)
    jobs = []
    for index, (offset, wait) in enumerate(zip(offsets, waits, strict=True)):
        queued = start + timedelta(seconds=offset)
        began = queued + timedelta(seconds=wait)
        jobs.append(
            job_record(
                first_id + index, runner_type, queued, started_at=began, completed_at=began + timedelta(seconds=run)
            )
        )
    return jobs


def slow_build_up(start: datetime, runner_type: str, *, maximum: int = 50) -> list[JobRecord]:
    """Jobs that run 40 minutes, arriving at 0.6 a minute, rising steadily from the first hour to 2 a minute an
    hour later and easing off after: the pool of 50 fills slowly, and the jobs then wait ever longer."""

    def rate(minute: float) -> float:
        if minute < 60:
            return 0.6
        if minute < 120:
            return 0.6 + 1.4 * (minute - 60) / 60
        if minute < 180:
            return 2.0
        return 0.2

    return served(start, arrivals(rate, 300), runner_type, maximum=maximum, run=40 * 60, startup=60)


def bursts(start: datetime, runner_type: str, *, maximum: int = 50, hours: int = 8) -> list[JobRecord]:
    """Jobs that run 10 minutes, one every 5 minutes, and every two hours a burst of 90 jobs in 5 minutes that the
    pool of 50 clears by itself within minutes: no job waits long, however the burst looks at its start."""

    def rate(minute: float) -> float:
        return 0.2 + (18.0 if minute % 120 < 5 else 0.0)

    return served(start, arrivals(rate, hours * 60), runner_type, maximum=maximum, run=10 * 60, startup=60)
