"""`queuewatch status`: what queuewatch believes now, read with the evaluator's own single Query.

The state table holds instances (a rule judging a runner type: pending or firing),
groups (the page of a rule and group key: when it started, whom it listed, its last
sequence, the page waiting in its outbox), silences and the cursor (the last tick that
changed state: a tick that changes nothing writes nothing). It stores no figures: the
latest queue size and time of the runner types listed come from the evaluator's own
metrics (QueueSize and QueueTime per RunnerType, emitted while jobs wait) in one
GetMetricData call per 250 runner types; failing that, from a page waiting in the outbox.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.cloudwatch import MetricRequest, get_metric_data
from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.adapters.state_table.known_names import read_known
from queuewatch.alerting.alert_state import GroupRecord, InstanceState, Status, StoredState
from queuewatch.alerting.silences import GITHUB_HOLD, SilenceRecord
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import moment as said_at
from queuewatch.base.wording import plural
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.config.maintenance import MaintenanceWindow
from queuewatch.evaluate.holds import HoldInputs, held_by
from queuewatch.model.autoscaler import QUEUE_ONLY_BLIND
from queuewatch.model.demand_paths import PATH_METRICS, PATH_RULES, PATH_SIGNALS, SIGNAL_WORDS
from queuewatch.model.job_sources import MATCHER_SOURCE
from queuewatch.model.rules import COLLECTOR, HEALTH_RULE, JOB_SOURCE, UNJUDGED, UNSERVED_JOBS, UNTRACKED_JOBS
from queuewatch.runtime.metric_names import runner_type_dimensions
from queuewatch_cli.commands.status.forecasts import forecast_document, forecast_lines, read_forecasts
from queuewatch_cli.commands.status.slos import budget_lines
from queuewatch_cli.common.stacks import Target, boto_client, on_table, targets
from queuewatch_cli.common.unrouted import last_day, unrouted_lines
from queuewatch_cli.common.windows import status_window_lines


@dataclass(frozen=True)
class Member:
    runner_type: str
    status: str  # pending, firing, or 'paged' for a runner type the last page listed that fires no more
    since: datetime | None
    clear_since: datetime | None
    queue_size: float | None = None
    queue_time_seconds: float | None = None
    figures_from: str | None = None  # where the figures come from, and when
    silenced_by: str | None = None  # what holds it back now (evaluate/holds/): a silence, window:<name>, ...
    silenced_since: datetime | None = None  # that silence's start (a window or GitHub's incident: none said)
    fires_at: datetime | None = None  # a pending one: when it fires if nothing changes (its rule's pending period)
    reason: str | None = None  # the monitor's instances: what it cannot see, and why
    measures: tuple[str, str] = ("queue size", "queue time")  # what the figures are: a path rule's own queue


@dataclass(frozen=True)
class AlertView:
    rule: str
    group: str | None  # None: pending instances no page has listed yet
    status: str  # firing, silenced, resolving (a resolve waits in the outbox), pending
    started_at: datetime | None
    last_page_at: datetime | None
    sequence: int
    outbox: str | None  # the page waiting to be published: its notification id and topics
    members: list[Member] = field(default_factory=list)
    silenced_by: list[str] = field(default_factory=list)  # every member held back: by these silences
    silenced_since: datetime | None = None
    jobs_queued: int | None = None  # the last page's jobs total, each job counted once (alert_state.PagedAs)
    jobs_queued_basis: str | None = None  # how that total was counted, or why it was not
    likely_cause: str | None = None  # the last page's likely cause: the autoscaler's own words where it said why


@dataclass(frozen=True)
class StatusView:
    applied_at: datetime | None
    alerts: list[AlertView]
    silences: list[dict[str, Any]]
    degraded: list[Member]
    read_units: float
    figures_note: str | None = None  # why figures are missing, when they are
    scheduled: list[dict[str, Any]] = field(default_factory=list)  # silences yet to start, by their start


def _outbox_figures(record: GroupRecord) -> dict[str, tuple[float | None, float | None, str]]:
    """Queue size and time per runner type from the page waiting in the outbox (its `default` body)."""
    if record.outbox is None:
        return {}
    try:
        alert = json.loads(json.loads(record.outbox.message)["default"])
        when = f"the page not yet delivered, of {said_at(record.outbox.claimed_at)}"
        return {
            f["runner_type"]: (f.get("queue_size"), f.get("queue_time_seconds"), when)
            for f in alert.get("runner_types", [])
        }
    except (ValueError, KeyError, TypeError):
        return {}


Figures = dict[str, tuple[float | None, float | None, str]]
"""Per runner type: queue size, queue time in seconds, and where they come from."""
FIGURES_WINDOW = timedelta(minutes=5)
MAX_MEMBERS_SHOWN = 50  # per alert in the text; a fleet-wide alert lists thousands


def latest_figures(
    cloudwatch: Any,
    namespace: str,
    stack: str,
    names: list[str],
    now: datetime,
    metrics: tuple[str, str] = ("QueueSize", "QueueTime"),
) -> tuple[Figures, str | None]:
    """The newest QueueSize and QueueTime (or a path's `metrics`: demand_paths.PATH_METRICS) the stack's
    evaluator emitted for each runner type in the last 5 minutes."""
    requests = [
        MetricRequest(f"{kind}{index}", namespace, metric, runner_type_dimensions(stack, name), "Maximum", 60)
        for index, name in enumerate(names)
        for kind, metric in zip(("s", "t"), metrics, strict=True)
    ]
    end = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    series = get_metric_data(cloudwatch, requests, end - FIGURES_WINDOW - timedelta(minutes=1), end)
    errors = sorted({answer.error for answer in series.values() if answer.error})
    figures: Figures = {}
    for index, name in enumerate(names):
        size, age = series[f"s{index}"].points, series[f"t{index}"].points  # newest first
        if size or age:
            newest = max(p[0] for p in (size[:1] + age[:1]))
            when = f"{namespace} metrics at {said_at(newest)}"
            figures[name] = (size[0][1] if size else None, age[0][1] if age else None, when)
    return figures, "; ".join(errors) or None


PATH_MEASURES = {
    rule: (SIGNAL_WORDS[size], SIGNAL_WORDS[age]) for rule, (size, age) in PATH_SIGNALS.items()
}  # status names each path rule's figures as its page does


@dataclass(frozen=True)
class Reading:
    """What status knows besides the table: the moment, the figures, and the rules' pending periods and teams."""

    now: datetime
    figures: Figures
    pending_for: dict[str, int] = field(default_factory=dict)  # rule -> seconds (from the config, when given)
    rule_teams: dict[str, str] = field(default_factory=dict)  # rule -> team, for runner types that name none
    windows_open: tuple[MaintenanceWindow, ...] = ()  # the config's maintenance windows open now, when given


def _member(
    state: InstanceState | None, name: str, rule: str, silences: list[SilenceRecord], reading: Reading
) -> Member:
    size, age, source = reading.figures.get(name, (None, None, None))
    measures = PATH_MEASURES.get(rule, ("queue size", "queue time"))
    if state is None:
        return Member(name, "paged", None, None, size, age, source, measures=measures)
    team = state.team or reading.rule_teams.get(rule, "")
    # The holds applied now, as the evaluator's next tick will (evaluate/holds/); GitHub's incident, which status
    # does not read, as the evaluator last recorded it.
    live = held_by(HoldInputs(reading.now, tuple(silences), reading.windows_open), rule, name, team)
    holds = (*live, *(h for h in state.held_by if h == GITHUB_HOLD and h not in live))
    silence = next((s for s in silences if holds and s.silence_id == holds[0]), None)
    pending_for = reading.pending_for.get(rule)
    fires_at = (
        state.since + timedelta(seconds=pending_for)
        if state.status is Status.PENDING and pending_for is not None
        else None
    )
    return Member(
        name,
        state.status.value,
        state.since,
        state.clear_since,
        size,
        age,
        source,
        holds[0] if holds else None,
        silence.starts_at if silence else None,
        fires_at,
        state.reason,
        measures,
    )


def _held_back(members: list[Member]) -> tuple[list[str], datetime | None]:
    """The silences holding back every member that fires or waits, and the earliest of their starts."""
    live = [m for m in members if m.status in ("firing", "pending")]
    if not live or any(m.silenced_by is None for m in live):
        return [], None
    return sorted({m.silenced_by for m in live if m.silenced_by}), min(
        (m.silenced_since for m in live if m.silenced_since), default=None
    )


def listed_runner_types(state: StoredState) -> list[str]:
    """The runner types status lists with figures: those of every non-health alert."""
    names = {i.runner_type for i in state.instances.values() if i.rule != HEALTH_RULE}
    names |= {n for g in state.groups.values() if g.rule != HEALTH_RULE and g.status for n in g.members}
    return sorted(names)


def build_view(
    state: StoredState,
    now: datetime,
    metric_figures: Figures | None = None,
    figures_note: str | None = None,
    config: Config | None = None,
    path_figures: dict[str, Figures] | None = None,
) -> StatusView:
    """What status shows; the silences in the table are applied now, not when the evaluator next writes."""
    rules = (*config.resolved_rules, *config.path_rules) if config else ()
    pending_for = {r.name: r.pending_for for r in rules}
    if config is not None:
        pending_for[HEALTH_RULE] = config.monitor.for_
    windows = tuple(w for w in config.maintenance_windows if w.open_at(now)) if config else ()
    base = Reading(now, metric_figures or {}, pending_for, {r.name: r.team for r in rules}, windows)
    listed: set[tuple[str, str]] = set()
    alerts: list[AlertView] = []
    by_rule: dict[str, dict[str, InstanceState]] = {}
    for instance in state.instances.values():
        by_rule.setdefault(instance.rule, {})[instance.runner_type] = instance
    for record in sorted(state.groups.values(), key=lambda r: (r.rule, r.group)):
        if record.status is None and record.outbox is None:
            continue  # over, and its resolve was sent: the item only waits for its TTL
        instances = by_rule.get(record.rule, {})
        # A path rule's members (the job-retry, dead-letter queues) show that queue's figures, not the build queue's.
        own = (path_figures or {}).get(record.rule) if record.rule in PATH_RULES else metric_figures
        reading = replace(base, figures={**_outbox_figures(record), **(own or {})})
        names = sorted(set(record.members) | {n for n in instances if n in record.members})
        members = [_member(instances.get(n), n, record.rule, state.silences, reading) for n in names]
        held_by, held_since = _held_back(members)
        listed.update((record.rule, n) for n in names)
        outbox = None
        if record.outbox is not None:
            topics = ", ".join(str(t) for t in record.outbox.pending)
            claimed = said_at(record.outbox.claimed_at)
            outbox = (
                f"page {record.outbox.notification_id} not yet delivered to the {topics} topic(s), "
                f"retried since {claimed}"
            )
        status = record.status.value if record.status else "resolving"
        if held_by:
            status = "silenced"
        elif status == "silenced":
            status = "firing"  # its silence has ended or was expired: it pages again on the next tick
        alerts.append(
            AlertView(
                record.rule,
                record.group,
                status,
                record.started_at,
                record.last_notified_at,
                record.sequence,
                outbox,
                members,
                held_by,
                held_since,
                record.paged_as.jobs_queued if record.paged_as else None,
                record.paged_as.jobs_queued_basis if record.paged_as else None,
                record.paged_as.likely_cause if record.paged_as and status != "resolving" else None,
            )
        )
    for rule, instances in sorted(by_rule.items()):
        unlisted = [i for name, i in sorted(instances.items()) if (rule, name) not in listed]
        if unlisted and rule != HEALTH_RULE:
            figures = (path_figures or {}).get(rule, {}) if rule in PATH_RULES else base.figures
            members = [
                _member(i, i.runner_type, rule, state.silences, replace(base, figures=figures)) for i in unlisted
            ]
            held_by, held_since = _held_back(members)
            alerts.append(
                AlertView(
                    rule,
                    None,
                    "silenced" if held_by else ("firing" if any(m.status == "firing" for m in members) else "pending"),
                    min(i.since for i in unlisted),
                    None,
                    0,
                    None,
                    members,
                    held_by,
                    held_since,
                )
            )
    degraded = [
        _member(i, i.runner_type, HEALTH_RULE, state.silences, replace(base, figures={}))
        for i in sorted(by_rule.get(HEALTH_RULE, {}).values(), key=lambda i: i.runner_type)
    ]
    silences, scheduled = (
        [_silence_view(s) for s in state.silences if s.active(now)],
        [_silence_view(s) for s in sorted(state.silences, key=lambda s: s.starts_at) if s.scheduled(now)],
    )
    silences.sort(key=lambda s: s["ends_at"])
    return StatusView(state.applied_at, alerts, silences, degraded, state.read_units, figures_note, scheduled)


def _silence_view(s: SilenceRecord) -> dict[str, Any]:
    return {
        "id": s.silence_id,
        "author": s.author,
        "starts_at": s.starts_at,
        "ends_at": s.ends_at,
        "rule": s.rule,
        "team": s.team,
        "match": list(s.matchers),
        "comment": s.comment,
    }


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "never"
    delta = (now - moment).total_seconds()
    when = said_at(moment)
    return f"{when} ({format_duration(delta)} ago)" if delta >= 0 else f"{when} (in the future)"


def _member_text(m: Member, now: datetime) -> str:
    text = m.status + (f" since {said_at(m.since)}" if m.since else "")
    if m.clear_since:
        text += f", clear since {said_at(m.clear_since)}"
    if m.fires_at is not None:
        left = (m.fires_at - now).total_seconds()
        when = f"in {format_duration(left)}" if left > 0 else "on the next tick"
        text += f", fires at {said_at(m.fires_at)} ({when}) if nothing changes"
    if m.silenced_by:
        since = f" since {said_at(m.silenced_since)}" if m.silenced_since else ""
        text += f", silenced by {m.silenced_by}{since}"
    return text


def _figures(member: Member) -> str:
    if member.queue_size is None and member.queue_time_seconds is None:
        return ""
    age = "?" if member.queue_time_seconds is None else format_duration(member.queue_time_seconds)
    size = "?" if member.queue_size is None else f"{member.queue_size:g}"
    return f"; {member.measures[0]} {size}, {member.measures[1]} {age} ({member.figures_from})"


def text_lines(view: StatusView, table: str, now: datetime) -> list[str]:
    # The read units stay in --json: the on-call wants the alerts, not the bill.
    lines = [f"queuewatch status of {table} at {said_at(now)}"]
    lines.append(f"alerts last changed: {_ago(view.applied_at, now)}")
    lines.append(f"alerts pending or firing: {len(view.alerts) or 'none'}")
    for alert in view.alerts:
        group = alert.group if alert.group is not None else "(no page yet)"
        page = (
            f"paged at {said_at(alert.last_page_at)} (page {alert.sequence})" if alert.last_page_at else "not paged yet"
        )
        unsent = f"; {alert.outbox}" if alert.outbox else ""
        if alert.silenced_by:
            by = f"by {', '.join(alert.silenced_by)}"
            since = f"since {_ago(alert.silenced_since, now)} {by}" if alert.silenced_since else by
        else:
            since = "since " + (_ago(alert.started_at, now) if alert.started_at else "?")
        lines.append(f"  {alert.rule} / {group}: {alert.status} {since}; {page}{unsent}")
        if len(alert.members) > 1 and alert.jobs_queued_basis:
            # Summing the members' figures below counts a job once per queue that holds its request (all
            # dispatch): the page's own total says how many jobs there were.
            total = f"{plural(alert.jobs_queued, 'job')}, " if alert.jobs_queued is not None else ""
            lines.append(f"    jobs queued at the last page: {total}{alert.jobs_queued_basis}")
        if alert.likely_cause:
            lines.append(f"    likely cause at the last page: {alert.likely_cause}")
        for m in alert.members[:MAX_MEMBERS_SHOWN]:
            lines.append(f"    {m.runner_type}: {_member_text(m, now)}{_figures(m)}")
        if len(alert.members) > MAX_MEMBERS_SHOWN:
            lines.append(f"    and {len(alert.members) - MAX_MEMBERS_SHOWN} more runner types (--json lists them all)")
    unknown = [m for a in view.alerts if a.rule != HEALTH_RULE for m in a.members if m.figures_from is None]
    if unknown:
        window = format_duration(FIGURES_WINDOW.total_seconds())
        why = view.figures_note or f"no QueueSize or QueueTime datapoint in the last {window}"
        lines.append(f"  (no figures for {len(unknown)} runner type(s): {why})")
    lines.append(f"active silences: {len(view.silences) or 'none'}")
    for s in view.silences:
        lines.append(
            f"  {s['id']}  by {s['author']} until {said_at(s['ends_at'])}  rule={s['rule'] or '*'}  "
            f"team={s['team'] or '*'}  match={','.join(s['match']) or '*'}: {s['comment']}"
        )
    if view.scheduled:
        lines.append(f"scheduled silences: {len(view.scheduled)}")
    for s in view.scheduled:
        lines.append(
            f"  {s['id']}  by {s['author']} from {said_at(s['starts_at'])} "
            f"until {said_at(s['ends_at'])}  rule={s['rule'] or '*'}  team={s['team'] or '*'}  "
            f"match={','.join(s['match']) or '*'}: {s['comment']}"
        )
    lines.append(f"degraded signals (the {HEALTH_RULE} rule's instances): {len(view.degraded) or 'none'}")
    for m in view.degraded:
        what = {
            COLLECTOR: "collection itself",
            UNSERVED_JOBS: "tracked jobs queued for labels no runner type serves (the monitor page lists them)",
            UNTRACKED_JOBS: "scale-up requests with no tracked job: tracking blind",
            UNJUDGED: "watched runner types no rule judges (the monitor page lists them)",
            f"{JOB_SOURCE}:bus": "job events from the autoscaler's bus",
            f"{JOB_SOURCE}:webhook": "job events from GitHub's webhook",
            f"{JOB_SOURCE}:{MATCHER_SOURCE}": "the autoscaler's matcher config: jobs routed as it routes them",
        }.get(m.runner_type, m.runner_type)
        lines.append(f"  {what}: {m.status} since {said_at(m.since)}" if m.since else f"  {what}")
        if m.reason:
            lines.append(f"    {m.reason}")
    return lines


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: _jsonable(getattr(value, k)) for k in value.__dataclass_fields__}
    return value


