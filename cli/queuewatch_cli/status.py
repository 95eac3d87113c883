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
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3

from queuewatch.adapters.cloudwatch import MetricRequest, get_metric_data
from queuewatch.adapters.state_table import load_state
from queuewatch.alert_state import GroupRecord, InstanceState, StoredState
from queuewatch.durations import format_duration
from queuewatch.metric_names import runner_type_dimensions
from queuewatch.rules import COLLECTOR, HEALTH_RULE, UNSERVED_JOBS


@dataclass(frozen=True)
class Member:
    runner_type: str
    status: str  # pending, firing, or 'paged' for a runner type the last page listed that fires no more
    since: datetime | None
    clear_since: datetime | None
    queue_size: float | None = None
    queue_time_seconds: float | None = None
    figures_from: str | None = None  # where the figures come from, and when


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


@dataclass(frozen=True)
class StatusView:
    applied_at: datetime | None
    alerts: list[AlertView]
    silences: list[dict[str, Any]]
    degraded: list[Member]
    read_units: float
    figures_note: str | None = None  # why figures are missing, when they are


def _outbox_figures(record: GroupRecord) -> dict[str, tuple[float | None, float | None, str]]:
    """Queue size and time per runner type from the page waiting in the outbox (its `default` body)."""
    if record.outbox is None:
        return {}
    try:
        alert = json.loads(json.loads(record.outbox.message)["default"])
        when = f"the page waiting in the outbox, of {record.outbox.claimed_at:%H:%M} UTC"
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
    cloudwatch: Any, namespace: str, stack: str, names: list[str], now: datetime
) -> tuple[Figures, str | None]:
    """The newest QueueSize and QueueTime the stack's evaluator emitted for each runner type in the last 5 minutes."""
    requests = [
        MetricRequest(f"{kind}{index}", namespace, metric, runner_type_dimensions(stack, name), "Maximum", 60)
        for index, name in enumerate(names)
        for kind, metric in (("s", "QueueSize"), ("t", "QueueTime"))
    ]
    end = now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    series = get_metric_data(cloudwatch, requests, end - FIGURES_WINDOW - timedelta(minutes=1), end)
    errors = sorted({answer.error for answer in series.values() if answer.error})
    figures: Figures = {}
    for index, name in enumerate(names):
        size, age = series[f"s{index}"].points, series[f"t{index}"].points  # newest first
        if size or age:
            newest = max(p[0] for p in (size[:1] + age[:1]))
            when = f"{namespace} metrics at {newest:%H:%M} UTC"
            figures[name] = (size[0][1] if size else None, age[0][1] if age else None, when)
    return figures, "; ".join(errors) or None


def _member(state: InstanceState | None, name: str, figures: Figures) -> Member:
    size, age, source = figures.get(name, (None, None, None))
    if state is None:
        return Member(name, "paged", None, None, size, age, source)
    return Member(name, state.status.value, state.since, state.clear_since, size, age, source)


def listed_runner_types(state: StoredState) -> list[str]:
    """The runner types status lists with figures: those of every non-health alert."""
    names = {i.runner_type for i in state.instances.values() if i.rule != HEALTH_RULE}
    names |= {n for g in state.groups.values() if g.rule != HEALTH_RULE and g.status for n in g.members}
    return sorted(names)


def build_view(
    state: StoredState, now: datetime, metric_figures: Figures | None = None, figures_note: str | None = None
) -> StatusView:
    listed: set[tuple[str, str]] = set()
    alerts: list[AlertView] = []
    by_rule: dict[str, dict[str, InstanceState]] = {}
    for instance in state.instances.values():
        by_rule.setdefault(instance.rule, {})[instance.runner_type] = instance
    for record in sorted(state.groups.values(), key=lambda r: (r.rule, r.group)):
        if record.status is None and record.outbox is None:
            continue  # over, and its resolve was sent: the item only waits for its TTL
        instances = by_rule.get(record.rule, {})
        figures = {**_outbox_figures(record), **(metric_figures or {})}
        names = sorted(set(record.members) | {n for n in instances if n in record.members})
        members = [_member(instances.get(n), n, figures) for n in names]
        listed.update((record.rule, n) for n in names)
        outbox = None
        if record.outbox is not None:
            topics = ", ".join(str(t) for t in record.outbox.pending)
            claimed = f"{record.outbox.claimed_at:%H:%M:%S}"
            outbox = f"{record.outbox.notification_id} waiting for the {topics} topic(s) since {claimed}"
        status = record.status.value if record.status else "resolving"
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
            )
        )
    for rule, instances in sorted(by_rule.items()):
        unlisted = [i for name, i in sorted(instances.items()) if (rule, name) not in listed]
        if unlisted and rule != HEALTH_RULE:
            alerts.append(
                AlertView(
                    rule,
                    None,
                    "pending",
                    min(i.since for i in unlisted),
                    None,
                    0,
                    None,
                    [_member(i, i.runner_type, metric_figures or {}) for i in unlisted],
                )
            )
    degraded = [
        _member(i, i.runner_type, {})
        for i in sorted(by_rule.get(HEALTH_RULE, {}).values(), key=lambda i: i.runner_type)
    ]
    silences = [
        {
            "id": s.silence_id,
            "author": s.author,
            "starts_at": s.starts_at,
            "ends_at": s.ends_at,
            "rule": s.rule,
            "team": s.team,
            "match": list(s.matchers),
            "comment": s.comment,
        }
        for s in sorted(state.silences, key=lambda s: s.ends_at)
        if s.active(now)
    ]
    return StatusView(state.applied_at, alerts, silences, degraded, state.read_units, figures_note)


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "never"
    delta = (now - moment).total_seconds()
    when = f"{moment:%Y-%m-%d %H:%M:%S} UTC"
    return f"{when} ({format_duration(delta)} ago)" if delta >= 0 else f"{when} (in the future)"


