"""What the jobs' history says happened, per runner type. Pure: the jobs come in as plain times.

Jobs are the ones queued in the range. Times are epoch seconds; a job with no start never ran (cancelled, or
still queued at the range's end), one with a start and no end was still running at the range's end and runs
until then, as far as this knows.

When was the autoscaler capped? The jobs table records times, not the autoscaler's maximum, so a cap is read
from its effect: a job is queued *at the ceiling* when the other jobs wanting a runner (running, plus queued and
not yet started) are at least as many as the most that ever ran at once in the range. Below the ceiling a queued job
had a runner asked for at once, so its queue time is the runner's start-up alone: the median of those queue
times is the start-up delay the model uses, unless one is given.
"""

from __future__ import annotations

import bisect
import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from queuewatch.model.forecast.model import percentile

DAY = 86400
EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday is 0)
MIN_SAMPLES = 20  # start-up samples below which the runner type's own estimate is not trusted
JOB_RUN_LIMIT = 5 * DAY
"""GitHub's limit on a job's run on a self-hosted runner (5 days; a GitHub-hosted runner's is 6 hours): no job
runs longer, so one counted as running longer had its `completed` event lost."""


@dataclass(frozen=True)
class JobTimes:
    """One job, as the capacity model needs it: when it was queued for a runner, started and ended."""

    runner_type: str
    queued_at: float
    started_at: float | None
    completed_at: float | None


@dataclass
class RunnerTypeJobs:
    """A runner type's jobs in parallel arrays, ordered by queued_at once `ordered()` is called."""

    name: str
    queued: array[float] = field(default_factory=lambda: array("d"))
    started: array[float] = field(default_factory=lambda: array("d"))  # NaN: never started
    completed: array[float] = field(default_factory=lambda: array("d"))  # NaN: not ended
    lost: int = 0  # jobs with no end recorded, running longer than any of its jobs that did end: bounded
    lost_bound: float = math.nan  # the run each of those is taken to have had (seconds)

    def add(self, job: JobTimes) -> None:
        self.queued.append(job.queued_at)
        self.started.append(math.nan if job.started_at is None else max(job.started_at, job.queued_at))
        ended = job.completed_at
        if ended is not None and job.started_at is not None:
            ended = max(ended, job.started_at, job.queued_at)
        self.completed.append(math.nan if ended is None else ended)

    def ordered(self) -> None:
        order = sorted(range(len(self.queued)), key=self.queued.__getitem__)
        self.queued = array("d", (self.queued[i] for i in order))
        self.started = array("d", (self.started[i] for i in order))
        self.completed = array("d", (self.completed[i] for i in order))


def by_runner_type(jobs: Iterable[JobTimes], start: float, end: float) -> dict[str, RunnerTypeJobs]:
    """The jobs queued in [start, end), by runner type, each in arrival order, lost ends bounded."""
    found: dict[str, RunnerTypeJobs] = {}
    for job in jobs:
        if start <= job.queued_at < end:
            found.setdefault(job.runner_type, RunnerTypeJobs(job.runner_type)).add(job)
    for jobs_of in found.values():
        jobs_of.ordered()
        bound_lost_ends(jobs_of, end)
    return found


def bound_lost_ends(jobs: RunnerTypeJobs, end: float) -> None:
    """A started job with no end counts as running until the range's end, unless it has run longer than every
    job of its runner type that did end (or, none having ended, than GitHub's limit): then its `completed`
    event was lost, and it is taken to have run as long as that longest run. Counted in `lost`."""
    runs = [c - s for s, c in zip(jobs.started, jobs.completed, strict=True) if not math.isnan(c)]
    bound = min(max(runs), JOB_RUN_LIMIT) if runs else JOB_RUN_LIMIT
    for index, (started, completed) in enumerate(zip(jobs.started, jobs.completed, strict=True)):
        if not math.isnan(started) and math.isnan(completed) and end - started > bound:
            jobs.completed[index] = started + bound
            jobs.lost += 1
    if jobs.lost:
        jobs.lost_bound = bound


@dataclass(frozen=True)
class Observed:
    """What happened to one runner type's jobs in the range."""

    jobs: int
    never_started: int
    arrivals_by_hour: tuple[int, ...]  # UTC hour of day, 0..23
    arrivals_by_weekday: tuple[int, ...]  # Monday first
    queue_p50: float
    queue_p90: float
    queue_p99: float
    queue_worst: float
    run_p50: float
    run_p90: float
    peak_running: int
    daily_peaks: tuple[tuple[str, int], ...]  # (UTC date, the most running at once that day)
    startup_samples: int  # jobs queued below the ceiling, whose queue time is a start-up
    startup_median: float  # NaN with no sample


