"""`queuewatch silence add|list|expire|extend`: silences in each named stack's state table.

`add` checks the rule and team against the config (--config, or $QUEUEWATCH_CONFIG; without one, against
the names the stack's evaluator publishes from the config it runs, adapters/state_table/known_names.py, and what the
table holds), and says what the silence holds back at its start, before anyone waits for a page that never
comes; a silence may start later (--start). A pattern means what a rule's `match` means: without '@', the
key in every region. Every refusal names its flag and writes nothing. A silence id may be shortened to a
prefix of at least 8 characters that names one silence (`expire` and `extend` change what pages).
"""

from __future__ import annotations

import argparse
import difflib
import getpass
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from queuewatch.adapters.state_table.alerts import WriteConflict, load_state, put_silence, set_silence_end
from queuewatch.adapters.state_table.known_names import read_known
from queuewatch.alerting.alert_state import StoredState
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.base.durations import format_duration, parse_duration
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.globs import HEALTH_INSTANCE_CHARACTERS, IDENTITY_CHARACTERS, glob_problem
from queuewatch.base.wording import moment
from queuewatch.config.known import known_names
from queuewatch.config.load import load_config
from queuewatch.config.names import RULE_NAME
from queuewatch.evaluate.slo import PREFIX, slo_rules
from queuewatch.model.rules import HEALTH_RULE, TICKET_SUFFIX
from queuewatch.model.snapshot import runner_type_key
from queuewatch_cli.common.stacks import Target, UsageError, boto_client, on_table, targets

LONGEST_SILENCE = 30 * 86400
"""A silence past a month hides an alert for good; a rule that should not page is changed in the config."""
LONGEST_TEXT = f"{LONGEST_SILENCE // 86400}d"
PREVIEW_LISTED = 10
SHORTEST_ID = 8  # of a 12-character id: a prefix this long names one silence, never a guess
SUGGESTED = 5

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
    if args.rule is not None and not RULE_NAME.match(_without_slo_prefix(args.rule)):
        problems.append(f"--rule: found {args.rule!r}, expected a rule name of lower-case letters, digits and '-'")
    if args.team is not None and not args.team.strip():
        problems.append("--team: found an empty team, expected a team name")
    if not args.comment.strip():
        problems.append("--comment: found an empty comment, expected why (everyone who lists silences reads it)")
    problems += duration_problems(args.duration)
    return problems + start_problems(args.start, datetime.now(UTC))


def duration_problems(text: str) -> list[str]:
    try:
        duration = parse_duration(text)
    except ValueError as error:
        return [f"--for: {error}"]
    if not 0 < duration <= LONGEST_SILENCE:
        return [
            f"--for: found {text!r}, expected above zero and at most {LONGEST_TEXT}: "
            "an alert that should not page for longer is changed in the config"
        ]
    return []


def start_problems(text: str | None, now: datetime) -> list[str]:
    if text is None:
        return []
    try:
        start = parse_start(text, now)
    except QueuewatchError as error:
        return [str(error)]
    if start < now - timedelta(minutes=1):
        return [f"--start: found {text!r}, {moment(start)}, in the past; expected a later time"]
    if start - now > timedelta(seconds=LONGEST_SILENCE):
        return [f"--start: found {text!r}, more than {LONGEST_TEXT} from now; expected a start within {LONGEST_TEXT}"]
    return []


def parse_start(text: str, now: datetime) -> datetime:
    """`now`, `+2h` (that long from now), or an ISO time (UTC unless it says)."""
    expected = "expected an ISO time such as 2026-05-01T09:00 (UTC unless it says), +2h (from now) or now"
    if text == "now":
        return now
    if text.startswith("+"):
        try:
            return now + timedelta(seconds=parse_duration(text[1:]))
        except ValueError as error:
            raise QueuewatchError(f"--start: {error}, after the '+'") from None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise QueuewatchError(f"--start: found {text!r}, {expected}") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


@dataclass(frozen=True)
class Known:
    rules: set[str]
    teams: set[str]
    runner_types: set[str]
    source: str


def known(config_path: str | None, state: StoredState, target: Target, client: Client) -> Known:
    """The rules, teams and runner types a silence may name: the config's when one is given, else those the
    stack's evaluator published from the config it runs, with those of the table's alerts."""
    alerting = {i.runner_type for i in state.instances.values()}
    if config_path:
        config = load_config(config_path)
        names = known_names(config)
        slos = set(slo_rules(config))  # each SLO's rules, slo:<name> and slo:<name>:ticket
        teams = set(names.teams) | {slo.team for slo in config.resolved_slos}
        return Known(set(names.rules) | slos, teams, set(names.runner_types) | alerting, f"the config {config_path}")
    rules = {key.rule for key in state.instances} | {record.rule for record in state.groups.values()}
    teams = {i.team for i in state.instances.values() if i.team}
    teams |= {t for g in state.groups.values() if g.paged_as for t in g.paged_as.teams}
    published = on_table(target, read_known, client)
    if published is None:
        source = f"the alerts in {target.table} (its evaluator has published no config yet; pass --config FILE)"
        return Known(rules | {HEALTH_RULE}, teams, alerting, source)
    names, written = published
    source = f"the config {target.label} runs (as its evaluator published it at {moment(written)})"
    return Known(rules | set(names.rules), teams | set(names.teams), alerting | set(names.runner_types), source)


