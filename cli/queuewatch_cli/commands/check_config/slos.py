"""What check-config says about each SLO: its budget, what each burn alert means, and the history it needs."""

from __future__ import annotations

from collections.abc import Iterable

from queuewatch.base.durations import format_duration
from queuewatch.config.schema import Config
from queuewatch.config.slos import history_days_needed
from queuewatch.model.jobs import HISTORY_DAYS, JobRecord
from queuewatch.model.slo import Slo

_DAY = 86400
# A job's item and its history index entry, as DynamoDB bills their storage (docs/COST.md: 14 days of
# 50,000 jobs a day hold 0.84 GB), at DynamoDB's standard-class $0.25 a GB-month.
HISTORY_BYTES_PER_JOB = 1200
STORAGE_USD_PER_GB_MONTH = 0.25
COSTED_VOLUME = 50_000  # the jobs a day the cost is stated at when the stack's volume was not read


def history_usd_a_month(jobs_per_day: float, days: int) -> float:
    """What keeping `days` of jobs' history costs a month in DynamoDB storage."""
    return jobs_per_day * days * HISTORY_BYTES_PER_JOB / 1e9 * STORAGE_USD_PER_GB_MONTH


def jobs_per_day(config: Config, jobs: Iterable[JobRecord]) -> tuple[dict[str, float], float]:
    """Each SLO's jobs in one day of history (the jobs it selects), and the whole fleet's."""
    per_slo = dict.fromkeys((slo.name for slo in config.resolved_slos), 0.0)
    fleet = 0.0
    for job in jobs:
        fleet += 1
        team = config.team_of(job.runner_type) if job.runner_type is not None else None
        for slo in config.resolved_slos:
            if slo.selects(job.runner_type, team, job.labels):
                per_slo[slo.name] += 1
    return per_slo, fleet


def slo_lines(
    config: Config, jobs_per_day: dict[str, float] | None = None, fleet_per_day: float | None = None
) -> list[str]:
    """One block per SLO. `jobs_per_day`: each SLO's jobs a day from the history, when it could be read;
    without it the budget in jobs is said to be unknown, never guessed. `fleet_per_day`: every job of the
    fleet a day, which the history's storage grows with (else its cost is stated at COSTED_VOLUME)."""
    lines: list[str] = []
    for slo in config.resolved_slos:
        lines += _slo(slo, None if jobs_per_day is None else jobs_per_day.get(slo.name), fleet_per_day)
    return lines


def _slo(slo: Slo, per_day: float | None, fleet_per_day: float | None = None) -> list[str]:
    days = slo.window // _DAY
    lines = [
        f"slo {slo.name}: {slo.objective * 100:g}% of jobs start within {format_duration(slo.queue_time_under)}, "
        f"over {days}d; team {slo.team}",
        f"  budget: {slo.budget * 100:g}% of the window's jobs may start later (or still wait past it)",
    ]
    if per_day is None:
        lines.append("  budget in jobs: unknown here (no jobs' history read: --stack NAME gives it at today's volume)")
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
    volume = fleet_per_day if fleet_per_day is not None else COSTED_VOLUME
    measured = "today's" if fleet_per_day is not None else "a fleet's"
    lines.append(
        f"  the history's storage at {needed} days: ${history_usd_a_month(volume, needed):,.2f} a month at "
        f"{measured} {volume:,.0f} jobs a day (${history_usd_a_month(volume, 1):,.3f} a day kept; docs/COST.md)"
    )
    return lines
