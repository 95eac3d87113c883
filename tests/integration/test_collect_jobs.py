"""The collector with tracking on: the jobs GitHub holds queued, read in one paged Query whatever the fleet,
judged by the rules, and the page that names the dropped scale-up requests first."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from typing import Any

import boto3
import pytest
from faults import inject
from support import T0, StackInMoto, arriving_now

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.collect.history import history_span
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import history_buckets
from queuewatch.model.rules import judge
from queuewatch.model.signals import SignalName
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import put_queue_ages, put_queued_jobs

JOBS = "jobs"
INCIDENT = "gh-ci-linux-2xlarge-queued-builds"
CONFIG = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
"""


def minutes_before(n: float, count: int = 1) -> list[Any]:
    return [T0 - timedelta(minutes=n) + timedelta(seconds=i) for i in range(count)]


@pytest.fixture
def fleet(aws: None) -> AwsClients:
    sqs = boto3.client("sqs", region_name="us-east-1")
    for name in (INCIDENT, "gh-ci-linux-4xlarge-queued-builds"):
        sqs.create_queue(QueueName=name)  # empty: the scale-up Lambda took every request
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {INCIDENT: 0}, T0)
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS)
    return AwsClients()


def test_jobs_queued_with_an_empty_queue_page_with_their_own_queue_time(fleet: AwsClients) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_queued_jobs(dynamodb, JOBS, "linux.2xlarge", minutes_before(114, 14), now=T0)
    config = parse_config(CONFIG, source="t.yaml")
    snap = collect(config, fleet, now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=JOBS)
    incident = {rt.name: rt for rt in snap.runner_types}["linux.2xlarge"]
    assert incident.value(SignalName.QUEUE_SIZE) == 14
    assert incident.value(SignalName.QUEUE_TIME) == 114 * 60
    assert incident.value(SignalName.SCALE_UP_REQUESTS) == 0  # what SQS holds, kept beside the jobs
    assert [job.created_at for job in incident.oldest_jobs] == minutes_before(114, 5)

    moto = StackInMoto.create(name="prod")
    inbox = moto.subscribe_queue("inbox")
    result = moto.evaluate(snap, config, clock=arriving_now(snap))
    assert [str(key) for key in result.firing] == ["jobs-queueing#linux.2xlarge"]
    [message] = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox)["Messages"]
    alert = json.loads(json.loads(message["Body"])["Message"])
    [runner_type] = alert["runner_types"]
    assert runner_type["triage"]["findings"][0]["cause"] == "no_scale_up_request"  # named first
    detail = runner_type["triage"]["findings"][0]["detail"]
    assert "GitHub holds 14 jobs queued that no runner took, the oldest 1h54m old" in detail
    assert "the scale-up requests of 14 jobs were dropped" in detail
    assert len(runner_type["oldest_jobs"]) == 5
    assert runner_type["oldest_jobs"][0]["url"].startswith("https://github.com/pytorch/pytorch/actions/runs/")
    assert alert["likely_cause"].startswith("linux.2xlarge: Scale-up requests dropped, their jobs still queued")


def test_the_jobs_and_their_history_cost_the_same_queries_whatever_the_fleet(aws: None) -> None:
    sizes = {}
    for size in (10, 1000):
        calls: Counter[str] = Counter()

        def count(event_name: str, calls: Counter[str] = calls, **_: Any) -> None:
            calls[event_name.rsplit(".", 1)[-1]] += 1

        session = boto3.Session()
        session.events.register_first("before-call.dynamodb", count)
        names = [f"rt{n}" for n in range(size)]
        text = (
            "version: 1\nrunner_types:\n"
            + "".join(f"  - {{name: {n}, queue: {{name: q-{n}}}}}\n" for n in names)
            + "rules:\n  - {name: r, team: ci-infra, thresholds: {queue_size: 0}}\n"
        )
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        table = f"jobs-{size}"
        create_jobs_table(dynamodb, table)
        for n in names[:10]:
            put_queued_jobs(dynamodb, table, n, minutes_before(3, 2), now=T0, first_id=1000 * names.index(n) + 1)
        collect(parse_config(text, source="t.yaml"), AwsClients(session), now=T0, account_id="1" * 12,
                snapshot_id="s", jobs_table=table)  # fmt: skip
        sizes[size] = calls["Query"]
    # One Query of the jobs queued now; for the 10 runner types that breach, the triage's evidence from the
    # history: one per day and shard those 10 hash to, over the window and baseline (the queued jobs are
    # not read again).
    start, _ = history_span(T0, 900, 10800)
    evidence = len(history_buckets(start, T0, {f"rt{n}" for n in range(10)}))
    assert sizes == {10: 1 + evidence, 1000: 1 + evidence}


