"""Each forecast runner type's ForecastInputs (model/forecast/inputs.py), from what the tick reads already. Pure.

Which runner types: those a rule with `forecast:` selects (config resolved rules), watched, with tracking on.

- Demand, from the jobs' history (adapters/job_store.read_history, the read the triage makes for the runner
  types in breach, widened to these; collect/stage.py): the jobs queued in the triage window (the window the
  plain rule's evidence and the page's "42 jobs arrived in 15m" already use: at a busy pool's few jobs a
  minute, a shorter window widens the rate's 90% interval by sqrt(15/w) and moves the forecast on a burst
  shorter than a tick, which the forecast is documented not to see); the median run of the jobs that
  completed in the history read; the jobs running now and the median time they have run.
- The start-up delay: the median wait of the jobs that found no queue ahead of them. The definitions are
  model/forecast/history.py's, which the backtest asks at every tick: one function for both.
- The runners and the maximum: the autoscaler's `Current runners` log line (autoscaler_log.latest_counts), or
  the `total_runners`/`max_runners` readings where the config names a metric for them and the tick read it.
  A log count older than STALE_COUNT_SECONDS (model/forecast/history.py) keeps its maximum but not its runners.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime

from queuewatch.config import Config
from queuewatch.model.autoscaler_log import RunnerCountLine
from queuewatch.model.forecast.history import JobTimes, PoolCount, forecast_inputs, with_pool
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.jobs import JobRecord
from queuewatch.model.runner_names import RunnerTypeNames
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot


def forecast_runner_types(config: Config, names: Iterable[str]) -> set[str]:
    """The watched runner types a rule with `forecast:` selects."""
    return {name for name in names if any(rule.forecast_horizon for rule in config.rules_for(name))}


def demand_from_history(
    jobs: Iterable[JobRecord], names: Iterable[str], now: datetime, window: int
) -> dict[str, ForecastInputs]:
    """Per runner type in `names` with jobs read, its demand (the inputs but the autoscaler's count). The read
    holds only the span it asked for, so every job it returns is read."""
    resolve = RunnerTypeNames(list(names))
    by_name: dict[str, list[JobTimes]] = defaultdict(list)
    for job in jobs:
        name = resolve.resolve(job.runner_type)
        times = JobTimes.of(job) if name is not None else None
        if name is not None and times is not None:
            by_name[name].append(times)
    at = now.timestamp()
    held = {name: math.ceil(at - min(t.queued for t in found)) for name, found in by_name.items()}  # all of it
    return {
        name: forecast_inputs(found, at, window=window, history=max(window, held[name]))
        for name, found in by_name.items()
    }


def count_from_log(line: RunnerCountLine | None, now: datetime) -> PoolCount | None:
    """A count line as the forecast takes it. Upstream logs a maximum of -1 (no maximum: v7 writes
    currentRunners 0 without counting) as is: that pool never fills, and no maximum is given."""
    if line is None:
        return None
    maximum = line.maximum if line.maximum is not None and line.maximum >= 1 else None
    runners = line.current if maximum is not None and line.current is not None and line.current >= 0 else None
    return PoolCount(runners, maximum, "log", max(0.0, (now - line.at).total_seconds()))


def count_from_metrics(runner_type: RunnerTypeSnapshot) -> PoolCount | None:
    """The `total_runners`/`max_runners` readings the tick read for it (the config names a metric), if any."""
    total = runner_type.signals.get(SignalName.TOTAL_RUNNERS)
    maximum = runner_type.signals.get(SignalName.MAX_RUNNERS)
    if maximum is None or maximum.value is None or maximum.value < 1:
        return None
    runners = round(total.value) if total is not None and total.value is not None and total.value >= 0 else None
    age = max(maximum.age_seconds or 0.0, total.age_seconds or 0.0 if total is not None else 0.0)
    return PoolCount(runners, round(maximum.value), "metric", age)


def with_forecast(
    runner_type: RunnerTypeSnapshot,
    demand: Mapping[str, ForecastInputs],
    log_count: PoolCount | None,
    window: int,
) -> RunnerTypeSnapshot:
    """The runner type with its inputs (none read: nothing arrived or ran): the log's count where read, else the
    metrics'."""
    inputs = demand.get(runner_type.name) or ForecastInputs(window_seconds=window, arrived=0)
    count = log_count or count_from_metrics(runner_type)
    return runner_type.model_copy(update={"forecast": with_pool(inputs, count) if count else inputs})
