"""`backtest --forecast`: each tick's forecast inputs per runner type, as the live collector would read them from
the same history (queuewatch/model/forecast/history.py, the definition both share).

The jobs: at each tick, a runner type's jobs queued over the triage's window and baseline (the span the collector
reads), held in a queue by when they were queued, and the shared function reads them as of that tick: a job's
later start or completion is not seen before it happened.

The pool: the jobs table does not keep the autoscaler's runner count or its maximum. So:
- the maximum is the config's runners_maximum_count for the runner type (what `capacity --config` replays),
  else `--max N`; a runner type with neither has no forecast, and the report says so;
- the runners counted are the scale-up's own `Current runners` counts where the user gives them
  (`--runner-counts FILE`: exported from its log group, which keeps them as long as its retention), the
  latest at or before the tick, with its maximum; else the jobs running, as the forecast counts them anyway.
"""

from __future__ import annotations

import csv
import io
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from queuewatch.base.errors import QueuewatchError
from queuewatch.config import Config
from queuewatch.model.forecast.history import JobTimes, PoolCount, forecast_inputs
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch_cli.commands.backtest.jobs import NEVER, JobSpans


@dataclass(frozen=True)
class RunnerCounts:
    """The autoscaler's counts of one runner type's runners over time: (epoch seconds, runners, maximum)."""

    moments: array[int] = field(default_factory=lambda: array("q"))
    runners: array[int] = field(default_factory=lambda: array("q"))
    maximums: array[int] = field(default_factory=lambda: array("q"))


def parse_runner_counts(text: str, source: str) -> dict[str, RunnerCounts]:
    """CSV with a header naming `time`, `runner_type`, `runners` and `maximum` (other columns ignored): one
    `Current runners` log line each, time in ISO 8601 (UTC unless it says)."""
    reader = csv.DictReader(io.StringIO(text))
    wanted = ("time", "runner_type", "runners", "maximum")
    missing = [name for name in wanted if name not in (reader.fieldnames or [])]
    if missing:
        raise QueuewatchError(
            f"--runner-counts {source}, line 1: found columns {', '.join(reader.fieldnames or []) or 'none'}, "
            f"expected a header with {', '.join(wanted)}"
        )
    rows: dict[str, list[tuple[int, int, int]]] = {}
    for row in reader:
        where = f"--runner-counts {source}, line {reader.line_num}"
        try:
            at = datetime.fromisoformat(row["time"].strip())
            runners, maximum = int(row["runners"]), int(row["maximum"])
        except (ValueError, AttributeError, TypeError):
            raise QueuewatchError(
                f"{where}: found {row!r}, expected an ISO time, a runner type, and whole runners and maximum "
                "(such as 2026-05-01T09:00:00Z,linux.2xlarge,47,50)"
            ) from None
        if runners < 0 or maximum < 1:
            raise QueuewatchError(f"{where}: runners {runners} and maximum {maximum}: expected runners >= 0, max >= 1")
        moment = at if at.tzinfo else at.replace(tzinfo=UTC)
        rows.setdefault(row["runner_type"].strip(), []).append((int(moment.timestamp()), runners, maximum))
    counts: dict[str, RunnerCounts] = {}
    for name, found in rows.items():
        series = RunnerCounts()
        for moment_, runners, maximum in sorted(found):
            series.moments.append(moment_)
            series.runners.append(runners)
            series.maximums.append(maximum)
        counts[name] = series
    return counts


def read_runner_counts(path: str) -> dict[str, RunnerCounts]:
    try:
        return parse_runner_counts(Path(path).read_text(encoding="utf-8"), path)
    except (OSError, UnicodeDecodeError) as error:
        raise QueuewatchError(f"--runner-counts {path}: {error}") from None


def forecast_runner_types(config: Config, names: list[str]) -> list[int]:
    """The indexes of the runner types a rule with `forecast:` selects: only those get inputs, as live."""
    forecasting = [rule for rule in config.resolved_rules if rule.forecast_horizon is not None and not rule.path]
    return [index for index, name in enumerate(names) if any(rule.applies_to(name) for rule in forecasting)]


def maximum_of(config: Config, given: int | None) -> Callable[[str], int | None]:
    """A runner type's maximum: the config's runners_maximum_count, else `--max`."""
    configured = {spec.name: spec.runners_maximum_count for spec in config.runner_types}

    def maximum(name: str) -> int | None:
        found = configured.get(name, configured.get(name.split("@", 1)[0]))
        return found if found is not None else given

    return maximum


class ForecastFeed:
    """The forecast inputs of the chosen runner types at each tick, ticks in order."""

    def __init__(
        self,
        spans: JobSpans,
        names: list[str],
        chosen: list[int],
        maximum: Callable[[str], int | None],
        counts: dict[str, RunnerCounts] | None = None,
        *,
        window: int,
        history: int,
    ) -> None:
        assert len(spans.started) == len(spans), "job_spans(..., times=True) keeps the starts a forecast needs"
        self.spans = spans
        self.chosen = chosen
        self.window, self.history = window, history
        wanted = set(chosen)
        self.order = sorted(
            (j for j in range(len(spans)) if spans.runner_types[j] in wanted), key=spans.began.__getitem__
        )
        self.next = 0
        self.held: dict[int, deque[JobTimes]] = {index: deque() for index in chosen}
        self.maximums = {index: maximum(names[index]) for index in chosen}
        counts = counts or {}
        self.counts = {index: counts[names[index]] for index in chosen if names[index] in counts}
        self.read = {index: 0 for index in self.counts}  # the next count not yet reached, per runner type

    def inputs_at(self, tick: int) -> dict[int, ForecastInputs]:
        spans = self.spans
        while self.next < len(self.order) and spans.began[job := self.order[self.next]] <= tick:
            self.next += 1
            started, completed = spans.started[job], spans.completed[job]
            self.held[spans.runner_types[job]].append(
                JobTimes(
                    float(spans.began[job]),
                    None if started == NEVER else float(started),
                    None if completed == NEVER else float(completed),
                )
            )
        found: dict[int, ForecastInputs] = {}
        for index in self.chosen:
            held = self.held[index]
            while held and held[0].queued < tick - self.history:
                held.popleft()
            pool = self._pool(index, tick)
            found[index] = forecast_inputs(held, float(tick), window=self.window, history=self.history, pool=pool)
        return found

    def _pool(self, index: int, tick: int) -> PoolCount:
        series = self.counts.get(index)
        if series is not None:
            at = self.read[index]
            while at < len(series.moments) and series.moments[at] <= tick:
                at += 1
            self.read[index] = at
            if at:
                latest = at - 1
                return PoolCount(
                    series.runners[latest], series.maximums[latest], "log", float(tick - series.moments[latest])
                )
        return PoolCount(None, self.maximums[index])