def test_lost_jobs_and_jobs_no_runner_type_serves_are_counted_not_judged(fleet: AwsClients) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_queued_jobs(dynamodb, JOBS, "linux.2xlarge", minutes_before(25 * 60, 2), now=T0)  # past GitHub's 24h
    put_queued_jobs(dynamodb, JOBS, None, minutes_before(40, 3), now=T0, first_id=100, labels=("gpu", "h100"))
    put_queued_jobs(dynamodb, JOBS, "linux.8xlarge", minutes_before(10), now=T0, first_id=200)  # not watched here
    config = parse_config(CONFIG, source="t.yaml")
    snap = collect(config, fleet, now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=JOBS)
    assert snap.expired_jobs == 2
    assert {u.label_set: u.count for u in snap.unmatched_jobs} == {"gpu,h100": 3, "linux.8xlarge": 1}
    assert all(rt.value(SignalName.QUEUE_SIZE) == 0 for rt in snap.runner_types)


def test_queue_source_sqs_judges_the_requests_and_keeps_the_jobs_as_evidence(fleet: AwsClients) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_queued_jobs(dynamodb, JOBS, "linux.2xlarge", minutes_before(114, 14), now=T0)
    config = parse_config(CONFIG.replace("region: us-east-1,", "region: us-east-1, queue_source: sqs,"), source="t")
    snap = collect(config, fleet, now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=JOBS)
    incident = {rt.name: rt for rt in snap.runner_types}["linux.2xlarge"]
    assert incident.value(SignalName.QUEUE_SIZE) == 0 and incident.value(SignalName.JOBS_QUEUED) == 14
    assert incident.value(SignalName.OLDEST_JOB_AGE) == 114 * 60


def test_an_unreadable_jobs_table_degrades_what_the_jobs_decide(fleet: AwsClients) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    snap = collect(config, fleet, now=T0, account_id="123456789012", snapshot_id="s1", jobs_table="missing-table")
    [rule] = config.resolved_rules
    for rt in snap.runner_types:
        assert "jobs table: ResourceNotFoundException" in rt.degraded[SignalName.JOBS_QUEUED]
        # the queue, read beside, is empty: a lower bound, never an all-clear while the jobs are blind
        assert rt.value(SignalName.SCALE_UP_REQUESTS) == 0
        verdict = judge(rule, rt)
        assert verdict.breached is None
        assert verdict.missing[SignalName.QUEUE_SIZE].startswith("jobs: jobs table: ResourceNotFoundException")


def test_a_keys_tracked_jobs_belong_to_its_plain_identity_and_each_copy_is_judged_on_its_own_queue(
    fleet: AwsClients,
) -> None:
    """Jobs are routed by labels to a key, never to a region: the key's plain identity (us-east-1 here) gets
    their figures; its copy in eu-west-1 is judged on what its own queue holds."""
    west = boto3.client("sqs", region_name="eu-west-1")
    url = west.create_queue(QueueName=INCIDENT)["QueueUrl"]
    for i in range(3):
        west.send_message(QueueUrl=url, MessageBody=f'{{"id": {i}}}')
    put_queue_ages(boto3.client("cloudwatch", region_name="eu-west-1"), {INCIDENT: 1200}, T0)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_queued_jobs(dynamodb, JOBS, "linux-2xlarge", minutes_before(30, 7), now=T0)
    text = """
version: 1
defaults: {region: us-east-1}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", region: us-east-1}
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", region: eu-west-1}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}
"""
    config = parse_config(text, source="t.yaml")
    snap = collect(config, fleet, now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=JOBS)
    found = {rt.name: rt for rt in snap.runner_types}
    plain, copy = found["linux-2xlarge"], found["linux-2xlarge@eu-west-1"]
    assert (plain.value(SignalName.QUEUE_SIZE), plain.value(SignalName.QUEUE_TIME)) == (7, 30 * 60)
    assert len(plain.oldest_jobs) == 5
    assert (copy.value(SignalName.QUEUE_SIZE), copy.value(SignalName.QUEUE_TIME)) == (3, 1200)
    assert copy.oldest_jobs == [] and SignalName.SCALE_UP_REQUESTS not in copy.signals
    assert snap.unmatched_jobs == []


def test_a_failed_history_read_degrades_the_evidence_it_would_give_and_nothing_else(fleet: AwsClients) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_queued_jobs(dynamodb, JOBS, "linux.2xlarge", minutes_before(114, 14), now=T0)
    history = inject(
        fleet.dynamodb(), "Query", "access-denied", when=lambda p: ":bucket" in p["ExpressionAttributeValues"]
    )
    snap = collect(parse_config(CONFIG, source="t.yaml"), fleet, now=T0, account_id="1" * 12, snapshot_id="s",
                   jobs_table=JOBS)  # fmt: skip
    incident = {rt.name: rt for rt in snap.runner_types}["linux.2xlarge"]
    assert history.faulted >= 1
    assert incident.value(SignalName.QUEUE_SIZE) == 14 and incident.value(SignalName.QUEUE_TIME) == 114 * 60
    for signal in (SignalName.JOB_ARRIVALS, SignalName.JOB_DURATION):
        error = incident.signals[signal].error
        assert error is not None and error.startswith("jobs table: ") and "AccessDenied" in error
