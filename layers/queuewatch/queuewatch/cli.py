"""The `queuewatch` command line: config checks, silences, the alert schema, the local demo."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import boto3

from queuewatch.adapters.state_table import SilenceRecord, WriteConflict, end_silence, load_state, put_silence
from queuewatch.alert import alert_json_schema
from queuewatch.config import ConfigError, load_config
from queuewatch.durations import format_duration, parse_duration


def check_config(paths: Sequence[str]) -> int:
    failed = 0
    for path in paths:
        try:
            config = load_config(path)
        except ConfigError as error:
            print(error, file=sys.stderr)
            failed += 1
            continue
        rules = ", ".join(rule.name for rule in config.resolved_rules)
        print(
            f"{path}: OK: {len(config.runner_types)} runner type(s), {len(config.discovery)} discovery pattern(s), "
            f"rules: {rules}"
        )
    return 1 if failed else 0


def silence_add(args: argparse.Namespace) -> int:
    try:
        duration = parse_duration(args.duration)
    except ValueError as error:
        print(f"--for: {error}", file=sys.stderr)
        return 2
    if duration <= 0:
        print("--for: expected a duration above zero", file=sys.stderr)
        return 2
    now = datetime.now(UTC)
    silence = SilenceRecord(
        silence_id=uuid.uuid4().hex[:12],
        matchers=tuple(args.match or ()),
        rule=args.rule,
        team=args.team,
        starts_at=now,
        ends_at=now + timedelta(seconds=duration),
        author=args.author or getpass.getuser(),
        comment=args.comment,
    )
    put_silence(boto3.client("dynamodb", region_name=args.region), args.table, silence)
    print(f"silence {silence.silence_id} until {silence.ends_at:%Y-%m-%d %H:%M} UTC ({format_duration(duration)})")
    return 0


def silence_list(args: argparse.Namespace) -> int:
    state = load_state(boto3.client("dynamodb", region_name=args.region), args.table)
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
        end_silence(boto3.client("dynamodb", region_name=args.region), args.table, args.silence_id, datetime.now(UTC))
    except WriteConflict:
        print(f"no silence {args.silence_id!r} in {args.table}", file=sys.stderr)
        return 1
    print(f"silence {args.silence_id} expired; alerts it covered page again on the next tick")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="queuewatch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check-config", help="validate config files; exit 1 naming every problem")
    check.add_argument("paths", nargs="+", metavar="FILE")

    commands.add_parser("demo", help="the 114-minute incident, end to end, on an in-process moto")
    commands.add_parser("schema", help="print the alert message's JSON Schema")

    silence = commands.add_parser("silence", help="silence alerts: add, list, expire")
    actions = silence.add_subparsers(dest="action", required=True)
    for action in ("add", "list", "expire"):
        sub = actions.add_parser(action)
        sub.add_argument("--table", required=True, help="the stack's state table")
        sub.add_argument("--region", default=None)
        if action == "add":
            sub.add_argument("--match", action="append", help="runner type name or glob; repeatable")
            sub.add_argument("--rule", help="only this rule's alerts")
            sub.add_argument("--team", help="only this team's runner types")
            sub.add_argument("--for", dest="duration", required=True, help="how long, such as 2h or 30m")
            sub.add_argument("--comment", required=True, help="why; shown to everyone who lists silences")
            sub.add_argument("--author", help="defaults to the current user")
        elif action == "list":
            sub.add_argument("--all", action="store_true", help="include expired silences")
        else:
            sub.add_argument("silence_id")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "check-config":
        return check_config(args.paths)
    if args.command == "schema":
        print(json.dumps(alert_json_schema(), indent=2))
        return 0
    if args.command == "demo":
        from queuewatch.demo import run_demo

        return run_demo()
    handlers = {"add": silence_add, "list": silence_list, "expire": silence_expire}
    return handlers[args.action](args)


if __name__ == "__main__":
    sys.exit(main())
