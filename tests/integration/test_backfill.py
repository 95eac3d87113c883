"""`queuewatch track backfill` against moto's EventBridge: the archive replayed into the track rule alone."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from support import StackInMoto

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName
from queuewatch_cli.commands.track.backfill import BackfillError, backfill, replay_window
from queuewatch_cli.devkit.handlers import FakeContext, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_jobs_table
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


# Defect: a backfill paged about the past. Its replayed `queued` event of a job that ran hours ago went into
# the queued index until the replayed `in_progress` came, and a tick in between paged "3 queued, oldest 5h59m";
# each replayed figure was emitted as if it happened now.

JOBS = "jobs"
TRACKED = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, for: 0s, priority: P2}
"""


@pytest.fixture
def tracking(aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    path = tmp_path / "queuewatch.yaml"
    path.write_text(TRACKED)
    # JOB_METRICS on: the per-runner-type job metrics are an option; on here, to check none is emitted for the past.
    settings = {"QUEUEWATCH_CONFIG": str(path), "JOBS_TABLE": JOBS, "STACK_NAME": "test", "JOB_METRICS": "on"}
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="gh-ci-linux-2xlarge-queued-builds")
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS)
    return load_handler_module("track")


@pytest.fixture
def stack(tracking: Any) -> StackInMoto:
    return StackInMoto.create()


def bus_event(action: str, job_id: int, created: datetime, started: datetime | None, replay: bool) -> dict[str, Any]:
    """The job's event as the bus carries it, sent when it happened; from an archive replay if `replay`."""
    event = load_event("track_in_progress.json" if action == "in_progress" else "track_queued.json")
    job = event["detail"]["workflow_job"]
    job.update(id=job_id, created_at=created.isoformat(), started_at=started.isoformat() if started else None)
    event["time"] = (started or created).isoformat()
    if replay:
        event["replay-name"] = "queuewatch-backfill-0123456789ab"
    return event


def tick(stack: StackInMoto, now: datetime) -> tuple[float | None, list[str]]:
    """The collector and the evaluator on the jobs table at `now`: the queue size judged, and what paged."""
    config = parse_config(TRACKED, source="t.yaml")
    snap = collect(
        config, AwsClients(), now=now, account_id="123456789012", snapshot_id=f"s{now:%H%M}", jobs_table=JOBS
    )
    result = stack.evaluate(snap, config, clock=lambda: now)
    [observed] = snap.runner_types
    return observed.value(SignalName.QUEUE_SIZE), [str(key) for key in result.firing]


def test_replayed_events_of_jobs_that_ran_hours_ago_fill_the_history_and_page_nothing(
    tracking: Any, stack: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)  # the handler reads the wall clock
    created = now - timedelta(hours=6)
    for job_id in (1, 2, 3):
        result = tracking.lambda_handler(bus_event("queued", job_id, created, None, True), FakeContext("track"))
        assert result["outcome"] == "applied"
    assert tick(stack, now) == (0, [])  # nothing of hours ago waits now
    for job_id in (1, 2, 3):
        started = created + timedelta(minutes=1)
        tracking.lambda_handler(bus_event("in_progress", job_id, created, started, True), FakeContext("track"))
    assert tick(stack, now + timedelta(minutes=1)) == (0, [])
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    item = dynamodb.get_item(TableName=JOBS, Key={"pk": {"S": "job#2"}})["Item"]
    assert (
        item["status"]["S"] == "in_progress" and item["started_at"]["S"] == (created + timedelta(minutes=1)).isoformat()
    )
    assert '"_aws"' not in capsys.readouterr().out  # no figure of the past emitted as if it happened now


def test_a_replayed_event_of_the_last_minutes_counts_as_the_live_one_would(
    tracking: Any, stack: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job queued just before tracking was on, and still waiting: its replayed queued event is watched."""
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    event = bus_event("queued", 7, now - timedelta(minutes=5), None, True)
    assert tracking.lambda_handler(event, FakeContext("track")).get("history") is False
    size, firing = tick(stack, now)
    assert size == 1 and firing == ["jobs-queueing#linux.2xlarge"]
    assert '"JobsQueued"' in capsys.readouterr().out


def test_a_live_event_however_late_is_applied_as_live(tracking: Any, stack: StackInMoto) -> None:
    """Without replay-name it is the bus's own delivery (Lambda's retries can delay one for hours)."""
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    event = bus_event("queued", 8, now - timedelta(hours=2), None, False)
    assert tracking.lambda_handler(event, FakeContext("track")).get("history") is False
    assert tick(stack, now)[0] == 1
