"""`queuewatch history --alert RULE/RUNNER_TYPE` (or a runner type alone, for every rule; `status --history` likewise,
over the last 24h): an alert's state history, as Grafana keeps one: each change of status (pending, firing,
resolved, ok) with the figures that made it, and each time a silence, a maintenance window or a GitHub hold started
(silenced) or stopped (unsilenced) holding a pending or firing alert back, from the items the evaluator writes
beside each change (adapters/state_table/transition_log.py, kept 30 days)."""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.adapters.state_table.known_names import read_known
from queuewatch.adapters.state_table.transition_log import Transition, read_transitions
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import moment
from queuewatch.evaluate.holds import described
from queuewatch_cli.common.stacks import Target, UsageError, on_table, targets


@dataclass(frozen=True)
class Row:
    at: datetime
    rule: str
    runner_type: str
    status: str  # pending, firing, resolved, ok, silenced, unsilenced
    detail: str
    fields: dict[str, Any]


def parse_alert(text: str) -> tuple[str | None, str]:
    """`rule/runner_type`, `rule#runner_type` (as results and logs name an instance), or a runner type alone."""
    for separator in ("/", "#"):
        rule, found, runner_type = text.partition(separator)
        if found:
            if not rule.strip() or not runner_type.strip():
                raise UsageError(f"--alert: found {text!r}, expected RULE/RUNNER_TYPE or a runner type")
            return rule.strip(), runner_type.strip()
    if not text.strip():
        raise UsageError("--alert: found nothing, expected RULE/RUNNER_TYPE or a runner type")
    return None, text.strip()


def _holders(held: tuple[str, ...], silences: dict[str, SilenceRecord]) -> str:
    """What held it back, each as evaluate/holds/ words it."""
    return ", ".join(described(name, silences) for name in held)


def _figures(t: Transition, silences: dict[str, SilenceRecord]) -> str:
    size = "?" if t.queue_size is None else f"{t.queue_size:g}"
    age = "?" if t.queue_time is None else format_duration(t.queue_time)
    text = f"queue size {size}, queue time {age}"
    if t.breached:
        text += f" (over: {', '.join(t.breached)})"
    if t.status == "silenced":
        return f"held back by {_holders(t.silenced_by, silences)}; {text}"
    if t.status == "unsilenced":
        return f"released by {_holders(t.silenced_by, silences)}; {text}"
    if t.silenced_by:
        text += f"; held back by {_holders(t.silenced_by, silences)}"
    return text


def _read(dynamodb: Any, table: str, *, rule: str, runner_type: str) -> list[Transition]:
    return read_transitions(dynamodb, table, rule, runner_type)


def alert_rows(
    target: Target, rule: str | None, runner_type: str, client: Callable[[str, str | None], Any]
) -> list[Row]:
    """Every change of the alert (of each rule the stack knows, without one), with its silences, oldest first."""
    state = on_table(target, load_state, client)
    published = on_table(target, read_known, client)
    known_rules = {key.rule for key in state.instances} | (set(published[0].rules) if published else set())
    rules = {rule} if rule is not None else known_rules
    rows: list[Row] = []
    silences = {s.silence_id: s for s in state.silences}
    for name in sorted(rules):
        changes = on_table(target, partial(_read, rule=name, runner_type=runner_type), client)
        for change in changes:
            rows.append(
                Row(
                    change.at,
                    name,
                    runner_type,
                    change.status,
                    _figures(change, silences),
                    {
                        "previous": change.previous,
                        "queue_size": change.queue_size,
                        "queue_time_seconds": change.queue_time,
                        "breached": list(change.breached),
                        "silenced_by": list(change.silenced_by),
                        "team": change.team,
                    },
                )
            )
    if not rows:  # nothing recorded: a quiet alert, or a name nothing knows, which must not read as quiet
        known_types = {key.runner_type for key in state.instances} | (
            set(published[0].runner_types) if published else set()
        )
        _refuse_unknown("rule", rule, known_rules, target)
        _refuse_unknown("runner type", runner_type, known_types, target)
    return sorted(rows, key=lambda r: (r.at, r.rule, r.status))


def _refuse_unknown(what: str, name: str | None, known: set[str], target: Target) -> None:
    """A name the stack has never known, said as unknown with the nearest known ones; nothing known: no verdict."""
    if name is None or not known or name in known:
        return
    near = difflib.get_close_matches(name, sorted(known), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(near)}?" if near else f"; known: {', '.join(sorted(known)[:10])}"
    raise UsageError(f"--alert: {target.label} knows no {what} {name!r} (its config and alerts){hint}")


def alert_history_lines(
    target: Target, rule: str | None, runner_type: str, rows: list[Row], start: datetime, end: datetime, as_json: bool
) -> list[str]:
    shown = [r for r in rows if start <= r.at < end]
    if as_json:
        return [
            json.dumps(
                {
                    "stack": target.label,
                    "at": r.at.isoformat(),
                    "rule": r.rule,
                    "runner_type": r.runner_type,
                    "status": r.status,
                    **r.fields,
                }
            )
            for r in shown
        ]
    what = f"{rule} / {runner_type}" if rule else f"{runner_type} (every rule)"
    head = f"state history of {what} on {target.label}, {moment(start)} to {moment(end)}:"
    if not shown:
        return [head, "  no change of state recorded"]
    several = rule is None  # every rule: each line names its own
    return [head] + [f"  {moment(r.at)}  {(r.rule + '  ') if several else ''}{r.status:10} {r.detail}" for r in shown]


def show_alert_history(
    args: argparse.Namespace,
    start: datetime,
    end: datetime,
    client: Callable[[str, str | None], Any],
    out: Callable[[str], None],
) -> int:
    """`args.alert`'s state history from `start` to `end` on each stack the arguments name."""
    rule, runner_type = parse_alert(args.alert)
    for target in targets(args, client):
        for text in alert_history_lines(
            target, rule, runner_type, alert_rows(target, rule, runner_type, client), start, end, args.json
        ):
            out(text)
    return 0
