"""`queuewatch silence add|list|expire`: silences in the stack's state table."""

from __future__ import annotations

import argparse
import getpass
import sys
import uuid
from datetime import UTC, datetime, timedelta

import boto3

from queuewatch.adapters.state_table import WriteConflict, end_silence, load_state, put_silence
from queuewatch.durations import format_duration, parse_duration
from queuewatch.silences import SilenceRecord


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
