"""Each forecast runner type's ForecastInputs (model/forecast/inputs.py), from what the tick reads already. Pure.

Which runner types: those a rule with `forecast:` selects (config resolved rules), watched, with tracking on.

- Demand, from the jobs' history (adapters/job_store.read_history, the read the triage makes for the runner
  types in breach, widened to these; collect/stage.py): the jobs queued in the triage window (the window the
  plain rule's evidence and the page's "42 jobs arrived in 15m" already use: at a busy pool's few jobs a
  minute, a shorter window widens the rate's 90% interval by sqrt(15/w) and moves the forecast on a burst
  shorter than a tick, which the forecast is documented not to see); the median run of the jobs that
  completed in the history read; the jobs running now and the median time they have run.
- The start-up delay: the median wait of the jobs that found no queue ahead of them. A job is counted when
  every job of its runner type queued before it had already left the queue (started, or cancelled) by the
  moment it was queued: nothing was waiting for a slot, so what it waited was the launch and boot of a
  runner (or an idle one's pick-up), not a slot's release. A job queued at a full pool with nothing ahead is
  counted too (it waited for a slot): the median keeps such a rare first-in-line wait from moving it.
- The runners and the maximum: the autoscaler's `Current runners` log line (autoscaler_log.latest_counts), or
  the `total_runners`/`max_runners` readings where the config names a metric for them and the tick read it.
  A log count older than STALE_COUNT_SECONDS keeps its maximum (configuration: it changes with a deploy) but
  not its runners: the forecast then counts as busy the slots of the jobs tracked running (outlook._runners).
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from queuewatch.config import Config
from queuewatch.model.autoscaler_log import RunnerCountLine
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.jobs import JobRecord
from queuewatch.model.runner_names import RunnerTypeNames
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot

STALE_COUNT_SECONDS = 300
"""A log count older than this is stale: the autoscaler writes one each time its scale-up runs for the pool,
so a busy pool's is a minute old or less; at five minutes (upstream's default runner boot time), runners it
launched have booted and runs have ended since, and the count says little about the slots free now."""


def forecast_runner_types(config: Config, names: Iterable[str]) -> set[str]:
    """The watched runner types a rule with `forecast:` selects."""
    return {name for name in names if any(rule.forecast_horizon for rule in config.rules_for(name))}


@dataclass
class Demand:
    """One runner type's recent jobs, as the history read them."""

    arrived: int = 0
    runs: list[float] = field(default_factory=list)  # run times of the jobs that completed in the read
    startups: list[float] = field(default_factory=list)  # waits of the jobs that found no queue ahead
    running: list[float] = field(default_factory=list)  # how long the jobs running now have run so far


def demand_from_history(
    jobs: Iterable[JobRecord], names: Iterable[str], now: datetime, window: int
) -> dict[str, Demand]:
    """Per runner type in `names`, its demand over the jobs read (each job once, in its latest state)."""
    split = now - timedelta(seconds=window)
    resolve = RunnerTypeNames(list(names))
    by_name: dict[str, list[JobRecord]] = defaultdict(list)
    for job in jobs:
        name = resolve.resolve(job.runner_type)
        if name is not None:
            by_name[name].append(job)
    out: dict[str, Demand] = {}
    for name, found in by_name.items():
        demand = Demand()
        for job in found:
            if split <= job.queued_since < now:
                demand.arrived += 1
            run = job.run_seconds
            if run is not None and job.completed_at is not None and job.completed_at <= now:
                demand.runs.append(run)
            elif job.status == "in_progress" and job.started_at is not None and job.started_at <= now:
                demand.running.append((now - job.started_at).total_seconds())
        demand.startups = _startups(found)
        out[name] = demand
    return out


def _startups(jobs: list[JobRecord]) -> list[float]:
    """The waits of the jobs that found no job ahead still queued (the module's docstring)."""
    ahead_left = -math.inf  # the latest moment a job queued earlier left the queue (inf: one has not)
    out: list[float] = []
    for job in sorted(jobs, key=lambda j: (j.queued_since, j.job_id)):
        queued = job.queued_since.timestamp()
        wait = job.queue_seconds
        if wait is not None and ahead_left <= queued:
            out.append(wait)
        left = job.started_at or (job.completed_at if job.status == "completed" else None)
        ahead_left = max(ahead_left, left.timestamp() if left is not None else math.inf)
    return out


@dataclass(frozen=True)
class RunnerCount:
    """The autoscaler's runners and maximum for one runner type, and when it counted them."""

    runners: int | None
    maximum: int | None
    at: datetime
    source: Literal["log", "metric"]


def count_from_log(line: RunnerCountLine | None) -> RunnerCount | None:
    """A count line as the forecast takes it. Upstream logs a maximum of -1 (no maximum: v7 writes
    currentRunners 0 without counting) as is: that pool never fills, and no maximum is given."""
    if line is None:
        return None
    maximum = line.maximum if line.maximum is not None and line.maximum >= 1 else None
    runners = line.current if maximum is not None and line.current is not None and line.current >= 0 else None
    return RunnerCount(runners=runners, maximum=maximum, at=line.at, source="log")


def count_from_metrics(runner_type: RunnerTypeSnapshot, now: datetime) -> RunnerCount | None:
    """The `total_runners`/`max_runners` readings the tick read for it (the config names a metric), if any."""
    total = runner_type.signals.get(SignalName.TOTAL_RUNNERS)
    maximum = runner_type.signals.get(SignalName.MAX_RUNNERS)
    if maximum is None or maximum.value is None or maximum.value < 1:
        return None
    runners = round(total.value) if total is not None and total.value is not None and total.value >= 0 else None
    age = max(maximum.age_seconds or 0.0, total.age_seconds or 0.0 if total is not None else 0.0)
    return RunnerCount(runners=runners, maximum=round(maximum.value), at=now - timedelta(seconds=age), source="metric")


def forecast_inputs(demand: Demand | None, count: RunnerCount | None, now: datetime, window: int) -> ForecastInputs:
    """One runner type's inputs: its demand (none read: nothing arrived or ran) and its count, if read."""
    demand = demand or Demand()
    age = max(0.0, (now - count.at).total_seconds()) if count is not None else None
    stale = count is not None and count.source == "log" and age is not None and age > STALE_COUNT_SECONDS
    return ForecastInputs(
        window_seconds=window,
        arrived=demand.arrived,
        run_seconds=_median(demand.runs),
        startup_seconds=_median(demand.startups),
        running=len(demand.running),
        running_seconds=_median(demand.running),
        runners=None if count is None or stale else count.runners,
        maximum=count.maximum if count is not None else None,
        runners_from=count.source if count is not None else None,
        runners_age_seconds=round(age, 1) if age is not None else None,
    )


def with_forecast(
    runner_type: RunnerTypeSnapshot,
    demand: Mapping[str, Demand],
    log_count: RunnerCount | None,
    now: datetime,
    window: int,
) -> RunnerTypeSnapshot:
    """The runner type with its inputs: the log's count where read, else the metrics'."""
    count = log_count or count_from_metrics(runner_type, now)
    inputs = forecast_inputs(demand.get(runner_type.name), count, now, window)
    return runner_type.model_copy(update={"forecast": inputs})


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None
