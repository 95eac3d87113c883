"""`queuewatch silence add|list|expire|extend`: silences in each named stack's state table.

`add` checks the rule and team against the config (--config, or $QUEUEWATCH_CONFIG; without one, against
what the table holds), and says what the silence holds back now, before anyone waits for a page that
never comes. Every refusal names its flag and writes nothing.
"""

from __future__ import annotations

import argparse
import fnmatch
import getpass
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from queuewatch.adapters.state_table import WriteConflict, load_state, put_silence, set_silence_end
from queuewatch.alert_state import StoredState
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.config.names import RULE_NAME
from queuewatch.durations import format_duration, parse_duration
from queuewatch.errors import QueuewatchError
from queuewatch.globs import HEALTH_INSTANCE_CHARACTERS, IDENTITY_CHARACTERS, glob_problem
from queuewatch.rules import HEALTH_RULE
from queuewatch.silences import SilenceRecord
from queuewatch_cli.stacks import Target, boto_client, on_table, targets

LONGEST_SILENCE = 30 * 86400
"""A silence past a month hides an alert for good; a rule that should not page is changed in the config."""
PREVIEW_LISTED = 10

Client = Callable[[str, str | None], Any]


class RequestError(QueuewatchError):
    """The command's flags or the stack they name are wrong; nothing was written."""


def silence_problems(args: argparse.Namespace) -> list[str]:
    """What is wrong with `silence add`'s flags alone, each naming its flag: found, expected."""
    problems: list[str] = []
    matchers: list[str] = args.match or []
    if not matchers and not args.all:
        problems.append(
            "--match: none given; expected --match GLOB (repeatable) naming the runner types to silence, or --all "
            "for every runner type (queuewatch's own health page is never silenced by --all)"
        )
    if matchers and args.all:
        problems.append(f"--all: given with --match {' '.join(matchers)}; expected one or the other")
    alphabet = HEALTH_INSTANCE_CHARACTERS if args.rule == HEALTH_RULE else IDENTITY_CHARACTERS
    problems += [f"--match: {problem}" for m in matchers if (problem := glob_problem(m, alphabet))]
    if args.rule is not None and not RULE_NAME.match(args.rule):
        problems.append(f"--rule: found {args.rule!r}, expected a rule name of lower-case letters, digits and '-'")
    if args.team is not None and not args.team.strip():
        problems.append("--team: found an empty team, expected a team name")
    if not args.comment.strip():
        problems.append("--comment: found an empty comment, expected why (everyone who lists silences reads it)")
    problems += duration_problems(args.duration)
    return problems


def duration_problems(text: str) -> list[str]:
    try:
        duration = parse_duration(text)
    except ValueError as error:
        return [f"--for: {error}"]
    if not 0 < duration <= LONGEST_SILENCE:
        return [
            f"--for: found {text!r}, expected above zero and at most {format_duration(LONGEST_SILENCE)}: "
            "an alert that should not page for longer is changed in the config"
        ]
    return []


def config_teams(config: Config) -> set[str]:
    """Every team the config can page: the rules' (defaults applied), the runner types', discovery's, the monitor's."""
    teams = {rule.team for rule in (*config.resolved_rules, *config.path_rules)}
    teams |= {spec.team for spec in config.runner_types if spec.team}
    teams |= {found.team for found in config.discovery if found.team}
    return teams | ({config.monitor.team} if config.monitor.team else set())


@dataclass(frozen=True)
class Known:
    rules: set[str]
    teams: set[str]
    source: str


def known(config_path: str | None, state: StoredState, target: Target) -> Known:
    """The rules and teams a silence may name: the config's when one is given, else what the table holds."""
    if config_path:
        config = load_config(config_path)
        source = f"the config {config_path}"
        rules = {r.name for r in (*config.resolved_rules, *config.path_rules)}  # job-retry, dead-letter: pages too
        return Known(rules | {HEALTH_RULE}, config_teams(config), source)
    rules = {key.rule for key in state.instances} | {record.rule for record in state.groups.values()}
    teams = {i.team for i in state.instances.values() if i.team}
    teams |= {t for g in state.groups.values() if g.paged_as for t in g.paged_as.teams}
    source = f"the alerts in {target.table} (pass --config FILE to check against the config)"
    return Known(rules | {HEALTH_RULE}, teams, source)


def check_against(args: argparse.Namespace, found: Known) -> None:
    if args.rule is not None and args.rule not in found.rules:
        raise RequestError(
            f"--rule: found {args.rule!r}, which is not in {found.source}; "
            f"expected one of {', '.join(sorted(found.rules))}"
        )
    if args.team is not None and args.team not in found.teams:
        teams = ", ".join(sorted(found.teams)) or "none"
        raise RequestError(f"--team: found {args.team!r}, which is not in {found.source}; expected one of: {teams}")


def preview(silence: SilenceRecord, state: StoredState, now: datetime) -> list[str]:
    """The alerts pending or firing now that the silence would hold back: one line per rule."""
    held: dict[tuple[str, str], list[str]] = {}
    for instance in sorted(state.instances.values(), key=lambda i: (i.rule, i.runner_type)):
        if silence.matches(instance.rule, instance.runner_type, instance.team or "", now):
            held.setdefault((instance.rule, instance.status.value), []).append(instance.runner_type)
    if not held:
        return ["matches nothing firing or pending now"]
    lines = []
    for (rule, status), names in sorted(held.items()):
        more = len(names) - PREVIEW_LISTED
        shown = ", ".join(names[:PREVIEW_LISTED]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"matches {rule} {status} on {len(names)} runner type(s): {shown}")
    return lines


