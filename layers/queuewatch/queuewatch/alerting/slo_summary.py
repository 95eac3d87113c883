"""Each SLO over its window, as the live evaluator counts it (pure): the objective, what was achieved, the
budget left in jobs and as a share, each burn pair's rates now, and the runner types and hours whose late jobs
spent the budget. `queuewatch slo`, `status` and the weekly digest (digest/) read the same summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from queuewatch.alerting.slo_reading import add_waiting, reading_of
from queuewatch.base.wording import moment
from queuewatch.config import Config
from queuewatch.model.jobs import JobRecord
from queuewatch.model.slo import (
    Counts,
    Slo,
    Tally,
    boundary,
    budget_left,
    judge_pair,
    outcome_of,
    waiting_outcome,
    window_span,
)


@dataclass(frozen=True)
class PairNow:
    name: str
    notify: str
    factor: float
    long_burn: float
    short_burn: float
    long_jobs: int
    firing: bool


@dataclass(frozen=True)
class SloSummary:
    name: str
    objective: float
    queue_time_under_seconds: int
    window_days: int
    history_from: str | None  # the first minute counted in the window: later than its start, a shorter history
    jobs: int
    bad: int
    achieved: float | None  # None over no jobs
    budget_left_jobs: float
    budget_left_fraction: float
    pairs: list[PairNow]
    spent_by_runner_type: list[tuple[str, int]] = field(default_factory=list)  # late jobs, most first
    spent_by_hour: list[tuple[str, int]] = field(default_factory=list)  # the UTC hours they turned late in


def spenders(
    slo: Slo, config: Config, jobs: Iterable[JobRecord], now: datetime, since: datetime, top: int
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """Which runner types, and which hours, the SLO's late jobs since `since` came from (the jobs' history and
    the jobs queued now, as the counters count them: at the moment each turned late)."""
    by_type: Counter[str] = Counter()
    by_hour: Counter[str] = Counter()
    for job in jobs:
        if job.queued_at is None or not slo.selects(job.runner_type, config.team_of(job.runner_type or ""), job.labels):
            continue
        started = job.started_at if job.started_at is not None and job.started_at <= now else None
        decided = (
            outcome_of(job.queued_at, started, job.completed_at, slo.queue_time_under)
            if started or job.completed_at
            else waiting_outcome(job.queued_at, now, slo.queue_time_under)
        )
        if decided is None or decided[0] != "bad" or not since <= decided[1] <= now:
            continue
        by_type[job.runner_type or ""] += 1
        by_hour[f"{decided[1]:%Y-%m-%dT%H:00Z}"] += 1
    return by_type.most_common(top), by_hour.most_common(top)


def longest_window(slo: Slo) -> int:
    """The longest window a summary counts: the SLO's own, or a longer burn window."""
    return max(slo.window, slo.longest_burn_window)


def summarize(slo: Slo, config: Config, counted: Tally, queued: list[JobRecord], now: datetime) -> SloSummary:
    """One SLO now, from its counters over the window (adapters/slo_table/counters.py `read_tally` of `longest_window`)
    and the jobs queued now."""
    tally = counted.copy()
    add_waiting(tally, slo, config, queued, now)
    total = tally.window(now, slo.window)
    left_jobs, left_fraction = budget_left(total, slo)
    reading = reading_of(slo, config, counted, queued, now)
    pairs = []
    for alert in slo.burn_alerts:
        long, short = reading.window(alert.long_window), reading.window(alert.short_window)
        pair = judge_pair(
            slo,
            alert,
            Counts(long.good, long.bad) if long else Counts(),
            Counts(short.good, short.bad) if short else Counts(),
        )
        pairs.append(
            PairNow(
                alert.name, alert.notify, alert.factor, pair.long_burn, pair.short_burn, pair.long.total, pair.firing
            )
        )
    first = tally.first_counted(window_span(now, slo.window)[0])
    return SloSummary(
        name=slo.name,
        objective=slo.objective,
        queue_time_under_seconds=slo.queue_time_under,
        window_days=slo.window // 86400,
        history_from=first.isoformat() if first else None,
        jobs=total.total,
        bad=total.bad,
        achieved=total.good / total.total if total.total else None,
        budget_left_jobs=left_jobs,
        budget_left_fraction=left_fraction,
        pairs=pairs,
    )


def lines(summary: SloSummary) -> list[str]:
    achieved = f"{summary.achieved * 100:.2f}%" if summary.achieved is not None else "no jobs"
    since = f", history from {moment(summary.history_from)}" if summary.history_from else ""
    out = [
        f"{summary.name}: objective {summary.objective * 100:g}% within {summary.queue_time_under_seconds}s over "
        f"{summary.window_days}d{since}",
        f"  {boundary(summary.queue_time_under_seconds)}",
        f"  achieved {achieved} of {summary.jobs:,} jobs ({summary.bad:,} late); budget left "
        f"{summary.budget_left_jobs:,.1f} jobs, {summary.budget_left_fraction * 100:.1f}%",
    ]
    if summary.spent_by_runner_type:
        listed = ", ".join(f"{name} {count:,}" for name, count in summary.spent_by_runner_type)
        out.append(f"  late jobs by runner type: {listed}")
        out.append("  by hour: " + ", ".join(f"{moment(hour)} {count:,}" for hour, count in summary.spent_by_hour))
    for pair in summary.pairs:
        state = "FIRING" if pair.firing else "ok"
        out.append(
            f"  {pair.name} ({pair.notify}, {pair.factor:g}): burn {pair.long_burn:.2f} long, "
            f"{pair.short_burn:.2f} short, {pair.long_jobs:,} jobs in the long window: {state}"
        )
    return out
