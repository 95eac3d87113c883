"""`queuewatch silence add|list|expire`: silences in the stack's state table."""

from __future__ import annotations

import argparse
import getpass
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import boto3
from botocore.exceptions import ClientError, NoRegionError

from queuewatch.adapters.state_table import WriteConflict, end_silence, load_state, put_silence
from queuewatch.config.load import ConfigError, load_config
from queuewatch.config.names import RULE_NAME
from queuewatch.durations import format_duration, parse_duration
from queuewatch.errors import QueuewatchError
from queuewatch.globs import HEALTH_INSTANCE_CHARACTERS, IDENTITY_CHARACTERS, glob_problem
from queuewatch.rules import HEALTH_RULE
from queuewatch.silences import SilenceRecord

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


LONGEST_SILENCE = 30 * 86400
"""A silence past a month hides an alert for good; a rule that should not page is changed in the config."""


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
    try:
        duration = parse_duration(args.duration)
    except ValueError as error:
        problems.append(f"--for: {error}")
    else:
        if not 0 < duration <= LONGEST_SILENCE:
            problems.append(
                f"--for: found {args.duration!r}, expected above zero and at most {format_duration(LONGEST_SILENCE)}: "
                "an alert that should not page for longer is changed in the config"
            )
    return problems


def known_rules(args: argparse.Namespace) -> tuple[set[str], str]:
    """The rules a silence may name, and where they come from: the config when one is given, else the
    rules the state table has alerts for (every page's own silence command names one of those)."""
    if args.config:
        config = load_config(args.config)
        return {rule.name for rule in config.resolved_rules} | {HEALTH_RULE}, f"the config {args.config}"
    state = _on_table(args, load_state)
    rules = {key.rule for key in state.instances} | {record.rule for record in state.groups.values()}
    return rules | {HEALTH_RULE}, f"the alerts in {args.table} (pass --config FILE to check against the config)"


def silence_add(args: argparse.Namespace) -> int:
    problems = silence_problems(args)
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print("nothing was written", file=sys.stderr)
        return 2
    try:
        if args.rule is not None:
            rules, source = known_rules(args)
            if args.rule not in rules:
                raise RequestError(
                    f"--rule: found {args.rule!r}, which is not in {source}; expected one of {', '.join(sorted(rules))}"
                )
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
        _on_table(args, lambda client, table: put_silence(client, table, silence))
    except (RequestError, ConfigError) as error:
        print(f"{error}\nnothing was written", file=sys.stderr)
        return 2
    print(f"silence {silence.silence_id} until {silence.ends_at:%Y-%m-%d %H:%M} UTC ({format_duration(duration)})")
    return 0


def _on_table[T](args: argparse.Namespace, call: Callable[[DynamoDBClient, str], T]) -> T:
    """`call` on the state table; no region, or a table that is not there, is one line naming the flag."""
    try:
        client = boto3.client("dynamodb", region_name=args.region)
    except NoRegionError as error:
        raise RequestError(
            "--region: none given and no default region (AWS_REGION or the profile's); expected one such as us-east-1"
        ) from error
    try:
        return call(client, args.table)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
            raise
        region = client.meta.region_name
        raise RequestError(
            f"--table: found no table {args.table!r} in {region} (--region); expected the stack's StateTableName"
        ) from error


def silence_list(args: argparse.Namespace) -> int:
    try:
        state = _on_table(args, load_state)
    except RequestError as error:
        print(error, file=sys.stderr)
        return 2
    now = datetime.now(UTC)
    shown = [s for s in state.silences if args.all or s.ends_at > now]
    if not shown:
        print("no active silences")
    for s in sorted(shown, key=lambda s: s.ends_at):
        status = "active" if s.starts_at <= now < s.ends_at else "expired"
        print(
            f"{s.silence_id}  {status:7}  until {s.ends_at:%Y-%m-%d %H:%M} UTC  rule={s.rule or '*'}  "
            f"team={s.team or '*'}  match={','.join(s.matchers) or '*'}  by {s.author}: {s.comment}"
        )
    return 0


def silence_expire(args: argparse.Namespace) -> int:
    try:
        _on_table(args, lambda client, table: end_silence(client, table, args.silence_id, datetime.now(UTC)))
    except WriteConflict:
        print(f"no silence {args.silence_id!r} in {args.table}", file=sys.stderr)
        return 1
    except RequestError as error:
        print(error, file=sys.stderr)
        return 2
    print(f"silence {args.silence_id} expired; alerts it covered page again on the next tick")
    return 0
