"""Per runner type: what happened, the start-up delay, the smallest pool that meets the target, and where the
history is too thin to say. Pure: jobs in, figures and plain-spoken notes out."""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from queuewatch.base.durations import format_duration
from queuewatch.model.forecast.model import PoolResult, Sizing, Target, pool_result, simulate, smallest_pool
from queuewatch_cli.commands.capacity.history import (
    DAY,
    JOB_RUN_LIMIT,
    MIN_SAMPLES,
    Observed,
    RunnerTypeJobs,
    observe,
    time_above,
)
from queuewatch_cli.commands.capacity.pool import PoolEntry, Window, propose, what_if

MIN_JOBS = 200  # below it a p99 rests on one or two jobs
WEEK = 7 * DAY
CURVE_POINTS = 24

ASSUMPTIONS = (
    "jobs are independent: the same arrivals and run times whatever the pool (none waits on another's end)",
    "runners are interchangeable within a runner type, one job per runner, a fresh runner per job",
    "jobs are served first come, first served; a runner's slot is taken from the moment it is asked for",
    "a runner is launched when the GitHub Apps' and SSM's rates allow, then takes the start-up delay",
)

StartupSource = Literal["flag", "history", "thin history", "none"]


@dataclass(frozen=True)
class Startup:
    seconds: float
    source: StartupSource
    samples: int


@dataclass(frozen=True)
class Maximum:
    """The autoscaler's maximum (runners_maximum_count) as given, replayed: what binds there."""

    runners: int
    result: PoolResult
    waited_for_a_slot: int  # jobs whose queue time is more than the start-up and launch: they waited for a runner
    jobs: int
    waited_for_a_launch: int = 0  # jobs whose runner the launch ceilings held back
    launch_ceiling: str | None = None  # the launch ceiling that held most back (model/forecast/launch.py), if any

    @property
    def binds(self) -> str:
        said = []
        if self.waited_for_a_slot:
            share = self.waited_for_a_slot / max(self.jobs, 1)
            said.append(f"the maximum: {self.waited_for_a_slot:,} job(s) ({share:.1%}) waited for a free runner")
        if self.waited_for_a_launch:
            share = self.waited_for_a_launch / max(self.jobs, 1)
            said.append(
                f"the launch rate ({self.launch_ceiling}): {self.waited_for_a_launch:,} job(s) ({share:.1%}) "
                "waited for their runner's launch"
            )
        return "; and ".join(said) or "the start-up delay: the maximum is never reached"