def silence_add(args: argparse.Namespace, client: Client = boto_client, out: Callable[[str], None] = print) -> int:
    problems = silence_problems(args)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 2
    duration = parse_duration(args.duration)
    now = datetime.now(UTC)
    silence = SilenceRecord(
        silence_id=uuid.uuid4().hex[:12],
        matchers=tuple(args.match or ()),
        rule=args.rule,
        team=args.team,
        starts_at=now,
        ends_at=now + timedelta(seconds=duration),
        author=args.author or getpass.getuser(),
        comment=args.comment.strip(),
    )
    chosen = targets(args, client)
    states = [on_table(target, load_state, client) for target in chosen]
    try:
        for target, state in zip(chosen, states, strict=True):  # every stack checked before any is written
            check_against(args, known(args.config, state, target))
    except RequestError as error:
        print(f"{error}\nnothing was written", file=sys.stderr)
        return 2
    for target, state in zip(chosen, states, strict=True):
        on_table(target, lambda dynamodb, table: put_silence(dynamodb, table, silence), client)
        where = f" on {target.label}" if len(chosen) > 1 else ""
        out(
            f"silence {silence.silence_id}{where} until {silence.ends_at:%Y-%m-%d %H:%M} UTC "
            f"({format_duration(duration)})"
        )
        for line in preview(silence, state, now):
            out(f"  {line}")
    return 0


def silence_list(args: argparse.Namespace, client: Client = boto_client, out: Callable[[str], None] = print) -> int:
    now = datetime.now(UTC)
    chosen = targets(args, client)
    shown: list[tuple[Target, SilenceRecord]] = []
    for target in chosen:
        for s in on_table(target, load_state, client).silences:
            expired = s.ends_at <= now
            if (args.expired and not expired) or (not (args.all or args.expired) and expired):
                continue
            if args.author is not None and s.author != args.author:
                continue
            if args.match is not None and not covers(s, args.match):
                continue
            shown.append((target, s))
    if not shown:
        out("no silences" if args.all or args.expired or args.author or args.match else "no active silences")
    for target, s in sorted(shown, key=lambda row: row[1].ends_at):
        status = "active" if s.starts_at <= now < s.ends_at else "expired"
        where = f"{target.label}  " if len(chosen) > 1 else ""
        out(
            f"{s.silence_id}  {where}{status:7}  since {s.starts_at:%Y-%m-%d %H:%M} until {s.ends_at:%Y-%m-%d %H:%M} "
            f"UTC  rule={s.rule or '*'}  team={s.team or '*'}  match={','.join(s.matchers) or '*'}  "
            f"by {s.author}: {s.comment}"
        )
    return 0


def covers(silence: SilenceRecord, runner_type: str) -> bool:
    """Whether the silence names or covers the runner type (or glob) given to `list --match`."""
    return (
        not silence.matchers
        or runner_type in silence.matchers
        or any(fnmatch.fnmatchcase(runner_type, m) for m in silence.matchers)
    )


def _find(args: argparse.Namespace, client: Client) -> list[tuple[Target, SilenceRecord]]:
    found = []
    for target in targets(args, client):
        state = on_table(target, load_state, client)
        found += [(target, s) for s in state.silences if s.silence_id == args.silence_id]
    return found


def _move_end(target: Target, silence: SilenceRecord, end: datetime, client: Client) -> None:
    """The silence now ends at `end`, unless someone moved its end since it was read (WriteConflict)."""
    on_table(target, lambda d, t: set_silence_end(d, t, silence.silence_id, end, silence.ends_at), client)


def silence_expire(args: argparse.Namespace, client: Client = boto_client, out: Callable[[str], None] = print) -> int:
    found = _find(args, client)
    if not found:
        print(f"no silence {args.silence_id!r} in {', '.join(t.table for t in targets(args, client))}", file=sys.stderr)
        return 1
    now = datetime.now(UTC)
    for target, silence in found:
        if silence.ends_at <= now:
            out(
                f"silence {silence.silence_id} had already expired at {silence.ends_at:%Y-%m-%d %H:%M} UTC: "
                "nothing changed"
            )
            continue
        try:
            _move_end(target, silence, now, client)
        except WriteConflict:
            print(f"silence {silence.silence_id} changed while this ran; list it and try again", file=sys.stderr)
            return 1
        out(f"silence {silence.silence_id} expired; alerts it covered page again on the next tick")
    return 0


def silence_extend(args: argparse.Namespace, client: Client = boto_client, out: Callable[[str], None] = print) -> int:
    problems = [p.replace("--for", "--by") for p in duration_problems(args.by)]
    if problems:
        print(f"{problems[0]}\nnothing was written", file=sys.stderr)
        return 2
    found = _find(args, client)
    if not found:
        print(f"no silence {args.silence_id!r}", file=sys.stderr)
        return 1
    now = datetime.now(UTC)
    for target, silence in found:
        end = max(silence.ends_at, now) + timedelta(seconds=parse_duration(args.by))
        if end - now > timedelta(seconds=LONGEST_SILENCE):
            print(
                f"--by: the silence would end {end:%Y-%m-%d %H:%M} UTC, more than "
                f"{format_duration(LONGEST_SILENCE)} from now; nothing was written",
                file=sys.stderr,
            )
            return 2
        try:
            _move_end(target, silence, end, client)
        except WriteConflict:
            print(f"silence {silence.silence_id} changed while this ran; list it and try again", file=sys.stderr)
            return 1
        was = "expired" if silence.ends_at <= now else "active"
        out(f"silence {silence.silence_id} ({was}) now ends {end:%Y-%m-%d %H:%M} UTC")
    return 0
