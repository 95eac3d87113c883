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

from queuewatch.adapters.clients import AwsClients
from queuewatch.adapters.heartbeats import read_beats
from queuewatch.adapters.job_store import create_jobs_table
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.rules import HEALTH_RULE
from queuewatch.track.heartbeat import Heartbeat
from queuewatch_cli.status import show_status

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
    [beat] = read_beats(dynamodb, JOBS, at(35))
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
    for minute in (-600, -300, -1):  # a quiet night: 5h gaps are its normal
        heartbeat.event_from("webhook", dynamodb, JOBS, at(minute))
    stack = StackInMoto.create()
    for minute in range(0, 240, 30):
        snap = collect(config, AwsClients(), now=at(minute), account_id="123456789012", snapshot_id=f"s{minute}",
                       jobs_table=JOBS)  # fmt: skip
        result = stack.evaluate(snap, config)
        assert not [i for i in result.firing + result.pending if i.runner_type.startswith("source:")], minute