@dataclass
class Capacity:
    """One runner type's answer."""

    name: str
    observed: Observed
    startup: Startup
    sizing: Sizing
    simulated_jobs: int
    days_over: int = 0  # days whose real peak ran more jobs at once than the sized pool
    days: int = 0
    share_above: float = 0.0  # of the range's time, more jobs really ran at once than the sized pool
    curve: list[PoolResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    maximum: Maximum | None = None
    pool: list[PoolEntry] = field(default_factory=list)
    pool_asked: bool = False
    pool_curves: list[list[PoolEntry]] = field(default_factory=list)  # per entry, by size from 0
    pool_what_if: tuple[int, list[PoolEntry]] | None = None  # --pool-size N: that pool in the proposed hours


def simulation_input(
    jobs: RunnerTypeJobs, end: float, launch: Sequence[float] | None = None
) -> tuple[array[float], array[float], array[float] | None]:
    """Arrivals and run times of the jobs that ran (a job still running at the end runs until then), and their
    waits for a launch where `launch` gives every job's (in the order of `jobs.queued`) and any is above 0."""
    arrivals = array("d")
    runs = array("d")
    waits = array("d")
    for index, (queued, started, completed) in enumerate(zip(jobs.queued, jobs.started, jobs.completed, strict=True)):
        if math.isnan(started):
            continue
        arrivals.append(queued)
        runs.append((end if math.isnan(completed) else completed) - started)
        waits.append(launch[index] if launch else 0.0)
    return arrivals, runs, (waits if any(waits) else None)


def choose_startup(observed: Observed, given: float | None) -> Startup:
    """The flag's; else the runner type's own, from the jobs queued below its ceiling (thin under MIN_SAMPLES,
    and said so); else none. Never another runner type's: its answer must not change with what else is asked
    about (another image or instance type starts in its own time)."""
    if given is not None:
        return Startup(given, "flag", observed.startup_samples)
    if observed.startup_samples >= MIN_SAMPLES:
        return Startup(observed.startup_median, "history", observed.startup_samples)
    if observed.startup_samples:
        return Startup(observed.startup_median, "thin history", observed.startup_samples)
    return Startup(0.0, "none", observed.startup_samples)


def analyse(
    jobs: dict[str, RunnerTypeJobs],
    start: float,
    end: float,
    target: Target,
    startup: float | None = None,
    plotted: Sequence[str] = (),
    maximum: int | Callable[[str], int | None] | None = None,
    pool: bool = False,
    pool_size: int | None = None,
    launch: Mapping[str, Sequence[float]] | None = None,
    launch_ceiling: str | None = None,
) -> list[Capacity]:
    """Every runner type's capacity, by name. `plotted` names the runner types whose curve of queue time
    against N is computed too; `launch` gives each runner type's jobs' waits for a launch (forecast/launch.py), named
    by `launch_ceiling`."""
    observed = {name: observe(of, end) for name, of in jobs.items()}
    answers: list[Capacity] = []
    for name in sorted(jobs):
        seen = observed[name]
        chosen = choose_startup(seen, startup)
        arrivals, runs, launched = simulation_input(jobs[name], end, (launch or {}).get(name))
        sizing = smallest_pool(arrivals, runs, chosen.seconds, target, launched)
        days = math.ceil(end // DAY - start // DAY + (1 if end % DAY else 0))  # UTC days the range touches
        answer = Capacity(name, seen, chosen, sizing, len(arrivals), days=days)
        if sizing.runners is not None:
            answer.days_over = sum(1 for _, peak in seen.daily_peaks if peak > sizing.runners)
            answer.share_above = time_above(jobs[name], end, sizing.runners) / max(end - start, 1.0)
        most = maximum(name) if callable(maximum) else maximum  # --max, or the config's for this runner type
        if most is not None and arrivals:
            answer.maximum = at_maximum(arrivals, runs, chosen.seconds, most, target, launched, launch_ceiling)
        if (pool or pool_size is not None) and arrivals:
            # Without a maximum, room enough that none binds: twice the pool past which more change nothing.
            runners = most or 2 * max(sizing.unlimited, 1)
            answer.pool_asked = True
            answer.pool = propose(arrivals, runs, chosen.seconds, runners, target, end - start)
            if name in plotted:  # --plot: each entry's cost against its queue time, at sizes 0 to twice its own
                answer.pool_curves = [
                    [
                        what_if(arrivals, runs, chosen.seconds, runners, size, entry.window, target, end - start)
                        for size in range(0, 2 * (entry.size or 1) + 1)
                    ]
                    for entry in answer.pool
                ]
            if pool_size is not None:
                windows = [e.window for e in answer.pool] or [Window("*", frozenset(range(7)), 0, 23)]
                answer.pool_what_if = (
                    pool_size,
                    [
                        what_if(arrivals, runs, chosen.seconds, runners, pool_size, w, target, end - start)
                        for w in windows
                    ],
                )
        if name in plotted and arrivals:
            answer.curve = curve(arrivals, runs, chosen.seconds, sizing, target, launched)
        answer.notes = thin_history(answer, end - start)
        if launched is not None and sizing.runners is None and arrivals:
            answer.notes.append(f"its runners' launches wait for {launch_ceiling}, which no pool size shortens")
        if jobs[name].lost:
            answer.notes.append(
                f"{jobs[name].lost} job(s) have no end recorded and ran, so far, longer than any of its jobs that "
                f"ended (or GitHub's 5-day limit): their completed event was lost; each is taken to have run "
                f"{format_duration(jobs[name].lost_bound)}"
                + (
                    " (GitHub's limit: none of its jobs ended)"
                    if jobs[name].lost_bound >= JOB_RUN_LIMIT
                    else ", its longest real run"
                )
            )
        answers.append(answer)
    return answers


def at_maximum(
    arrivals: array[float],
    runs: array[float],
    startup: float,
    runners: int,
    target: Target,
    launch: array[float] | None = None,
    launch_ceiling: str | None = None,
) -> Maximum:
    """The history replayed with at most `runners` at once: the queue times, the jobs that waited for a slot,
    and those whose runner's launch the launch ceilings held back."""
    waits = simulate(arrivals, runs, runners, startup, launch)
    launched = launch or array("d", bytes(8 * len(waits)))
    slot = sum(1 for wait, late in zip(waits, launched, strict=True) if wait > startup + late + 1e-6)
    held = sum(1 for late in launched if late > 0)
    return Maximum(
        runners,
        pool_result(arrivals, runs, runners, startup, target.percentile, launch),
        slot,
        len(waits),
        held,
        launch_ceiling if held else None,
    )


def curve(
    arrivals: array[float],
    runs: array[float],
    startup: float,
    sizing: Sizing,
    target: Target,
    launch: array[float] | None = None,
) -> list[PoolResult]:
    """Queue time against N, from 1 to the pool past which more runners change nothing (at most
    CURVE_POINTS sizes, evenly spread, the sized pool among them)."""
    top = max(sizing.unlimited, 1)
    step = max(1, math.ceil(top / CURVE_POINTS))
    sizes = set(range(1, top + 1, step)) | {top}
    if sizing.runners is not None:
        sizes.add(sizing.runners)
    known = {result.runners: result for result in sizing.tried}
    return [known.get(n) or pool_result(arrivals, runs, n, startup, target.percentile, launch) for n in sorted(sizes)]


def thin_history(answer: Capacity, span: float) -> list[str]:
    """Where this runner type's history is too thin to conclude from, said plainly."""
    notes: list[str] = []
    seen = answer.observed
    if span < WEEK:
        notes.append(f"the range is {format_duration(span)}, under a week: a weekly pattern is not in it")
    if seen.jobs < MIN_JOBS:
        notes.append(f"only {seen.jobs} job(s): under {MIN_JOBS}, the p99 and the sized pool rest on a handful")
    started = seen.jobs - seen.never_started
    if started and seen.startup_samples < MIN_SAMPLES and seen.startup_samples >= started / 2:
        notes.append(
            f"only {seen.startup_samples} job(s) queued below its ceiling: too few to read its start-up delay from"
        )
    elif started and seen.startup_samples < MIN_SAMPLES:
        notes.append(
            f"at its ceiling (as many jobs wanting a runner as ever ran at once) when all but "
            f"{seen.startup_samples} of its jobs were queued: capped, or nearly, the whole range; its queue times "
            f"show the cap, not the start-up, and how it runs with more runners is the model's alone"
        )
    if answer.startup.source == "thin history":
        notes.append(
            f"start-up delay {format_duration(answer.startup.seconds)} read from {answer.startup.samples} job(s) "
            "alone: give one with --startup if you know it better"
        )
    elif answer.startup.source == "none":
        notes.append("no start-up delay could be read from the history: 0 assumed; give one with --startup")
    if seen.never_started:
        notes.append(f"{seen.never_started} job(s) never started (cancelled, or queued at the end): not simulated")
    if answer.sizing.runners is None and answer.simulated_jobs:
        notes.append("no pool meets the target: the start-up delay alone breaks it")
    return notes
