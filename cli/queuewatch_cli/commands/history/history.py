"""`queuewatch history`: what queuewatch sent over a window (pages, repeats, resolves, refused publishes),
from the log the evaluator keeps in each stack's state table (adapters/state_table/sent_log.py, kept 30 days)."""

from __future__ import annotations

import argparse
import fnmatch
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from queuewatch.adapters.state_table.sent_log import KEEP, SentEntry, read_entries
from queuewatch.base.wording import moment
from queuewatch_cli.common.stacks import Target, UsageError, add_stack_arguments, boto_client, targets
from queuewatch_cli.common.times import parse_moment

KINDS = {"new": "page", "update": "update", "repeat": "repeat", "resolved": "resolve", "page": "page"}
LISTED = 5  # runner types a line names


def add_arguments(history: argparse.ArgumentParser) -> None:
    add_stack_arguments(history)
    history.add_argument("--since", default="24h", help="ISO time (UTC), or a duration ago (default 24h)")
    history.add_argument("--until", default="now", help="ISO time (UTC), 'now' (default), or a duration ago")
    history.add_argument("--rule", help="only this rule's pages")
    history.add_argument("--runner-type", metavar="GLOB", help="only pages listing a runner type this glob matches")
    history.add_argument("--team", help="only this team's pages")
    history.add_argument("--json", action="store_true", help="print JSON lines, one per entry")
    history.add_argument(
        "--alert",
        metavar="RULE/RUNNER_TYPE",
        help="an alert's state history instead of the pages: each change (pending, firing, silenced, resolved) "
        "with its figures; a runner type alone: every rule's",
    )


def selected(
    entries: Sequence[SentEntry], rule: str | None, runner_type: str | None, team: str | None
) -> list[SentEntry]:
    return [
        e
        for e in entries
        if (rule is None or e.rule == rule)
        and (team is None or e.team == team)
        and (runner_type is None or any(fnmatch.fnmatchcase(n, runner_type) for n in e.runner_types))
    ]


def line(entry: SentEntry, stack: str | None) -> str:
    names = ", ".join(entry.runner_types[:LISTED])
    more = entry.runner_types_affected - min(LISTED, len(entry.runner_types))
    names += f" and {more} more" if more > 0 else ""
    what = KINDS.get(entry.kind, entry.kind)
    outcome = "sent" if entry.outcome == "sent" else f"FAILED ({entry.error or 'no reason kept'})"
    where = f"{stack}  " if stack else ""
    return (
        f"{moment(entry.at)}  {where}{what:8} {entry.priority:3} {entry.rule} / {entry.group}  "
        f"team={entry.team}  to {entry.topic}: {outcome}  [{names}]  {entry.notification_id}"
    )


def document(entry: SentEntry, stack: str) -> dict[str, Any]:
    fields = asdict(entry)
    fields.update(
        stack=stack,
        kind=KINDS.get(entry.kind, entry.kind),
        at=entry.at.isoformat(),
        page_at=entry.page_at.isoformat(),
        runner_types=list(entry.runner_types),
    )
    return fields


def history_lines(
    found: Sequence[tuple[Target, list[SentEntry]]], start: datetime, end: datetime, as_json: bool
) -> list[str]:
    several = len(found) > 1
    rows = sorted(((e, t) for t, entries in found for e in entries), key=lambda row: (row[0].at, row[1].label))
    if as_json:
        return [json.dumps(document(e, t.label)) for e, t in rows]
    where = ", ".join(t.label for t, _ in found)
    head = f"queuewatch history of {where}, {moment(start)} to {moment(end)}:"
    if not rows:
        return [head, "  nothing sent"]
    return [head] + [f"  {line(e, t.label if several else None)}" for e, t in rows]


def run_history(
    args: argparse.Namespace,
    client: Callable[[str, str | None], Any] = boto_client,
    now: datetime | None = None,
    out: Callable[[str], None] = print,
) -> int:
    now = now or datetime.now(UTC)
    start = parse_moment(args.since, now, "--since")
    end = parse_moment(args.until, now, "--until") if args.until != "now" else now
    if end <= start:
        raise UsageError(f"--until {moment(end)} is not after --since {moment(start)}")
    if now - start > KEEP + timedelta(minutes=1):  # --since 30d, rounded down to its minute, is within
        raise UsageError(f"--since: the log keeps {KEEP.days} days; found {moment(start)}, before that")
    if getattr(args, "alert", None) is not None:
        from queuewatch_cli.common.alert_history import show_alert_history

        return show_alert_history(args, start, end, client, out)
    found = []
    for target in targets(args, client):
        entries = read_entries(client("dynamodb", target.region), target.table, start, end)
        found.append((target, selected(entries, args.rule, args.runner_type, args.team)))
    for text in history_lines(found, start, end, args.json):
        out(text)
    return 0
