"""`queuewatch backtest --suggest`'s objectives for the config's SLOs: from what the fleet achieved over the
range, the queue time under which 99% (and 95%) of each SLO's jobs started, with the SLO pages that objective
would have sent over the same range, replayed through the backtest's SLO replay (slo_replay.py).

Which jobs count: those the SLO selects, queued for a runner within the range. A job that started counts with
its queue time; one still waiting at the range's end counts with its wait so far (it was at least that late);
one cancelled before it started has no queue time and is left out. The proposed threshold is the least whole
second under which at least the objective's share of those jobs started (a job is good when it starts
sooner than the threshold), so the fleet, as it ran, met the proposed objective exactly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from queuewatch.alerting.alert_state import PageKind
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import moment
from queuewatch.config import Config
from queuewatch.config.slos import SloSpec
from queuewatch.evaluate.slo import ticket_rule_name
from queuewatch.model.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.model.slo import Slo
from queuewatch_cli.commands.backtest.slo_replay import replay_slos

OBJECTIVES = ("99%", "95%")  # as a config writes them: parsed as the live evaluator parses them
MAX_THRESHOLD = int(QUEUED_LIMIT.total_seconds())  # the schema's ceiling for queue_time_under


@dataclass(frozen=True)
class ProposedObjective:
    """One objective for one SLO: the threshold the range's jobs met at that share, and what it would have sent."""

    slo: str
    objective: float
    jobs: int
    queue_time_under: int | None  # seconds; None: no job to propose from, or none met it within GitHub's 24h
    pages: tuple[datetime, ...] = ()  # each paging episode's first page
    tickets: tuple[datetime, ...] = ()


def queue_waits(slo: Slo, config: Config, jobs: Sequence[JobRecord], start: datetime, end: datetime) -> list[float]:
    """The queue time, in seconds, of each job the SLO selects queued in [start, end): see the module's text."""
    waits = []
    for job in jobs:
        queued = job.queued_at
        if queued is None or not start <= queued < end:
            continue
        if not slo.selects(job.runner_type, config.team_of(job.runner_type or ""), job.labels):
            continue
        if job.started_at is not None and job.started_at <= end:
            waits.append((job.started_at - queued).total_seconds())
        elif job.completed_at is not None and job.completed_at <= end:
            continue  # cancelled before it started: no queue time
        else:
            waits.append((end - queued).total_seconds())
    return waits


def threshold_for(waits: Sequence[float], objective: float) -> int | None:
    """The least whole number of seconds t with at least `objective` of `waits` under t; None without waits."""
    if not waits:
        return None
    needed = max(1, math.ceil(objective * len(waits) - 1e-9))
    return math.floor(sorted(waits)[needed - 1]) + 1


def _with_objective(config: Config, spec: SloSpec, objective: str, threshold: int) -> Config:
    """The config with this SLO alone at the proposed objective (the replay counts the SLO's pages alone)."""
    document = config.model_dump(by_alias=True, exclude_none=True)
    # Written as a config writes them: a duration dumps rounded to its largest unit, a threshold is exact.
    written = {"objective": objective, "queue_time_under": f"{threshold}s"}
    document["slos"] = [{**spec.model_dump(by_alias=True, exclude_none=True), **written}]
    return Config.model_validate(document)


def propose(config: Config, jobs: Sequence[JobRecord], start: datetime, end: datetime) -> list[ProposedObjective]:
    """Per SLO and objective, the threshold and the pages and tickets it would have sent over [start, end]."""
    proposals = []
    for spec, slo in zip(config.slos, config.resolved_slos, strict=True):
        waits = queue_waits(slo, config, jobs, start, end)
        for written in OBJECTIVES:
            objective = _with_objective(config, spec, written, slo.queue_time_under).resolved_slos[0].objective
            threshold = threshold_for(waits, objective)
            if threshold is None or threshold > MAX_THRESHOLD:
                proposals.append(ProposedObjective(slo.name, objective, len(waits), None))
                continue
            replayed = _with_objective(config, spec, written, threshold)
            pages: list[datetime] = []
            tickets: list[datetime] = []
            for _, _, sent, _ in replay_slos(replayed, jobs, start, end):
                for page in sent:
                    if page.kind is PageKind.NEW:
                        (tickets if page.rule == ticket_rule_name(slo.name) else pages).append(page.at)
            proposals.append(
                ProposedObjective(slo.name, objective, len(waits), threshold, tuple(pages), tuple(tickets))
            )
    return proposals


def objective_lines(proposals: Sequence[ProposedObjective], start: datetime, end: datetime) -> list[str]:
    """The suggest's part for the SLOs: one line per objective, the first pages' times under it."""
    out: list[str] = []
    for name in dict.fromkeys(p.slo for p in proposals):
        mine = [p for p in proposals if p.slo == name]
        out.append(
            f"slo {name}: {mine[0].jobs:,} job(s) queued from {moment(start)} to {moment(end)} "
            "(a job still waiting at the end counts with its wait so far)"
        )
        for proposal in mine:
            share = f"{proposal.objective * 100:g}%"
            if proposal.queue_time_under is None:
                why = "no job to read it from" if not proposal.jobs else "over GitHub's 24 hours"
                out.append(f"  objective {share}: none proposed: {why}")
                continue
            when = ", ".join(f"{moment(at)}" for at in proposal.pages[:5])
            more = f" (+{len(proposal.pages) - 5} more)" if len(proposal.pages) > 5 else ""
            out.append(
                f"  objective {share}, queue_time_under: {format_duration(proposal.queue_time_under)} "
                f"({proposal.queue_time_under}s; the range's jobs met it): {len(proposal.pages)} page(s)"
                + (f" at {when}{more}" if when else "")
                + f", {len(proposal.tickets)} ticket(s) over the range"
            )
    return out