def check_against(args: argparse.Namespace, found: Known) -> None:
    if args.rule is not None and args.rule not in found.rules:
        raise RequestError(
            f"--rule: found {args.rule!r}, which is not in {found.source}; "
            f"expected one of {', '.join(sorted(found.rules))}"
        )
    if args.team is not None and args.team not in found.teams:
        teams = ", ".join(sorted(found.teams)) or "none"
        raise RequestError(f"--team: found {args.team!r}, which is not in {found.source}; expected one of: {teams}")


def preview(silence: SilenceRecord, state: StoredState, found: Known, now: datetime) -> list[str]:
    """What the silence would hold back at its start, of the alerts pending or firing now (one line per rule),
    the runner types it covers, and, when it covers none the stack knows, the closest names that it could."""
    at = max(silence.starts_at, now)
    lines = [] if at == now else [f"starts {moment(at)}; of the alerts firing or pending now, it would hold back:"]
    held: dict[tuple[str, str], list[str]] = {}
    for instance in sorted(state.instances.values(), key=lambda i: (i.rule, i.runner_type)):
        if silence.matches(instance.rule, instance.runner_type, instance.team or "", at):
            held.setdefault((instance.rule, instance.status.value), []).append(instance.runner_type)
    if not held:
        lines.append("matches nothing firing or pending now")
    for (rule, status), names in sorted(held.items()):
        lines.append(f"matches {rule} {status} on {len(names)} runner type(s): {_listed(names)}")
    if silence.matchers:
        covered = sorted(name for name in found.runner_types if silence.covers(name))
        if covered:
            lines.append(f"covers {len(covered)} runner type(s) the stack knows: {_listed(covered)}")
        elif found.runner_types:
            close = closest(silence.matchers, found.runner_types)
            hint = f"; closest: {', '.join(close)}" if close else ""
            lines.append(f"covers no runner type the stack knows{hint}")
    return lines


def _listed(names: list[str]) -> str:
    more = len(names) - PREVIEW_LISTED
    return ", ".join(names[:PREVIEW_LISTED]) + (f" and {more} more" if more > 0 else "")


def closest(patterns: tuple[str, ...], names: set[str]) -> list[str]:
    """The names (or keys, without their region) nearest to what was typed: a typo, or a pattern's stem."""
    candidates = sorted(names | {runner_type_key(name) for name in names})
    found: list[str] = []
    for pattern in patterns:
        stem = pattern.replace("*", "").replace("?", "").split("@")[0]
        found += difflib.get_close_matches(stem, candidates, n=SUGGESTED, cutoff=0.6)
        found += [name for name in candidates if stem and stem in name]
    return list(dict.fromkeys(found))[:SUGGESTED]


def silence_add(args: argparse.Namespace, client: Client = boto_client, out: Callable[[str], None] = print) -> int:
    problems = silence_problems(args)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 2
    duration = parse_duration(args.duration)
    now = datetime.now(UTC)
    start = parse_start(args.start, now) if args.start else now
    silence = SilenceRecord(
        silence_id=uuid.uuid4().hex[:12],
        matchers=tuple(args.match or ()),
        rule=args.rule,
        team=args.team,
        starts_at=max(start, now),
        ends_at=max(start, now) + timedelta(seconds=duration),
        author=args.author or getpass.getuser(),
        comment=args.comment.strip(),
    )
    chosen = targets(args, client)
    states = [on_table(target, load_state, client) for target in chosen]
    try:
        found = [known(args.config, state, target, client) for target, state in zip(chosen, states, strict=True)]
        for names in found:  # every stack checked before any is written
            check_against(args, names)
    except RequestError as error:
        print(f"{error}\nnothing was written", file=sys.stderr)
        return 2
    for target, state, names in zip(chosen, states, found, strict=True):
        on_table(target, lambda dynamodb, table: put_silence(dynamodb, table, silence), client)
        where = f" on {target.label}" if len(chosen) > 1 else ""
        since = f"from {moment(silence.starts_at)} " if silence.scheduled(now) else ""
        out(f"silence {silence.silence_id}{where} {since}until {moment(silence.ends_at)} ({format_duration(duration)})")
        for line in preview(silence, state, names, now):
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
    for target, s in sorted(shown, key=lambda row: _listing_order(row[1], now)):
        status = _status(s, now)
        where = f"{target.label}  " if len(chosen) > 1 else ""
        if status == "cancelled":
            span = f"at {moment(s.ends_at)}, before its start {moment(s.starts_at)}"
        else:
            span = f"{'from ' if status == 'scheduled' else 'since'} {moment(s.starts_at)} until {moment(s.ends_at)}"
        out(
            f"{s.silence_id}  {where}{status:9}  {span}  rule={s.rule or '*'}  team={s.team or '*'}  "
            f"match={','.join(s.matchers) or '*'}  by {s.author}: {s.comment}"
        )
    return 0


