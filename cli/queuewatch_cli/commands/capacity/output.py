"""`queuewatch capacity`'s output: the terminal table, the JSON document, and --plot's queue time against N."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from queuewatch.base.durations import format_duration
from queuewatch.base.wording import moment
from queuewatch.model.forecast.model import PoolResult, Target
from queuewatch_cli.commands.capacity.analysis import ASSUMPTIONS, Capacity
from queuewatch_cli.commands.capacity.history import DAY
from queuewatch_cli.commands.capacity.plot import MAX_PLOTTED
from queuewatch_cli.commands.capacity.pool import WEEK, PoolEntry

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _time(seconds: float) -> str:
    return "-" if math.isnan(seconds) else format_duration(seconds)


def _sized(answer: Capacity) -> str:
    if answer.sizing.runners is None:
        return "none" if answer.simulated_jobs else "-"
    return str(answer.sizing.runners)


def _over(answer: Capacity) -> str:
    if answer.sizing.runners is None:
        return "-"
    return f"{answer.days_over}/{answer.days} days, {answer.share_above:.1%} of the time"


def table(
    answers: Sequence[Capacity], start: float, end: float, target: Target, notes: Sequence[str] = ()
) -> list[str]:
    lines = [
        f"capacity from {_when(start)} to {_when(end)} ({_span(end - start)}); N: the fewest runners "
        f"for queue time {target}"
    ]
    header = ("runner type", "jobs", "queue p50", "p90", "p99", "worst", "run p50", "p90", "peak", "start-up", "N")
    rows = [header]
    for a in answers:
        seen = a.observed
        startup = f"{format_duration(a.startup.seconds)} ({a.startup.source})"
        rows.append(
            (
                a.name,
                f"{seen.jobs:,}",
                _time(seen.queue_p50),
                _time(seen.queue_p90),
                _time(seen.queue_p99),
                _time(seen.queue_worst),
                _time(seen.run_p50),
                _time(seen.run_p90),
                str(seen.peak_running),
                startup,
                _sized(a),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        lines.append(
            "  " + "  ".join(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row))
        )
    for a in answers:
        seen = a.observed
        lines.append(f"  {a.name}:")
        if a.sizing.result is not None:
            r = a.sizing.result
            lines.append(
                f"    with {r.runners} runners: queue p50 {_time(r.p50)}, p90 {_time(r.p90)}, p99 {_time(r.p99)}, "
                f"worst {_time(r.worst)}; the real fleet ran more at once on {_over(a)}"
            )
        if a.maximum is not None:
            m = a.maximum.result
            lines.append(
                f"    with the autoscaler's maximum {m.runners}: queue p50 {_time(m.p50)}, p90 {_time(m.p90)}, "
                f"p99 {_time(m.p99)}, worst {_time(m.worst)}; what binds: {a.maximum.binds}"
            )
        lines += pool_lines(a, target)
        lines.append(arrivals_by_hour(seen.arrivals_by_hour, end - start))
        lines.append(
            "    arrivals by weekday: "
            + ", ".join(f"{d} {n:,}" for d, n in zip(WEEKDAYS, seen.arrivals_by_weekday, strict=True))
        )
        lines += [f"    thin: {note}" for note in a.notes]
    lines += [f"  thin: {note}" for note in notes]
    lines.append("  the model assumes: " + "; ".join(ASSUMPTIONS))
    return lines


def arrivals_by_hour(counts: Sequence[int], held: float) -> str:
    """Arrivals per UTC hour: a daily rate only over a day or more of history; a shorter span gives its counts
    as they are, never scaled up to a day it does not hold."""
    if held >= DAY:
        return f"    arrivals a day by UTC hour 0-23: {' '.join(f'{n / (held / DAY):.0f}' for n in counts)}"
    return (
        f"    arrivals by UTC hour 0-23 in the {_span(held)} held (less than a day: counts, not a daily rate): "
        + " ".join(str(n) for n in counts)
    )


def _pool_entry(entry: PoolEntry, target: Target) -> str:
    size = "none meets the target" if entry.size is None else f"size {entry.size}"
    return (
        f"{entry.window.schedule_expression} UTC, {size}: p{target.percentile:g} in its hours "
        f"{_time(entry.before)} -> {_time(entry.after)} ({entry.jobs:,} jobs); {_pool_costs(entry)}"
    )


def _pool_costs(entry: PoolEntry) -> str:
    """A week's cost and gain over a week or more of history; a shorter one's totals, said as such."""
    if entry.instance_hours_a_week is not None and entry.queue_hours_saved_a_week is not None:
        return (
            f"costs {entry.instance_hours_a_week:.1f} idle instance-hours a week, buys "
            f"{entry.queue_hours_saved_a_week:.1f} hours of queue time a week"
        )
    return (
        f"costs {entry.idle_instance_hours:.1f} idle instance-hours over the {_span(entry.span)} of history, buys "
        f"{entry.queue_hours_saved:.1f} hours of queue time there (under a week: totals, not a weekly rate)"
    )


def pool_lines(answer: Capacity, target: Target) -> list[str]:
    """--pool: the pool_config entries proposed, each with what it costs and buys; --pool-size: the what-if."""
    lines = [f"    pool_config: {_pool_entry(entry, target)}" for entry in answer.pool]
    if answer.pool_asked and not answer.pool:
        lines.append("    pool_config: none: every hour with a job a day meets the target without a pool")
    if answer.pool_what_if is not None:
        size, entries = answer.pool_what_if
        lines += [f"    with a pool of {size}: {_pool_entry(entry, target)}" for entry in entries]
    return lines


def _pool_json(entry: PoolEntry) -> dict[str, Any]:
    return {
        **entry.config(),
        "jobs_in_hours": entry.jobs,
        "target_value_seconds": {"without": _figure(entry.before), "with": _figure(entry.after)},
        # a weekly rate over a week or more of history, else null: the totals below are the history's own
        "idle_instance_hours_a_week": _rounded(entry.instance_hours_a_week),
        "queue_hours_saved_a_week": _rounded(entry.queue_hours_saved_a_week),
        "idle_instance_hours": round(entry.idle_instance_hours, 2),
        "queue_hours_saved": round(entry.queue_hours_saved, 2),
        "history_seconds": round(entry.span),
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _span(seconds: float) -> str:
    days, rest = divmod(round(seconds), 86400)
    return f"{days}d" + (format_duration(rest) if rest else "") if days else format_duration(rest)


def _when(epoch: float) -> str:
    return moment(datetime.fromtimestamp(epoch, UTC))


def _figure(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 1)


def _pool(result: PoolResult) -> dict[str, Any]:
    return {
        "runners": result.runners,
        "queue_seconds": {
            "p50": _figure(result.p50),
            "p90": _figure(result.p90),
            "p99": _figure(result.p99),
            "worst": _figure(result.worst),
        },
    }


def document(
    answers: Sequence[Capacity], start: float, end: float, target: Target, notes: Sequence[str] = ()
) -> dict[str, Any]:
    return {
        "thin": list(notes),
        "from": datetime.fromtimestamp(start, UTC).isoformat(),
        "to": datetime.fromtimestamp(end, UTC).isoformat(),
        "target": {
            "text": str(target),
            "percentile": target.percentile,
            "seconds": target.seconds,
            "strict": target.strict,
        },
        "assumptions": list(ASSUMPTIONS),
        "runner_types": [_answer(a) for a in answers],
    }


def _answer(a: Capacity) -> dict[str, Any]:
    seen = a.observed
    return {
        "name": a.name,
        "jobs": seen.jobs,
        "never_started": seen.never_started,
        "arrivals_by_hour": list(seen.arrivals_by_hour),
        "arrivals_by_weekday": dict(zip(WEEKDAYS, seen.arrivals_by_weekday, strict=True)),
        "queue_seconds": {
            "p50": _figure(seen.queue_p50),
            "p90": _figure(seen.queue_p90),
            "p99": _figure(seen.queue_p99),
            "worst": _figure(seen.queue_worst),
        },
        "run_seconds": {"p50": _figure(seen.run_p50), "p90": _figure(seen.run_p90)},
        "peak_running": seen.peak_running,
        "daily_peaks": dict(seen.daily_peaks),
        "startup": {"seconds": round(a.startup.seconds, 1), "source": a.startup.source, "samples": a.startup.samples},
        "sized": None if a.sizing.result is None else _pool(a.sizing.result),
        "unlimited_runners": a.sizing.unlimited,
        "real_peak_over_sized": None
        if a.sizing.runners is None
        else {"days": a.days_over, "of_days": a.days, "share_of_time": round(a.share_above, 4)},
        "maximum": None
        if a.maximum is None
        else {**_pool(a.maximum.result), "waited_for_a_slot": a.maximum.waited_for_a_slot, "binds": a.maximum.binds},
        "pool_config": [_pool_json(entry) for entry in a.pool],
        "pool_what_if": None
        if a.pool_what_if is None
        else {"size": a.pool_what_if[0], "entries": [_pool_json(entry) for entry in a.pool_what_if[1]]},
        "tried": [_pool(r) for r in a.sizing.tried],
        "curve": [_pool(r) for r in a.curve],
        "thin": a.notes,
    }


def draw(answers: Sequence[Capacity], target: Target, path: str) -> None:
    """--plot's picture (capacity/plot.py), written to `path`."""
    from queuewatch_cli.commands.capacity.plot import draw as draw_plot

    draw_plot(answers, target, path)


