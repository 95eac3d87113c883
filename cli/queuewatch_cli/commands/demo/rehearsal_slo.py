"""The rehearsal's SLOs (rehearsal.py): each SLO burns on a runner type it selects, and pages as the backtest of
the same tracked jobs replays it.

An SLO counts tracked jobs, not queue figures, so it is rehearsed on jobs of its own: on a runner type it
selects (one the rehearsal seeds, else one the config names), jobs arrive every minute for LATE_MINUTES, each
starting a minute past the SLO's `queue_time_under`, so that every one is bad and each burn pair the objective
allows fires; then none, until the burn has cleared. The jobs go to a jobs table; at each minute the evaluate
stage judges the SLO readings the collector would read from the counters the track stage would have kept by
then (the backtest's SloCounters, the same counting), and `backtest --jobs-table` replays that table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.base.wording import plural
from queuewatch.config import Config
from queuewatch.model.jobs import PROGRESS, JobRecord

LATE_MINUTES = 20
QUIET_MINUTES = 30  # past the short windows of the page pairs (5 and 30 minutes by default): the burn clears
FIRST_JOB_ID = 7_000_000


@dataclass(frozen=True)
class SloSeed:
    """One SLO's late jobs, and what they are in words."""

    slo: str
    jobs: list[JobRecord]
    said: str


def slo_plan(config: Config, seeded: list[str], start: datetime) -> tuple[list[SloSeed], list[str]]:
    """Each SLO's jobs from `start`, and in words the SLOs the rehearsal cannot burn."""
    candidates = [*seeded, *(spec.name for spec in config.runner_types if spec.name not in seeded)]
    plan: list[SloSeed] = []
    notes: list[str] = []
    next_id = FIRST_JOB_ID
    for slo in config.resolved_slos:
        labels = tuple(sorted({*slo.labels, "self-hosted"}))
        name = next((n for n in candidates if slo.selects(n, config.team_of(n), labels)), None)
        if name is None:
            notes.append(f"SLO {slo.name}: not rehearsed: it selects none of the runner types the rehearsal seeds")
            continue
        if not slo.burn_alerts or all(alert.factor * slo.budget >= 1 for alert in slo.burn_alerts):
            notes.append(f"SLO {slo.name}: not rehearsed: at objective {slo.objective:.4g} no burn alert can fire")
            continue
        per_minute = max(1, math.ceil(2 * slo.min_jobs / LATE_MINUTES))
        wait = timedelta(seconds=slo.queue_time_under + 60)
        jobs = []
        for minute in range(LATE_MINUTES):
            for _ in range(per_minute):
                queued = start + timedelta(minutes=minute)
                jobs.append(_late_job(next_id, name, labels, queued, queued + wait))
                next_id += 1
        said = (
            f"SLO {slo.name}: {plural(len(jobs), 'job')} on {name} over {LATE_MINUTES} minutes, each waiting "
            f"{int(wait.total_seconds() // 60)}m (over its {slo.queue_time_under // 60}m), then none"
        )
        plan.append(SloSeed(slo.name, jobs, said))
    return plan, notes


def _late_job(job_id: int, runner_type: str, labels: tuple[str, ...], queued: datetime, started: datetime) -> JobRecord:
    completed = started + timedelta(minutes=5)
    return JobRecord(
        job_id=job_id,
        run_id=job_id,
        status="completed",
        progress=PROGRESS["completed"],
        runner_type=runner_type,
        labels=labels,
        label_set=",".join(labels),
        org="rehearsal",
        repo="rehearsal/ci",
        html_url=None,
        created_at=queued,
        queued_at=queued,
        started_at=started,
        completed_at=completed,
        updated_at=completed,
        expires_at=queued + timedelta(days=14),
    )