def _status(silence: SilenceRecord, now: datetime) -> str:
    if silence.cancelled:
        return "cancelled"
    if silence.scheduled(now):
        return "scheduled"
    return "active" if silence.active(now) else "expired"


def _listing_order(silence: SilenceRecord, now: datetime) -> tuple[int, datetime, str]:
    """As time runs: the expired and the active by their end, then the scheduled ones apart, by their start."""
    status = _status(silence, now)
    order = {"cancelled": 0, "expired": 0, "active": 0, "scheduled": 1}[status]
    return order, silence.starts_at if status == "scheduled" else silence.ends_at, silence.silence_id


def covers(silence: SilenceRecord, runner_type: str) -> bool:
    """Whether the silence names or covers the runner type (or glob) given to `list --match`."""
    return runner_type in silence.matchers or silence.covers(runner_type)


def _find(args: argparse.Namespace, client: Client) -> list[tuple[Target, SilenceRecord]] | None:
    """The silence the id names, in each stack: the whole id, or a prefix of exactly one. None (having said
    why on stderr) when it names none, or several."""
    wanted: str = args.silence_id
    chosen = targets(args, client)
    found: list[tuple[Target, SilenceRecord]] = []
    for target in chosen:
        silences = on_table(target, load_state, client).silences
        exact = [s for s in silences if s.silence_id == wanted]
        if not exact and len(wanted) < SHORTEST_ID:
            raise UsageError(
                f"silence id {wanted!r}: give at least {SHORTEST_ID} characters of it (the whole id, as silence list "
                "shows it), so that it cannot name the wrong silence; nothing was changed"
            )
        found += [(target, s) for s in exact or [s for s in silences if s.silence_id.startswith(wanted)]]
    ids = sorted({s.silence_id for _, s in found})
    if not ids:
        print(f"no silence {wanted!r} in {', '.join(t.table for t in chosen)}", file=sys.stderr)
        return None
    if len(ids) > 1:
        print(
            f"silence id {wanted!r} is the start of {len(ids)} silences: {', '.join(ids)}; give more of it",
            file=sys.stderr,
        )
        return None
    return found


def _move_end(target: Target, silence: SilenceRecord, end: datetime, client: Client) -> None:
    """The silence now ends at `end`, unless someone moved its end since it was read (WriteConflict)."""
    on_table(target, lambda d, t: set_silence_end(d, t, silence.silence_id, end, silence.ends_at), client)


def silence_expire(args: argparse.Namespace, client: Client = boto_client, out: Callable[[str], None] = print) -> int:
    found = _find(args, client)
    if found is None:
        return 1
    now = datetime.now(UTC)
    for target, silence in found:
        if silence.ends_at <= now:
            out(
                f"silence {silence.silence_id} had already {_status(silence, now)} at {moment(silence.ends_at)}: "
                "nothing changed"
            )
            continue
        try:
            _move_end(target, silence, now, client)
        except WriteConflict:
            print(f"silence {silence.silence_id} changed while this ran; list it and try again", file=sys.stderr)
            return 1
        if silence.scheduled(now):
            out(f"silence {silence.silence_id} cancelled before its start; it holds nothing back")
        else:
            out(f"silence {silence.silence_id} expired; alerts it covered page again on the next tick")
    return 0


def silence_extend(args: argparse.Namespace, client: Client = boto_client, out: Callable[[str], None] = print) -> int:
    problems = [p.replace("--for", "--by") for p in duration_problems(args.by)]
    if problems:
        print(f"{problems[0]}\nnothing was written", file=sys.stderr)
        return 2
    found = _find(args, client)
    if found is None:
        return 1
    now = datetime.now(UTC)
    for target, silence in found:
        end = max(silence.ends_at, now) + timedelta(seconds=parse_duration(args.by))
        if end - now > timedelta(seconds=LONGEST_SILENCE):
            print(
                f"--by: the silence would end {moment(end)}, more than {LONGEST_TEXT} from now; nothing was written",
                file=sys.stderr,
            )
            return 2
        try:
            _move_end(target, silence, end, client)
        except WriteConflict:
            print(f"silence {silence.silence_id} changed while this ran; list it and try again", file=sys.stderr)
            return 1
        was = _status(silence, now)
        out(f"silence {silence.silence_id} ({was}) now ends {moment(end)}")
    return 0


def _without_slo_prefix(rule: str) -> str:
    """An SLO's rule (`slo:<name>`, `slo:<name>:ticket`) checked by the SLO's name."""
    return rule.removeprefix(PREFIX).removesuffix(TICKET_SUFFIX) if rule.startswith(PREFIX) else rule
