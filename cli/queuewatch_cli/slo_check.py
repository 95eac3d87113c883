"""What check-config says about each SLO: its budget, what each burn alert means, and the history it needs."""

from __future__ import annotations

from queuewatch.config.schema import Config
from queuewatch.config.slos import history_days_needed
from queuewatch.durations import format_duration
from queuewatch.jobs import HISTORY_DAYS
from queuewatch.slo import Slo

_DAY = 86400


def slo_lines(config: Config, jobs_per_day: dict[str, float] | None = None) -> list[str]:
    """One block per SLO. `jobs_per_day`: each SLO's jobs a day from the history, when it could be read;
    without it the budget in jobs is said to be unknown, never guessed."""
    lines: list[str] = []
    for slo in config.resolved_slos:
        lines += _slo(slo, None if jobs_per_day is None else jobs_per_day.get(slo.name))
    return lines


def _slo(slo: Slo, per_day: float | None) -> list[str]:
    days = slo.window // _DAY
    lines = [
        f"slo {slo.name}: {slo.objective * 100:g}% of jobs start within {format_duration(slo.queue_time_under)}, "
        f"over {days}d; team {slo.team}",
        f"  budget: {slo.budget * 100:g}% of the window's jobs may start later (or still wait past it)",
    ]
    if per_day is None:
        lines.append("  budget in jobs: unknown here (no jobs' history read); `queuewatch slo` gives it from the stack")
    else:
        jobs = per_day * days
        lines.append(
            f"  budget in jobs: {slo.budget * jobs:,.0f} of {jobs:,.0f} jobs over {days}d "
            f"at today's {per_day:,.0f} a day"
        )
    for alert in slo.burn_alerts:
        share = alert.factor * alert.long_window / slo.window
        long, short = format_duration(alert.long_window), format_duration(alert.short_window)
        lines.append(
            f"  {alert.name} ({alert.notify}): burn >= {alert.factor:g} over {long} and {short}: "
            f"{share * 100:.1f}% of the budget spent in {long}; needs {slo.min_jobs} jobs in the {long}"
        )
    if slo.page_when_waiting_over is not None:
        lines.append(f"  ceiling: one job waiting over {format_duration(slo.page_when_waiting_over)} pages")
    needed = history_days_needed(slo)
    note = "" if needed <= HISTORY_DAYS else f" (the default is {HISTORY_DAYS}: set the stack's parameter)"
    lines.append(
        f"  JobHistoryDays >= {needed} keeps the window's jobs in the history{note}; the alerts read the SLO's "
        "own counters, kept for the window and a day"
    )
    return lines
