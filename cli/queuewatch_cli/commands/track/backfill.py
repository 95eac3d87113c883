"""`queuewatch track backfill`: replay the autoscaler's EventBridge archive into the track rule, to fill the
jobs' history for the days before tracking was on. The track stage keeps only the furthest state of each job,
so replayed events and live ones can interleave in any order and twice: the result is the same. A replayed
event (EventBridge marks it with `replay-name`) of more than a quarter of an hour ago is stored as history
only (track/stage.py): never counted as queued now, so nothing pages, and no metric is emitted for it; one of
the last minutes counts as its live delivery would."""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import boto3
from botocore.exceptions import ClientError

from queuewatch.base.durations import parse_duration
from queuewatch.base.wording import moment
from queuewatch_cli.common.stacks import StackRef, boto_client, describe_outputs

if TYPE_CHECKING:
    from mypy_boto3_events import EventBridgeClient

POLL_SECONDS = 5.0
FINISHED = {"COMPLETED", "FAILED", "CANCELLED"}


class BackfillError(Exception):
    """A flag or the archive is not what a replay needs; says which and why."""


def replay_window(since: str, until: str | None, now: datetime) -> tuple[datetime, datetime]:
    """--from as an instant or a duration back from now; --to as an instant, now by default."""

    def instant(flag: str, text: str) -> datetime:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            try:
                return now - timedelta(seconds=parse_duration(text))
            except ValueError as error:
                raise BackfillError(
                    f"{flag}: found {text!r}, expected an ISO-8601 time or a duration such as 7d"
                ) from error
        if moment.tzinfo is None:
            raise BackfillError(f"{flag}: found {text!r}, expected a time with its zone, such as {now:%Y-%m-%dT%H:%MZ}")
        return moment.astimezone(UTC)

    start = instant("--from", since)
    end = instant("--to", until) if until else now
    if end > now:
        raise BackfillError(f"--to: {end.isoformat()} is in the future; a replay ends at the latest now")
    if start >= end:
        raise BackfillError(f"--from {start.isoformat()} is not before --to {end.isoformat()}")
    return start, end


def backfill(
    events: EventBridgeClient,
    archive: str,
    rule_arn: str,
    start: datetime,
    end: datetime,
    *,
    out: Callable[[str], None] = print,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """Start the replay into the track rule alone and follow it to its end; the replay's final state."""
    try:
        described = events.describe_archive(ArchiveName=archive)
    except ClientError as error:
        raise BackfillError(f"--archive {archive}: {error.response['Error'].get('Message', error)}") from error
    bus = described["EventSourceArn"]
    if not rule_arn.startswith(bus.replace(":event-bus/", ":rule/") + "/"):
        raise BackfillError(f"--rule-arn {rule_arn}: expected a rule on the archive's bus {bus}")
    name = f"queuewatch-backfill-{uuid.uuid4().hex[:12]}"
    events.start_replay(
        ReplayName=name,
        Description="queuewatch: workflow_job history into the track rule",
        EventSourceArn=described["ArchiveArn"],
        EventStartTime=start,
        EventEndTime=end,
        Destination={
            "Arn": bus,
            "FilterArns": [rule_arn],
        },  # only the track rule: the autoscaler's own rules never see it again
    )
    out(f"replay {name}: {moment(start)} to {moment(end)} from {archive} into {rule_arn}")
    while True:
        replay = events.describe_replay(ReplayName=name)
        state = replay["State"]
        reached = replay.get("EventLastReplayedTime")
        out(f"  {state}" + (f", replayed up to {moment(reached)}" if reached else ""))
        if state in FINISHED:
            if state != "COMPLETED":
                raise BackfillError(f"replay {name} {state}: {replay.get('StateReason', 'no reason given')}")
            return state
        sleep(POLL_SECONDS)


def add_arguments(track: argparse.ArgumentParser) -> None:
    actions = track.add_subparsers(dest="action", required=True)
    sub = actions.add_parser("backfill", help="replay the autoscaler's EventBridge archive into the track rule")
    sub.add_argument("--archive", required=True, help="the archive of the autoscaler's bus")
    sub.add_argument("--rule-arn", help="the stack's TrackRuleArn output (default: read from --stack)")
    sub.add_argument("--stack", action="append", metavar="NAME[@REGION]", help="the stack whose TrackRuleArn to use")
    sub.add_argument("--from", dest="since", default="7d", help="an ISO-8601 time or a duration back (default 7d)")
    sub.add_argument("--to", dest="until", help="an ISO-8601 time (default now)")
    sub.add_argument("--region", default=None)


def rule_of_stack(args: argparse.Namespace) -> tuple[str, str | None]:
    """--rule-arn and the region: as given, or from the stack's TrackRuleArn output."""
    if args.rule_arn:
        return args.rule_arn, args.region
    if not args.stack or len(args.stack) > 1:
        raise BackfillError("--rule-arn: none given; expected --rule-arn ARN or one --stack NAME[@REGION]")
    ref = StackRef.parse(args.stack[0], "--stack")
    cloudformation = boto_client("cloudformation", ref.region or args.region)
    rule_arn = describe_outputs(cloudformation, ref.name).get("TrackRuleArn")
    if not rule_arn:
        raise BackfillError(
            f"--stack {ref.name}: no TrackRuleArn output; the stack tracks jobs from the autoscaler's bus only "
            "when AutoscalerEventBusName is set"
        )
    return rule_arn, cloudformation.meta.region_name


def run(args: argparse.Namespace) -> int:
    try:
        start, end = replay_window(args.since, args.until, datetime.now(UTC))
        rule_arn, region = rule_of_stack(args)
        backfill(boto3.client("events", region_name=region), args.archive, rule_arn, start, end)
    except BackfillError as error:
        print(f"queuewatch track backfill: {error}", file=sys.stderr)
        return 2
    return 0