def status_document(view: StatusView) -> dict[str, Any]:
    return _jsonable(view)  # type: ignore[no-any-return]


def show_status(
    client: Any,
    table: str,
    now: datetime,
    as_json: bool,
    cloudwatch: Any = None,
    namespace: str = "Queuewatch",
    stack: str = "queuewatch",
    config: Config | None = None,
) -> str:
    """The status text (or JSON document); figures are read from CloudWatch when a client is given, from the
    metrics of the stack named `stack` (its per-runner-type metrics carry the stack's name)."""
    state = load_state(client, table)
    figures: Figures = {}
    note = "not read (--no-figures)" if cloudwatch is None else None
    names = listed_runner_types(state)
    path_figures: dict[str, Figures] = {}
    if cloudwatch is not None and names:
        figures, note = latest_figures(cloudwatch, namespace, stack, names, now)
        for rule, metrics in PATH_METRICS.items():
            on_path = sorted({i.runner_type for i in state.instances.values() if i.rule == rule})
            if on_path:
                path_figures[rule], path_note = latest_figures(cloudwatch, namespace, stack, on_path, now, metrics)
                note = note or path_note
    view = build_view(state, now, figures, note, config, path_figures)
    board, board_note = read_forecasts(client, table)
    if as_json:
        return json.dumps({**status_document(view), "forecast": forecast_document(board, board_note)}, indent=2)
    # a board is written on every tick a rule forecasts: none, and no config that says one should, is nothing to say
    forecasting = config is not None and any(rule.forecast_horizon is not None for rule in config.resolved_rules)
    shown = forecast_lines(board, now, board_note) if board is not None or forecasting else []
    return "\n".join([*text_lines(view, table, now), *shown])


