"""A job source gone quiet for longer than its own normal gaps pages the monitor within its `for`, and status
says so: the track stage's heartbeat (written at most once a minute per container), the collector's one read
of it a tick, and the evaluator, in moto."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
from support import T0, StackInMoto

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.jobs_table.heartbeats import read_beats
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.rules import HEALTH_RULE
from queuewatch.track.heartbeat import Heartbeat
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.moto_tables import create_jobs_table

JOBS = "jobs"
CONFIG = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra}}
runner_types:
  - {name: arc-lane, queue: none, labels: [arc-lane]}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}}
monitor: {for: 5m, job_source_quiet_after: 15m}
"""


def at(minute: float) -> datetime:
    return T0 + timedelta(minutes=minute)


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(client, JOBS)
    return client


def test_the_heartbeat_keeps_the_latest_event_and_each_days_longest_gap(dynamodb: Any) -> None:
    heartbeat = Heartbeat()
    for minute in (0, 0.5, 3, 33, 34):  # the event at 0.5 is within a minute of the last write: not written
        assert heartbeat.event_from("webhook", dynamodb, JOBS, at(minute)) is None
    Heartbeat().event_from("webhook", dynamodb, JOBS, at(20))  # another container, with an older event: no step back
    [beat] = read_beats(dynamodb, JOBS, at(35), floor=3600)  # within the floor: a normal gap
    assert (beat.source, beat.last_event_at, beat.longest_gap_seconds) == ("webhook", at(34), 30 * 60)


def test_a_source_quiet_past_its_normal_pages_the_monitor_within_its_for_and_status_names_it(dynamodb: Any) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    stack = StackInMoto.create()
    inbox = stack.subscribe_queue("inbox")
    heartbeat = Heartbeat()
    for minute in range(0, 60, 2):  # an hour of events every 2 minutes: its longest gap is 2m
        heartbeat.event_from("bus", dynamodb, JOBS, at(minute - 60))
    quiet_since = at(-2)
    pages: dict[int, dict[str, Any]] = {}
    sqs = boto3.client("sqs", region_name="us-east-1")
    for minute in range(0, 25):
        snap = collect(config, AwsClients(), now=at(minute), account_id="123456789012", snapshot_id=f"s{minute}",
                       jobs_table=JOBS)  # fmt: skip
        stack.evaluate(snap, config)
        for message in sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages", []):
            envelope = json.loads(message["Body"])
            pages[minute] = json.loads(envelope["Message"]) | {"subject": envelope["Subject"]}
    # quiet past 15m (the floor: longer than its 2m gaps) at minute 14, then the monitor's 5m `for`
    assert min(pages) == 19 == round((quiet_since + timedelta(minutes=21) - T0).total_seconds() / 60)
    page = pages[19]
    assert page["rule"] == HEALTH_RULE and page["subject"].startswith("ALARM: P3 a job source went quiet")
    [row] = page["runner_types"]
    assert (row["runner_type"], row["breached"]) == ("source:bus", ["source_quiet"])
    assert row["missing"]["events"].startswith("no bus job event for 21m, longer than its longest gap in 7 days (2m)")
    text = show_status(dynamodb, "state", at(20), as_json=False)
    assert "job events from the autoscaler's bus: firing since" in text
    assert "events: no bus job event for" in text


def test_a_source_whose_normal_gaps_are_long_is_not_quiet_within_them(dynamodb: Any) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    heartbeat = Heartbeat()
    # 5h gaps on two days (the 20th and the 21st): a quiet that recurs is the source's rhythm, not an outage
    for minute in (-2100, -1800, -1500, -1200, -900, -600, -300, -1):
        heartbeat.event_from("webhook", dynamodb, JOBS, at(minute))
    stack = StackInMoto.create()
    for minute in range(0, 240, 30):
        snap = collect(config, AwsClients(), now=at(minute), account_id="123456789012", snapshot_id=f"s{minute}",
                       jobs_table=JOBS)  # fmt: skip
        result = stack.evaluate(snap, config)
        assert not [i for i in result.firing + result.pending if i.runner_type.startswith("source:")], minute


def test_an_outage_does_not_become_the_sources_normal(dynamodb: Any) -> None:
    """Webhook events every 10 minutes for days. An 8h outage pages source:webhook after 21 minutes (past the 15m
    floor, then the 5m `for`); two days later a 6h outage pages too: the 8h gap was an outage, not the normal."""
    config = parse_config(CONFIG, source="t.yaml")
    start = T0 - timedelta(days=4)
    first, second = start + timedelta(days=1, hours=2), start + timedelta(days=3, hours=2)
    heartbeat = Heartbeat()
    beat_every_10_minutes(heartbeat, dynamodb, start, first)
    assert first_page_minute(config, dynamodb, first, "first") == 21
    beat_every_10_minutes(heartbeat, dynamodb, first + timedelta(hours=8), second)
    [beat] = read_beats(dynamodb, JOBS, second, floor=15 * 60)
    assert (beat.longest_gap_seconds, beat.outage_gap_seconds) == (10 * 60, 8 * 3600)
    assert first_page_minute(config, dynamodb, second, "second") == 21
    text = show_status(dynamodb, "state-second", second + timedelta(minutes=22), as_json=False)
    assert "its 8h gap in that time was an outage, not its normal" in text, text


def beat_every_10_minutes(heartbeat: Heartbeat, dynamodb: Any, since: datetime, until: datetime) -> None:
    moment = since
    while moment <= until:
        assert heartbeat.event_from("webhook", dynamodb, JOBS, moment) is None
        moment += timedelta(minutes=10)


def first_page_minute(config: Any, dynamodb: Any, quiet_since: datetime, name: str) -> int | None:
    """The minute of the quiet at which the monitor pages source:webhook, ticking each minute from 14 to 23."""
    stack = StackInMoto.create(table=f"state-{name}")
    inbox = stack.subscribe_queue(f"inbox-{name}")
    sqs = boto3.client("sqs", region_name="us-east-1")
    for minute in range(14, 24):
        now = quiet_since + timedelta(minutes=minute)
        snap = collect(config, AwsClients(), now=now, account_id="123456789012", snapshot_id=f"{name}{minute}",
                       jobs_table=JOBS)  # fmt: skip
        stack.evaluate(snap, config)
        for message in sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages", []):
            [row] = json.loads(json.loads(message["Body"])["Message"])["runner_types"]
            assert row["runner_type"] == "source:webhook"
            return minute
    return None
