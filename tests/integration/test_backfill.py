"""`queuewatch track backfill` against moto's EventBridge: the archive replayed into the track rule alone."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest

from queuewatch_cli.backfill import BackfillError, backfill, replay_window
from queuewatch_cli.main import main

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


@pytest.fixture
def bus(aws: None) -> dict[str, str]:
    events = boto3.client("events", region_name="us-east-1")
    bus_arn = events.create_event_bus(Name="ci-runners")["EventBusArn"]
    archive = events.create_archive(ArchiveName="ci-runners-archive", EventSourceArn=bus_arn, RetentionDays=7)
    track = events.put_rule(
        Name="queuewatch-track",
        EventBusName="ci-runners",
        EventPattern=json.dumps({"source": ["github"], "detail-type": ["workflow_job"]}),
    )["RuleArn"]
    other = events.put_rule(Name="autoscaler-dispatch", EventBusName="ci-runners", EventPattern='{"source":["github"]}')
    return {"bus": bus_arn, "archive": archive["ArchiveArn"], "track": track, "other": other["RuleArn"]}


def test_the_replay_targets_the_track_rule_alone_and_is_followed_to_its_end(bus: dict[str, str]) -> None:
    events = boto3.client("events", region_name="us-east-1")
    lines: list[str] = []
    start, end = NOW - timedelta(days=7), NOW
    assert backfill(events, "ci-runners-archive", bus["track"], start, end, out=lines.append, sleep=lambda _: None)
    [replay] = events.list_replays()["Replays"]
    described = events.describe_replay(ReplayName=replay["ReplayName"])
    assert described["Destination"] == {"Arn": bus["bus"], "FilterArns": [bus["track"]]}
    assert (described["EventStartTime"], described["EventEndTime"]) == (start, end)
    assert described["State"] == "COMPLETED" and lines[-1].strip().startswith("COMPLETED")


def test_a_rule_on_another_bus_or_a_missing_archive_is_refused_before_anything_starts(bus: dict[str, str]) -> None:
    events = boto3.client("events", region_name="us-east-1")
    foreign = bus["track"].replace("rule/ci-runners/", "rule/other-bus/")
    with pytest.raises(BackfillError, match="expected a rule on the archive's bus"):
        backfill(events, "ci-runners-archive", foreign, NOW - timedelta(days=1), NOW, out=lambda _: None)
    with pytest.raises(BackfillError, match="--archive nope"):
        backfill(events, "nope", bus["track"], NOW - timedelta(days=1), NOW, out=lambda _: None)
    assert events.list_replays()["Replays"] == []


@pytest.mark.parametrize(
    ("since", "until", "message"),
    [
        ("7d", "2026-11-24T00:00:00+00:00", "in the future"),
        ("2026-11-23T08:00:00+00:00", "2026-11-23T07:00:00+00:00", "is not before"),
        ("2026-11-23T08:00:00", None, "with its zone"),
        ("last week", None, "expected an ISO-8601 time or a duration"),
    ],
)
def test_a_bad_window_names_the_flag(since: str, until: str | None, message: str) -> None:
    with pytest.raises(BackfillError, match=message):
        replay_window(since, until, NOW)


def test_the_command_line_says_what_was_wrong_in_one_line(
    bus: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["track", "backfill", "--archive", "nope", "--rule-arn", bus["track"], "--region", "us-east-1"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("queuewatch track backfill: --archive nope")
