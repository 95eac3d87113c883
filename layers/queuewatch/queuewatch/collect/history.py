"""The triage's evidence from the jobs' own history (tracking on): arrivals in the window against the usual,
and run times against the usual, per runner type, read from the jobs table instead of a metric per runner
type. Pure: the jobs come from adapters/job_store.read_history, one paged Query per day and history shard
of the runner types that breach a rule, whatever the fleet's size.

A signal the config names a source for (`sqs`, or a metric query) keeps it; the history fills in the rest.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from queuewatch.model.jobs import JobRecord
from queuewatch.model.runner_names import RunnerTypeNames
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading

HISTORY_SIGNALS = (SignalName.JOB_ARRIVALS, SignalName.JOB_DURATION)
"""The triage's signals the jobs' history can give."""


def from_history(configured: Iterable[SignalName]) -> set[SignalName]:
    """The history's signals a runner type's config leaves without a source."""
    return set(HISTORY_SIGNALS) - set(configured)


@dataclass
class _Tally:
    arrived: int = 0  # queued for a runner in the window
    arrived_before: int = 0  # ... in the baseline before it
    runs: list[float] = field(default_factory=list)  # run times of the jobs that completed in the window
    runs_before: list[float] = field(default_factory=list)  # ... that completed in the baseline
    running: list[float] = field(default_factory=list)  # how long the jobs running now have run so far


def history_span(now: datetime, window: int, baseline: int) -> tuple[datetime, datetime]:
    """What the evidence reads: the jobs queued over the baseline and the window, up to now."""
    return now - timedelta(seconds=window + baseline), now


def history_readings(
    jobs: Iterable[JobRecord], wanted: Mapping[str, set[SignalName]], now: datetime, window: int, baseline: int
) -> dict[str, dict[SignalName, Reading]]:
    """Per runner type in `wanted`, the readings of the signals it wants from the history.

    - job_arrivals (a count): the jobs queued for a runner in the window (window_sum), and the usual number
      per window over the baseline before it (baseline_sum), as a metric's sums would be.
    - job_duration (a level): the mean run time of the jobs that completed in the window, or, if none did,
      of the jobs running now so far (a lower bound: they are not done); baseline_mean, the mean run time of
      the jobs that completed in the baseline. None when no job ran in the window at all.

    A job whose queued time is before the span (a run longer than the window and baseline) is not read.
    """
    split = now - timedelta(seconds=window)
    start = split - timedelta(seconds=baseline)
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    # A discovered runner type's jobs carry its name in lower case: the one resolver says whose they are.
    names = RunnerTypeNames(wanted)
    for job in jobs:
        name = names.resolve(job.runner_type)
        if name is None:
            continue
        tally = tallies[name]
        queued = job.queued_since
        if split <= queued < now:
            tally.arrived += 1
        elif start <= queued < split:
            tally.arrived_before += 1
        run = job.run_seconds
        if run is not None and job.completed_at is not None:
            if split <= job.completed_at <= now:
                tally.runs.append(run)
            elif start <= job.completed_at < split:
                tally.runs_before.append(run)
        elif job.status == "in_progress" and job.started_at is not None and job.started_at <= now:
            tally.running.append((now - job.started_at).total_seconds())
    out: dict[str, dict[SignalName, Reading]] = {}
    for name, signals in wanted.items():
        tally = tallies.get(name, _Tally())
        readings: dict[SignalName, Reading] = {}
        if SignalName.JOB_ARRIVALS in signals:
            readings[SignalName.JOB_ARRIVALS] = Reading(
                value=tally.arrived,
                age_seconds=0.0,
                window_sum=tally.arrived,
                baseline_sum=round(tally.arrived_before * window / baseline, 2),
            )
        if SignalName.JOB_DURATION in signals:
            recent = tally.runs or tally.running
            if recent:
                readings[SignalName.JOB_DURATION] = Reading(
                    value=round(sum(recent) / len(recent), 2),
                    age_seconds=0.0,
                    baseline_mean=round(sum(tally.runs_before) / len(tally.runs_before), 2)
                    if tally.runs_before
                    else None,
                )
        out[name] = readings
    return out


def history_missing(wanted: Mapping[str, set[SignalName]], reason: str) -> dict[str, dict[SignalName, Reading]]:
    """Why the history could not be read, for each signal that would have come from it."""
    return {
        name: {signal: Reading.missing(f"jobs table: {reason}") for signal in signals}
        for name, signals in wanted.items()
    }
