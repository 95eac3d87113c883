"""Wording a page: one group's decision -> the Alert every body is rendered from.

Figures come from the observation the plan judged; the triage explains each
queueing runner type of a firing page, likely cause first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

from queuewatch.alerting.alert import (
    Alert,
    ForecastFigures,
    NextWindow,
    RunnerTypeFigures,
    dashboard_view_url,
    dedup_key,
    metric_url,
    queue_metrics_url,
    silence_for,
    worst,
)
from queuewatch.alerting.alert_state import InstanceKey, PageKind
from queuewatch.alerting.triage import triage
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import plural
from queuewatch.config.maintenance import local_span, next_for
from queuewatch.config.sources import MetricQuery, Signals
from queuewatch.evaluate.paths import PATH_TITLES, dead_letter_note, path_queue, path_summary
from queuewatch.evaluate.probes.discovery import health_place
from queuewatch.evaluate.slo import is_slo_rule, is_ticket
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.steps import GroupPlan, Plan
from queuewatch.evaluate.totals import jobs_total
from queuewatch.model.autoscaler import QUEUE_ONLY_BLIND
from queuewatch.model.autoscaler_log import PAST_THE_BOUND, AutoscalerLog
from queuewatch.model.demand_paths import DEAD_LETTER_RULE
from queuewatch.model.forecast.outlook import Lateness, Outlook
from queuewatch.model.github_status import GitHubIncident
from queuewatch.model.rules import HEALTH_RULE, Rule, Verdict
from queuewatch.model.signals import RULE_SIGNALS, SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot, WaitingJob

MAX_LISTED = 50  # runner types listed in one page; SNS takes 256 KiB at most
# The view link's time range: the hour before the alert started (how the queue built up) to a little
# after this page (what the on-call sees first when they open it minutes later).
VIEW_BEFORE = timedelta(hours=1)
VIEW_AFTER = timedelta(minutes=15)


def notification_id(key: str, started_at: datetime, sequence: int) -> str:
    """Unique per message: the sequence counts the pages of one episode, and the episode's start tells two
    episodes apart (the stored record, with its sequence, is removed once an episode's resolve is sent).
    A repeat of the same page (a retried publish) keeps the same id."""
    return f"{key}@{started_at.astimezone(UTC):%Y%m%dT%H%M%SZ}#{sequence}"


def build_alert(plan: Plan, group: GroupPlan, stack: Stack) -> Alert:
    decision, rule, record = group.decision, group.rule, group.record
    assert decision.page is not None and decision.started_at is not None
    now = plan.context.now
    resolved = decision.page is PageKind.RESOLVED
    own_signals = {spec.name: spec.signals for spec in plan.context.config.runner_types}
    figures = [_figures(plan, rule, name, resolved, stack, own_signals) for name in decision.members]
    figures.sort(key=lambda f: (-(f.queue_time_seconds or 0), -(f.queue_size or 0), f.runner_type))
    max_size, max_size_at = worst([(f.runner_type, f.queue_size) for f in figures])
    max_time, max_time_at = worst([(f.runner_type, f.queue_time_seconds) for f in figures])
    key = dedup_key(stack.name, rule.name, record.group, stack.scope)
    likely = next(
        (
            f"{f.runner_type}: {f.triage.findings[0].title}: {f.triage.findings[0].detail}"
            + (f". {f.triage.findings[0].next_step}" if f.triage.findings[0].next_step else "")
            for f in figures
            if f.triage and f.triage.findings
        ),
        None,
    )
    snapshot = plan.context.snapshot
    team = rule.team if rule.group_by != "team" else record.group
    # Every team whose runner types the page names, listed or not, so each team's routing sees it.
    # A resolve reaches every team its page reached, whatever the config says now.
    paged_teams = set(record.paged_as.teams) if resolved and record.paged_as else set()
    counted = rule.name != HEALTH_RULE and not rule.path and not resolved
    total, basis = (
        jobs_total(plan.context.config, snapshot, decision.members, plan.context.by_name)
        if counted
        else (
            None,
            None,
        )
    )
    teams = sorted(({f.team for f in figures} | paged_teams) - {team})
    supersedes, superseded_by, escalation = _escalation(plan, group, stack)
    # A predictive page: every runner type it names stands on the forecast alone. Once a queue forms, the next
    # page of the episode reads as the real one; a forecast episode that falls back resolves as not happened.
    ahead = not resolved and _forecast_only(plan, rule, decision.members)
    unhappened = resolved and decision.forecast_only and not decision.superseded
    summary = (
        path_summary(rule, figures, resolved, now)
        if rule.path
        else _summary(rule, figures, resolved and not decision.superseded, ahead=ahead, unhappened=unhappened)
        + _total_text(total, basis, len(figures))
    )
    summary = f"{escalation}. {summary}" if escalation else summary
    github = plan.context.github
    outage = github.first if github and github.degraded and not resolved and rule.name != HEALTH_RULE else None
    return Alert(
        status="resolved" if resolved else "firing",
        page=decision.page.value,
        priority=rule.priority.value,
        severity=rule.priority.severity,
        # A resolve closes the page as it was sent (context.Context.as_paged): same title, whatever the config says now.
        title=record.paged_as.title if resolved and record.paged_as else title_of(rule, record.group),
        summary=_with_github(
            outage, _slo_summary(plan, rule, decision.members, resolved) if is_slo_rule(rule.name) else summary
        ),
        rule=rule.name,
        team=team,
        teams=[team, *teams],
        group_by=rule.group_by,
        group=record.group,
        dedup_key=key,
        notification_id=notification_id(key, decision.started_at, record.sequence),
        sequence=record.sequence,
        started_at=decision.started_at,
        evaluated_at=now,
        resolved_at=now if resolved else None,
        runner_types=figures[:MAX_LISTED],
        runner_types_affected=len(figures),
        max_queue_size=max_size,
        # Each job once (evaluate/totals.py): a job's request may sit in several queues under `all` dispatch.
        total_queue_size=_total_size(total, basis, figures, max_size),
        max_queue_size_runner_type=max_size_at,
        max_queue_time_seconds=max_time,
        max_queue_time_runner_type=max_time_at,
        jobs_queued=total,
        jobs_queued_basis=basis,
        runbook_url=rule.runbook_url,
        dashboard_url=rule.dashboard_url,
        silence=silence_for(
            rule.name, rule.group_by, record.group, list(decision.members), stack.name, stack.region
        ).model_copy(update={"next_window": _next_window(plan, rule, list(decision.members))}),
        source={
            "stack": stack.name,
            "account": stack.account_id,
            "region": stack.region,
            "observation": snapshot.snapshot_id if snapshot else "collector-failure",
        },
        likely_cause=likely,
        view_url=_view_url(stack, decision.started_at, now),
        supersedes=supersedes,
        superseded_by=superseded_by,
        github_incident=outage,
        blind_spots=QUEUE_ONLY_BLIND if snapshot is not None and snapshot.queue_only else None,
        forecast=ahead,
        did_not_happen=unhappened,
    )


def _forecast_only(plan: Plan, rule: Rule, members: Iterable[str]) -> bool:
    """Every member's alert stands on the forecast alone, as last judged."""
    if rule.forecast_horizon is None:
        return False
    stored = plan.context.state.instances
    found = [plan.instances.get(key) or stored.get(key) for key in (InstanceKey(rule.name, name) for name in members)]
    return bool(found) and all(instance is not None and instance.forecast for instance in found)


def _forecast_figures(rule: Rule, verdict: Verdict | None) -> ForecastFigures | None:
    """A member breaching on the forecast alone this tick: when it is predicted to cross, and on what."""
    if verdict is None or verdict.forecast is None or verdict.outlook is None or rule.forecast_horizon is None:
        return None
    late: Lateness = verdict.forecast
    projected: Outlook = verdict.outlook
    threshold = late.threshold_seconds
    return ForecastFigures(
        queue_time_threshold_seconds=int(threshold),
        horizon_seconds=rule.forecast_horizon,
        crosses_in_seconds=late.crosses_in_seconds,
        earliest_in_seconds=max(0.0, late.earliest_in_seconds + threshold),
        latest_in_seconds=None if late.latest_in_seconds is None else max(0.0, late.latest_in_seconds + threshold),
        likely=late.likely,
        wait_seconds=late.wait_seconds,
        full_in_seconds=projected.full_in_seconds,
        runners_left=projected.headroom,
        maximum=projected.maximum,
        evidence=projected.evidence(),
    )


def _next_window(plan: Plan, rule: Rule, members: list[str]) -> NextWindow | None:
    """The page's silence hint: the soonest maintenance window that holds it back, open or next."""
    context = plan.context
    listed = [(name, context.team(rule, name)) for name in members[:MAX_LISTED]]
    found = next_for(context.config.maintenance_windows, rule.name, listed, context.now)
    if found is None:
        return None
    window, starts, ends = found
    return NextWindow(
        name=window.name,
        starts_at=starts,
        ends_at=ends,
        time_zone=window.time_zone,
        local=local_span(window, starts, ends),
    )


def _view_url(stack: Stack, started_at: datetime, now: datetime) -> str | None:
    if stack.dashboard_name is None:
        return None
    # A clock skewed into the future must not make the range run backwards.
    start = min(started_at, now) - VIEW_BEFORE
    return dashboard_view_url(stack.region, stack.dashboard_name, start, now + VIEW_AFTER)


def _figures(
    plan: Plan, rule: Rule, runner_type: str, resolved: bool, stack: Stack, own_signals: Mapping[str, Signals]
) -> RunnerTypeFigures:
    context = plan.context
    found = context.by_name.get(runner_type)
    key = InstanceKey(rule.name, runner_type)
    verdict = plan.verdicts.get(key)
    instance = plan.instances.get(key) or context.state.instances.get(key)
    others: dict[str, float] = {}
    explanation = None
    if found is not None:
        others = {
            name.value: reading.value
            for name, reading in sorted(found.signals.items())
            if reading.value is not None and name not in RULE_SIGNALS
        }
        queueing = found.value(SignalName.QUEUE_SIZE) != 0  # an empty queue has nothing to explain
        snapshot = context.snapshot
        if snapshot is not None and snapshot.autoscaler_logs_unread and found.autoscaler_log is None:
            unread = AutoscalerLog(
                log_groups=[], since=snapshot.collected_at, until=snapshot.collected_at, error=PAST_THE_BOUND
            )
            found = found.model_copy(update={"autoscaler_log": unread})
        if snapshot is not None and not resolved and rule.name != HEALTH_RULE and not rule.path and queueing:
            explanation = triage(
                found,
                window=snapshot.triage_window_seconds,
                baseline=snapshot.baseline_seconds,
                requests_shared=found.name in context.requests_shared,
                fleet_dropped=context.fleet_dropped,
                held_by_copies=context.held_by_copies.get(found.name, 0.0),
            )
    region, queue = (found.region, found.queue_name) if found else health_place(runner_type) or (stack.region, "")
    if found is not None and rule.path:
        queue = path_queue(rule, found) or queue
    return RunnerTypeFigures(
        runner_type=runner_type,
        region=region,
        queue=queue,
        account=found.account_id if found else None,
        team=context.team(rule, runner_type),
        status="resolved" if resolved or instance is None else "firing",
        since=instance.since if instance else None,
        queue_size=found.value(rule.size_signal) if found else None,
        queue_time_seconds=found.value(rule.time_signal) if found else None,
        queue_size_threshold=rule.queue_size_threshold,
        queue_time_threshold_seconds=rule.queue_time_threshold,
        breached=list(verdict.breached_signals) if verdict and not resolved else [],
        shown_by=dict(verdict.shown_by) if verdict and not resolved else {},
        missing=dict(verdict.missing) if verdict else {},
        console_url=(  # a runner type with no queue (queue: none) and no metric has nothing to link
            _metrics_link(plan, own_signals.get(runner_type, {}), runner_type, found)
            if found and found.queue_name
            else None
        ),
        signals=others,
        triage=explanation,
        oldest_jobs=_jobs(rule, found) if found and not resolved else [],
        jobs_note=dead_letter_note(rule, found, context.snapshot) if found and not resolved else None,
        autoscaler_log=found.autoscaler_log if found and explanation is not None else None,
        forecast=_forecast_figures(rule, verdict) if not resolved else None,
    )


def _jobs(rule: Rule, found: RunnerTypeSnapshot) -> list[WaitingJob]:
    """The jobs a page row lists: a dead-letter page, the jobs its requests likely stood for."""
    return list(found.dead_letter_jobs if rule.name == DEAD_LETTER_RULE else found.oldest_jobs)


def _metrics_link(plan: Plan, own: Signals, runner_type: str, found: RunnerTypeSnapshot) -> str:
    """Where the page's queue figures came from: the configured queue-time metric, else the queue's AWS/SQS ones
    (on the fork config, the fork's per-runner-type metric, not the queue that runner types share)."""
    source = plan.context.config.signals_for(own).get(SignalName.QUEUE_TIME)
    if isinstance(source, MetricQuery):
        values = [value.replace("{runner_type}", runner_type) for value in source.dimensions.values()]
        return metric_url(source.region or found.region, source.namespace, source.metric, values)
    return queue_metrics_url(found.region, found.queue_name)


def _total_size(
    total: float | None, basis: str | None, figures: list[RunnerTypeFigures], max_size: float | None
) -> float | None:
    """The page's queue size over every runner type: the jobs each counted once where that is known, none
    where it cannot be (all dispatch untracked), else the sum."""
    if total is not None:
        return total
    if basis is not None or max_size is None:
        return None
    return sum(f.queue_size or 0 for f in figures)


def _total_text(total: float | None, basis: str | None, listed: int) -> str:
    """Across several runner types, the jobs each counted once, or the bounds where they cannot be."""
    if listed < 2 or basis is None:
        return ""
    if total is not None:
        return f"; {plural(int(total), 'job')} in all, each counted once"
    return f"; jobs in all {basis}" if basis.startswith("between") else ""


def _with_github(outage: GitHubIncident | None, summary: str) -> str:
    """Said first, on every kind of page (an SLO's too): every fleet queues when GitHub Actions itself does."""
    return f"{outage.sentence}. {summary}" if outage is not None else summary


def title_of(rule: Rule, group: str) -> str:
    if rule.name == HEALTH_RULE:
        return "queuewatch monitor degraded"
    if is_slo_rule(rule.name):
        kind = "ticket" if is_ticket(rule.name) else "page"
        return f"Queue-time SLO {rule.name.removeprefix('slo:').removesuffix(':ticket')} burning its budget ({kind})"
    title = rule.title or PATH_TITLES.get(rule.name, "Jobs are queueing") + f" ({rule.name})"
    if rule.group_by == "team":
        title += f" team {group}"
    elif rule.group_by == "runner_type":
        title += f" on {group}"
    return title


def _slo_summary(plan: Plan, rule: Rule, members: Iterable[str], resolved: bool) -> str:
    """What burns, pair by pair, as the plan judged it this tick."""
    found = [plan.findings.get(InstanceKey(rule.name, name), name) for name in sorted(members)]
    head = "budget no longer burning" if resolved else "error budget burning"
    return f"{head} (jobs starting within {format_duration(rule.queue_time_threshold or 0)}): " + " | ".join(found)


def _summary(
    rule: Rule, figures: list[RunnerTypeFigures], resolved: bool, *, ahead: bool = False, unhappened: bool = False
) -> str:
    more = f" and {len(figures) - 5} more" if len(figures) > 5 else ""
    if rule.name == HEALTH_RULE:
        parts = [
            f"{f.runner_type}: {'; '.join(f'{k} {v}' for k, v in f.missing.items()) or 'no data'}" for f in figures
        ]
        head = "queuewatch can see again" if resolved else "queuewatch cannot see"
        return f"{head}: " + " | ".join(parts[:5]) + more
    lines = [f"{f.label}: {f.queue_text()}" for f in figures[:5]]
    count = plural(len(figures), "runner type")
    if ahead:
        within = format_duration(rule.forecast_horizon or 0)
        soon = [f"{f.label} {f.forecast.text()}" if f.forecast else f"{f.label}: {f.queue_text()}" for f in figures[:5]]
        return (
            f"Forecast, not yet queueing: {count} where a job queued in the next {within} is predicted to wait "
            f"past {format_duration(rule.queue_time_threshold or 0)} ({rule.condition()}): " + "; ".join(soon) + more
        )
    if unhappened:
        return (
            f"Did not happen: the forecast fell back, no queue formed past the threshold; {count} no longer "
            f"predicted to queue ({rule.condition()}): " + "; ".join(lines) + more
        )
    verb = "recovered" if resolved else "queueing"
    return f"{count} {verb} ({rule.condition()}): " + "; ".join(lines) + more


def _held_by(plan: Plan, rule: Rule, runner_type: str) -> str | None:
    holder = plan.holder(plan.context.rule(rule.name), runner_type)
    return holder.name if holder else None


def _escalation(plan: Plan, group: GroupPlan, stack: Stack) -> tuple[list[str], list[str], str | None]:
    """(supersedes, superseded_by, the line that says so first): the dedup keys of the lower pages this one
    closes in the same tick, or of the higher pages that close this one."""
    decision, rule, context = group.decision, group.rule, plan.context
    if decision.superseded:
        higher = sorted(
            {
                (holder.priority.value, holder.name, context.group_of(holder, name))
                for name in decision.members
                if (holder := plan.holder(context.rule(rule.name), name)) is not None
            }
        )
        keys = sorted({dedup_key(stack.name, name, group_key, stack.scope) for _, name, group_key in higher})
        said = "; ".join(f"{priority} {title_of(context.rule(name), key)!r}" for priority, name, key in higher[:3])
        return [], keys, f"Superseded by {said}"
    if decision.page not in (PageKind.NEW, PageKind.UPDATE):
        return [], [], None
    members = set(decision.members)
    closed = [
        other
        for other in plan.groups
        if other.decision.superseded
        and any(name in members and _held_by(plan, other.rule, name) == rule.name for name in other.decision.members)
    ]
    if not closed:
        return [], [], None
    keys = sorted(dedup_key(stack.name, o.rule.name, o.record.group, stack.scope) for o in closed)
    lower = sorted({o.rule.priority.value for o in closed})
    return keys, [], f"Escalated from {', '.join(lower)}, which this page supersedes"
