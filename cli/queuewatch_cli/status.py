"""`queuewatch status`: what queuewatch believes now, read with the evaluator's own single Query.

The state table holds instances (a rule judging a runner type: pending or firing),
groups (the page of a rule and group key: when it started, whom it listed, its last
sequence, the page waiting in its outbox), silences and the cursor (the last applied
tick). It does not store figures: queue size and time are shown from the page waiting
in the outbox when there is one, and otherwise are not known here (the page itself,
or the dashboard, has them).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import boto3

from queuewatch.adapters.state_table import load_state
from queuewatch.alert_state import GroupRecord, InstanceState, StoredState
from queuewatch.durations import format_duration
from queuewatch.rules import COLLECTOR, HEALTH_RULE


@dataclass(frozen=True)
class Member:
    runner_type: str
    status: str  # pending, firing, or 'paged' for a runner type the last page listed that fires no more
    since: datetime | None
    clear_since: datetime | None
    queue_size: float | None = None  # from the page waiting in the outbox, if any
    queue_time_seconds: float | None = None


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


def _outbox_figures(record: GroupRecord) -> dict[str, tuple[float | None, float | None]]:
    """Queue size and time per runner type from the page waiting in the outbox (its `default` body)."""
    if record.outbox is None:
        return {}
    try:
        alert = json.loads(json.loads(record.outbox.message)["default"])
        return {
            f["runner_type"]: (f.get("queue_size"), f.get("queue_time_seconds")) for f in alert.get("runner_types", [])
        }
    except (ValueError, KeyError, TypeError):
        return {}


def _member(state: InstanceState | None, name: str, figures: dict[str, tuple[float | None, float | None]]) -> Member:
    size, age = figures.get(name, (None, None))
    if state is None:
        return Member(name, "paged", None, None, size, age)
    return Member(name, state.status.value, state.since, state.clear_since, size, age)


def build_view(state: StoredState, now: datetime) -> StatusView:
    listed: set[tuple[str, str]] = set()
    alerts: list[AlertView] = []
    by_rule: dict[str, dict[str, InstanceState]] = {}
    for instance in state.instances.values():
        by_rule.setdefault(instance.rule, {})[instance.runner_type] = instance
    for record in sorted(state.groups.values(), key=lambda r: (r.rule, r.group)):
        if record.status is None and record.outbox is None:
            continue  # over, and its resolve was sent: the item only waits for its TTL
        instances = by_rule.get(record.rule, {})
        figures = _outbox_figures(record)
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
                    [_member(i, i.runner_type, {}) for i in unlisted],
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
    return StatusView(state.applied_at, alerts, silences, degraded, state.read_units)


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
    return (
        f"  queue size {member.queue_size if member.queue_size is not None else '?'}, queue time {age} (page in outbox)"
    )


def text_lines(view: StatusView, table: str, now: datetime) -> list[str]:
    lines = [f"queuewatch status of {table} at {now:%Y-%m-%d %H:%M:%S} UTC ({view.read_units:g} read units)"]
    lines.append(f"last applied tick: {_ago(view.applied_at, now)}")
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
        for m in alert.members:
            clear = f", clear since {m.clear_since:%H:%M}" if m.clear_since else ""
            since = f" since {m.since:%Y-%m-%d %H:%M} UTC" if m.since else ""
            lines.append(f"    {m.runner_type}: {m.status}{since}{clear}{_figures(m)}")
    if view.alerts and not any(m.queue_size is not None for a in view.alerts for m in a.members):
        lines.append("  (figures are not stored in the state table: the last page and the dashboard show them)")
    lines.append(f"active silences: {len(view.silences) or 'none'}")
    for s in view.silences:
        lines.append(
            f"  {s['id']}  by {s['author']} until {s['ends_at']:%Y-%m-%d %H:%M} UTC  rule={s['rule'] or '*'}  "
            f"team={s['team'] or '*'}  match={','.join(s['match']) or '*'}: {s['comment']}"
        )
    lines.append(f"degraded signals (the {HEALTH_RULE} rule's instances): {len(view.degraded) or 'none'}")
    for m in view.degraded:
        what = "collection itself" if m.runner_type == COLLECTOR else m.runner_type
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


def show_status(client: Any, table: str, now: datetime, as_json: bool) -> str:
    view = build_view(load_state(client, table), now)
    if as_json:
        return json.dumps(status_document(view), indent=2)
    return "\n".join(text_lines(view, table, now))


def status(args: argparse.Namespace) -> int:
    print(show_status(boto3.client("dynamodb", region_name=args.region), args.table, datetime.now(UTC), args.json))
    return 0
