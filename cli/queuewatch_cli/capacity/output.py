"""`queuewatch capacity`'s output: the terminal table, the JSON document, and --plot's queue time against N."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from queuewatch.durations import format_duration
from queuewatch_cli.capacity.analysis import ASSUMPTIONS, Capacity
from queuewatch_cli.capacity.history import DAY
from queuewatch_cli.capacity.simulate import PoolResult, Target

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
        f"capacity from {_when(start)} to {_when(end)} UTC ({_span(end - start)}); N: the fewest runners "
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
    days = max((end - start) / DAY, 1 / 24)
    for a in answers:
        seen = a.observed
        lines.append(f"  {a.name}:")
        if a.sizing.result is not None:
            r = a.sizing.result
            lines.append(
                f"    with {r.runners} runners: queue p50 {_time(r.p50)}, p90 {_time(r.p90)}, p99 {_time(r.p99)}, "
                f"worst {_time(r.worst)}; the real fleet ran more at once on {_over(a)}"
            )
        per_hour = " ".join(f"{count / days:.0f}" for count in seen.arrivals_by_hour)
        lines.append(f"    arrivals a day by UTC hour 0-23: {per_hour}")
        lines.append(
            "    arrivals by weekday: "
            + ", ".join(f"{d} {n:,}" for d, n in zip(WEEKDAYS, seen.arrivals_by_weekday, strict=True))
        )
        lines += [f"    thin: {note}" for note in a.notes]
    lines += [f"  thin: {note}" for note in notes]
    lines.append("  the model assumes: " + "; ".join(ASSUMPTIONS))
    return lines


def _span(seconds: float) -> str:
    days, rest = divmod(round(seconds), 86400)
    return f"{days}d" + (format_duration(rest) if rest else "") if days else format_duration(rest)


def _when(epoch: float) -> str:
    return f"{datetime.fromtimestamp(epoch, UTC):%Y-%m-%d %H:%M}"


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
        "tried": [_pool(r) for r in a.sizing.tried],
        "curve": [_pool(r) for r in a.curve],
        "thin": a.notes,
    }


def draw(answers: Sequence[Capacity], target: Target, path: str) -> None:
    """--plot's picture (capacity/plot.py), written to `path`."""
    from queuewatch_cli.capacity.plot import draw as draw_plot

    draw_plot(answers, target, path)