def _window_lines(target: Target, config: Config | None, client: Any, now: datetime) -> list[str]:
    """The open and next maintenance windows: the config's; without --config, those the stack's evaluator
    published (known_names.py). A role without GetItem reads the rest of status, and is told what it missed."""
    if config is not None:
        return status_window_lines(config.maintenance_windows, now)
    try:
        published = on_table(target, read_known, client)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "AccessDeniedException":
            raise
        return ["maintenance windows: not read (status needs dynamodb:GetItem on the state table, or --config)"]
    return status_window_lines(published[0].windows, now) if published else []


def _jobs_lines(target: Target, client: Any, now: datetime) -> list[str]:
    """Where tracking is on, the last day's jobs that map to no runner type; where it is off, once, what a
    queue-only stack cannot see."""
    if target.jobs_table is None:
        return [QUEUE_ONLY_BLIND]
    try:
        return unrouted_lines(last_day(client("dynamodb", target.region), target.jobs_table, now))
    except ClientError as error:
        return [f"jobs of the last day: not read from {target.jobs_table} ({describe(error)})"]


def status(args: argparse.Namespace, client: Any = boto_client, now: datetime | None = None) -> int:
    """Each stack's status in turn (--stack, repeatable): one document per stack with --json."""
    now = now or datetime.now(UTC)
    config = load_config(args.config) if args.config else None
    chosen: list[Target] = targets(args, client)
    documents = []
    for target in chosen:
        cloudwatch = None if args.no_figures else client("cloudwatch", target.region)

        def show(dynamodb: Any, table: str, target: Target = target, cloudwatch: Any = cloudwatch) -> str:
            return show_status(dynamodb, table, now, args.json, cloudwatch, target.namespace, target.stack, config)

        text = on_table(target, show, client)
        slos = budget_lines(client("dynamodb", target.region), target, config, now) if config else []
        jobs = _jobs_lines(target, client, now)
        windows = _window_lines(target, config, client, now)
        if args.json:
            documents.append({"stack": target.stack, "region": target.region, **json.loads(text)})
            if slos:
                documents[-1]["slos"] = slos
            if windows:
                documents[-1]["maintenance_windows"] = windows
            documents[-1]["jobs"] = jobs
        else:
            if len(chosen) > 1:
                print(f"== {target.label}")
            print("\n".join([text, *slos, *windows, *jobs]))
    if args.json:
        print(json.dumps(documents[0] if len(documents) == 1 else documents, indent=2))
    return 0