def _figures(member: Member) -> str:
    if member.queue_size is None and member.queue_time_seconds is None:
        return ""
    age = "?" if member.queue_time_seconds is None else format_duration(member.queue_time_seconds)
    size = "?" if member.queue_size is None else f"{member.queue_size:g}"
    return f"; queue size {size}, queue time {age} ({member.figures_from})"


def text_lines(view: StatusView, table: str, now: datetime) -> list[str]:
    lines = [f"queuewatch status of {table} at {now:%Y-%m-%d %H:%M:%S} UTC ({view.read_units:g} read units)"]
    lines.append(f"last applied tick (the last that changed state): {_ago(view.applied_at, now)}")
    lines.append(f"alerts pending or firing: {len(view.alerts) or 'none'}")
    for alert in view.alerts:
        group = alert.group if alert.group is not None else "(no page yet)"
        page = (
            f"last page {alert.last_page_at:%Y-%m-%d %H:%M} UTC, sequence {alert.sequence}"
            if alert.last_page_at
            else "no page sent"
        )
        outbox = f"outbox: {alert.outbox}" if alert.outbox else "outbox: empty"
        since = _ago(alert.started_at, now) if alert.started_at else "?"
        lines.append(f"  {alert.rule} / {group}: {alert.status} since {since}; {page}; {outbox}")
        for m in alert.members[:MAX_MEMBERS_SHOWN]:
            clear = f", clear since {m.clear_since:%H:%M}" if m.clear_since else ""
            since = f" since {m.since:%Y-%m-%d %H:%M} UTC" if m.since else ""
            lines.append(f"    {m.runner_type}: {m.status}{since}{clear}{_figures(m)}")
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
            f"  {s['id']}  by {s['author']} until {s['ends_at']:%Y-%m-%d %H:%M} UTC  rule={s['rule'] or '*'}  "
            f"team={s['team'] or '*'}  match={','.join(s['match']) or '*'}: {s['comment']}"
        )
    lines.append(f"degraded signals (the {HEALTH_RULE} rule's instances): {len(view.degraded) or 'none'}")
    for m in view.degraded:
        what = {
            COLLECTOR: "collection itself",
            UNSERVED_JOBS: "tracked jobs queued for labels no runner type serves (the monitor page lists them)",
        }.get(m.runner_type, m.runner_type)
        lines.append(f"  {what}: {m.status} since {m.since:%Y-%m-%d %H:%M} UTC" if m.since else f"  {what}")
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
) -> str:
    """The status text (or JSON document); figures are read from CloudWatch when a client is given, from the
    metrics of the stack named `stack` (its per-runner-type metrics carry the stack's name)."""
    state = load_state(client, table)
    figures: Figures = {}
    note = "not read (--no-figures)" if cloudwatch is None else None
    names = listed_runner_types(state)
    if cloudwatch is not None and names:
        figures, note = latest_figures(cloudwatch, namespace, stack, names, now)
    view = build_view(state, now, figures, note)
    if as_json:
        return json.dumps(status_document(view), indent=2)
    return "\n".join(text_lines(view, table, now))


def status(args: argparse.Namespace) -> int:
    cloudwatch = None if args.no_figures else boto3.client("cloudwatch", region_name=args.region)
    dynamodb = boto3.client("dynamodb", region_name=args.region)
    now = datetime.now(UTC)
    print(show_status(dynamodb, args.table, now, args.json, cloudwatch, args.metrics_namespace, args.stack))
    return 0