def draw_pool(answers: Sequence[Capacity], target: Target, path: str) -> None:
    """--pool --plot: per pool_config entry, the idle instance-hours a week it costs (x; over a shorter history,
    its totals there) against the queue time at the target's percentile in its hours (y), for sizes from 0 to
    twice the one proposed (marked)."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(10, 5), dpi=100)
    drawn = 0
    spans = [p.span for a in answers for points in a.pool_curves for p in points]
    weekly = all(span >= WEEK for span in spans)

    def cost(entry: PoolEntry) -> float:
        return entry.idle_instance_hours / (entry.span / WEEK) if weekly else entry.idle_instance_hours

    for a in answers:
        for entry, points in zip(a.pool, a.pool_curves, strict=False):
            if drawn == MAX_PLOTTED:
                break
            label = f"{a.name} {entry.window.schedule_expression}"
            (line,) = axes.plot([cost(p) for p in points], [p.after / 60 for p in points], marker=".", label=label)
            chosen = [p for p in points if p.size == entry.size]
            if chosen:
                axes.plot(cost(chosen[0]), chosen[0].after / 60, "o", color=line.get_color())
            drawn += 1
    if not drawn:
        axes.text(0.5, 0.5, "no pool proposed", transform=axes.transAxes, ha="center", va="center", fontsize=14)
    axes.axhline(target.seconds / 60, color="grey", linestyle="--", linewidth=0.8, label=f"target {target}")
    per = "a week" if weekly else f"over the {_span(min(spans))} of history (under a week: not a weekly rate)"
    axes.set_xlabel(f"idle pool instance-hours {per} (what the pool costs)")
    axes.set_ylabel(f"queue time p{target.percentile:g} in its hours (minutes)")
    axes.set_title("queuewatch capacity --pool: each schedule's cost against the queue time it buys (o: proposed)")
    axes.grid(alpha=0.3)
    axes.legend(loc="best", fontsize=8)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