def observe(jobs: RunnerTypeJobs, end: float) -> Observed:
    hours = [0] * 24
    weekdays = [0] * 7
    for queued in jobs.queued:
        day, into = divmod(int(queued), DAY)
        hours[into // 3600] += 1
        weekdays[(day + EPOCH_WEEKDAY) % 7] += 1
    waits = sorted(s - q for q, s in zip(jobs.queued, jobs.started, strict=True) if not math.isnan(s))
    runs = sorted(
        (end if math.isnan(c) else c) - s
        for s, c in zip(jobs.started, jobs.completed, strict=True)
        if not math.isnan(s)
    )
    peak, daily = running_peaks(jobs, end)
    samples = sorted(startup_samples(jobs, peak))
    return Observed(
        jobs=len(jobs.queued),
        never_started=len(jobs.queued) - len(waits),
        arrivals_by_hour=tuple(hours),
        arrivals_by_weekday=tuple(weekdays),
        queue_p50=percentile(waits, 50),
        queue_p90=percentile(waits, 90),
        queue_p99=percentile(waits, 99),
        queue_worst=waits[-1] if waits else math.nan,
        run_p50=percentile(runs, 50),
        run_p90=percentile(runs, 90),
        peak_running=peak,
        daily_peaks=tuple(daily),
        startup_samples=len(samples),
        startup_median=percentile(samples, 50),
    )


def _running_changes(jobs: RunnerTypeJobs, end: float) -> list[tuple[float, int]]:
    """+1 at each start, -1 at each end (ends first at a tie: a runner freed and taken in one instant); what ran
    after the range's end is not the range's."""
    changes: list[tuple[float, int]] = []
    for started, completed in zip(jobs.started, jobs.completed, strict=True):
        if math.isnan(started) or started >= end:
            continue
        changes.append((started, 1))
        changes.append((end if math.isnan(completed) else min(completed, end), -1))
    changes.sort()
    return changes


def running_peaks(jobs: RunnerTypeJobs, end: float) -> tuple[int, list[tuple[str, int]]]:
    """The most jobs running at once over the range, and on each UTC day of it."""
    peak = running = 0
    daily: dict[int, int] = {}  # days since the epoch -> the day's peak
    for at, change in _running_changes(jobs, end):
        running += change
        if change > 0:
            peak = max(peak, running)
            day = int(at // DAY)
            if running > daily.get(day, 0):
                daily[day] = running
    return peak, [(datetime.fromtimestamp(day * DAY, UTC).strftime("%Y-%m-%d"), n) for day, n in sorted(daily.items())]


def time_above(jobs: RunnerTypeJobs, end: float, runners: int) -> float:
    """Seconds in the range during which more than `runners` jobs really ran at once."""
    above = 0.0
    running = 0
    since = 0.0
    for at, change in _running_changes(jobs, end):
        if running > runners:
            above += at - since
        running += change
        since = at
    return above


def startup_samples(jobs: RunnerTypeJobs, ceiling: int) -> list[float]:
    """The queue times of jobs queued while the runner type was below its ceiling (see the module's text)."""
    if ceiling == 0:
        return []
    starts = sorted(s for s in jobs.started if not math.isnan(s))
    ends = sorted(
        c for s, c in zip(jobs.started, jobs.completed, strict=True) if not math.isnan(s) and not math.isnan(c)
    )
    # A job stops waiting when it starts, or, never started, when it ends (cancelled); else never.
    left_queue = sorted(
        s if not math.isnan(s) else (math.inf if math.isnan(c) else c)
        for s, c in zip(jobs.started, jobs.completed, strict=True)
    )
    samples: list[float] = []
    for index, (queued, started) in enumerate(zip(jobs.queued, jobs.started, strict=True)):
        if math.isnan(started):
            continue
        running = bisect.bisect_right(starts, queued) - bisect.bisect_right(ends, queued)
        waiting = (index + 1) - bisect.bisect_right(left_queue, queued)  # queued so far (ties: at most this one)
        # Below the ceiling: the others wanting a runner leave a slot for this one (`waiting` counts it too).
        if running + waiting - 1 < ceiling:
            samples.append(started - queued)
    return samples
