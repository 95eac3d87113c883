"""The jobs table as a history, on moto: when a job was queued for a runner (an approval wait is not queue
time), a write whose answer was lost, and reading the jobs by runner type and time at a fixed cost."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from faults import inject
from job_records import job_record

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.jobs_table.jobs import put_job, queued_jobs, read_history
from queuewatch.collect import collect
from queuewatch.collect.history import history_readings
from queuewatch.config.load import parse_config
from queuewatch.model.job_sources import SOURCE_PREFIX
from queuewatch.model.jobs import HISTORY_SHARDS, PARTITION_KEY, PROGRESS, JobRecord, JobStatus, shard_of
from queuewatch.model.signals import SignalName
from queuewatch_cli.devkit.handlers import REPO_ROOT, FakeContext, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_jobs_table

TABLE = "jobs"
CREATED = datetime(2026, 11, 21, 16, 6, tzinfo=UTC)  # events/track_*.json's job
CONFIG = """
version: 1
defaults: {region: us-east-1}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
"""


@pytest.fixture
def tracker(aws: None, monkeypatch: pytest.MonkeyPatch) -> Any:
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), TABLE)
    for key, value in {
        "QUEUEWATCH_CONFIG": str(REPO_ROOT / "config" / "queuewatch.yaml"),
        "JOBS_TABLE": TABLE,
        "STACK_NAME": "test",
        "JOB_METRICS": "on",
    }.items():
        monkeypatch.setenv(key, value)
    return load_handler_module("track")


def bus_event(action: str, at: datetime, **job: Any) -> dict[str, Any]:
    """events/track_<action>.json (waiting: the queued one, as GitHub sends it before approval), put on the
    bus at `at`."""
    event = copy.deepcopy(load_event(f"track_{'queued' if action == 'waiting' else action}.json"))
    event["time"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    event["detail"]["action"] = action
    event["detail"]["workflow_job"].update(job)
    return event


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def emf(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{") and "_aws" in line]


def test_an_approval_wait_is_not_queue_time(tracker: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # A deployment job waits 30 minutes for approval, is approved, and a runner takes it 50 s later.
    approved, started = CREATED + timedelta(minutes=30), CREATED + timedelta(minutes=30, seconds=50)
    tracker.lambda_handler(bus_event("waiting", CREATED + timedelta(seconds=1)), FakeContext("track"))
    tracker.lambda_handler(bus_event("queued", approved), FakeContext("track"))

    # The tick in between: 1 queued, waiting 20 s, not 30 minutes, and nothing pages.
    tick = approved + timedelta(seconds=20)
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.create_queue(QueueName="gh-ci-linux-2xlarge-queued-builds")
    config = parse_config(CONFIG, source="t.yaml")
    snap = collect(config, AwsClients(), now=tick, account_id="123456789012", snapshot_id="s", jobs_table=TABLE)
    [runner_type] = snap.runner_types
    assert runner_type.value(SignalName.QUEUE_SIZE) == 1
    assert runner_type.value(SignalName.QUEUE_TIME) == 20
    assert [job.created_at for job in runner_type.oldest_jobs] == [approved]  # "waiting since" the approval

    tracker.lambda_handler(
        bus_event("in_progress", started, status="in_progress", started_at=iso(started), runner_name="i-1"),
        FakeContext("track"),
    )
    waits = [blob["JobQueueTime"] for blob in emf(capsys.readouterr().out) if "JobQueueTime" in blob]
    assert waits == [[50]]  # not 30m50s


def test_an_approved_job_whose_queued_event_was_lost_counts_no_queue_time(tracker: Any) -> None:
    started = CREATED + timedelta(minutes=30)
    tracker.lambda_handler(bus_event("waiting", CREATED), FakeContext("track"))
    result = tracker.lambda_handler(
        bus_event("in_progress", started, status="in_progress", started_at=iso(started), runner_name="i-1"),
        FakeContext("track"),
    )
    assert result["outcome"] == "applied" and result["queue_seconds"] == 0 and result["arrived"]


def test_a_job_first_seen_queued_waits_from_its_creation_whenever_its_event_came(tracker: Any) -> None:
    # Its queued event redriven from the dead-letter queue an hour late: it still waited since it was created.
    tracker.lambda_handler(bus_event("queued", CREATED + timedelta(hours=1)), FakeContext("track"))
    [job] = queued_jobs(boto3.client("dynamodb", region_name="us-east-1"), TABLE)
    assert job.queued_at == CREATED


def job_item(params: Mapping[str, Any]) -> bool:
    """A write of a job's own item, not of its source's heartbeat (`source#<name>`), which the stage also updates."""
    return not str(params["Key"][PARTITION_KEY]["S"]).startswith(SOURCE_PREFIX)


def test_a_write_whose_answer_was_lost_is_counted_once_not_as_a_duplicate(
    tracker: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first attempt of each write reaches DynamoDB and takes effect; its answer is lost (a read timeout), and
    botocore's retry finds the condition failing: the writer's own token says it was applied."""
    dynamodb = tracker.aws.dynamodb()
    fault = inject(dynamodb, "UpdateItem", "read-timeout", applied=True, failing_attempts=1, when=job_item)
    stages = [
        bus_event("queued", CREATED),
        bus_event(
            "in_progress",
            CREATED + timedelta(minutes=2),
            status="in_progress",
            started_at=iso(CREATED + timedelta(minutes=2)),
            runner_name="i-1",
        ),
        bus_event(
            "completed",
            CREATED + timedelta(minutes=12),
            status="completed",
            started_at=iso(CREATED + timedelta(minutes=2)),
            completed_at=iso(CREATED + timedelta(minutes=12)),
            runner_name="i-1",
        ),
    ]
    results = [tracker.lambda_handler(event, FakeContext("track")) for event in stages]
    assert fault.faulted == 3 and fault.attempts == 6  # each write answered lost once, then retried
    assert [r["outcome"] for r in results] == ["applied"] * 3
    blobs = emf(capsys.readouterr().out)
    assert [b["JobsQueued"] for b in blobs if "JobsQueued" in b] == [[1]]
    assert [b["JobQueueTime"] for b in blobs if "JobQueueTime" in b] == [[120]]
    assert [b["JobRunTime"] for b in blobs if "JobRunTime" in b] == [[600]]


def test_another_writers_item_is_still_a_duplicate(tracker: Any) -> None:
    tracker.lambda_handler(bus_event("queued", CREATED), FakeContext("track"))
    again = tracker.lambda_handler(bus_event("queued", CREATED), FakeContext("track"))
    assert again["outcome"] == "duplicate" and not again["arrived"]


def record(job_id: int, runner_type: str | None, queued_at: datetime, status: JobStatus = "completed") -> JobRecord:
    started = queued_at + timedelta(seconds=30) if status != "queued" else None
    return job_record(
        job_id,
        runner_type,
        queued_at,
        status=status,
        started_at=started,
        completed_at=queued_at + timedelta(minutes=5) if status == "completed" else None,
        labels=(runner_type or "gpu",),
        updated_at=queued_at,
    )


@pytest.fixture
def history(aws: None) -> Any:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, TABLE)
    return dynamodb


def test_read_history_gives_every_job_queued_in_the_span_once_in_its_latest_state(history: Any) -> None:
    midnight = datetime(2026, 11, 22, tzinfo=UTC)
    jobs = [
        record(1, "linux.2xlarge", midnight - timedelta(hours=2)),  # the day before
        record(2, "linux.4xlarge", midnight - timedelta(minutes=1), "in_progress"),
        record(3, "linux.2xlarge", midnight + timedelta(hours=1), "queued"),  # queued now
        record(4, None, midnight + timedelta(hours=2)),  # no runner type serves it
        record(5, "linux.2xlarge", midnight + timedelta(hours=3)),  # at the span's end: outside
        record(6, "linux.2xlarge", midnight - timedelta(hours=5)),  # before the span
    ]
    for job in jobs:
        assert put_job(history, TABLE, job, "w") == -1
    start, end = midnight - timedelta(hours=3), midnight + timedelta(hours=3)
    found = sorted(read_history(history, TABLE, start, end), key=lambda j: j.job_id)
    assert [(j.job_id, j.status) for j in found] == [
        (1, "completed"),
        (2, "in_progress"),
        (3, "queued"),
        (4, "completed"),
    ]
    assert found[0] == jobs[0]
    two = read_history(history, TABLE, start, end, runner_types=["linux.2xlarge"])
    assert sorted(j.job_id for j in two) == [1, 3]
    unmatched = read_history(history, TABLE, start, end, runner_types=[None])
    assert [j.job_id for j in unmatched] == [4]


def test_a_job_that_starts_between_the_reads_is_given_once(history: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    put_job(history, TABLE, record(7, "linux.2xlarge", now - timedelta(minutes=3), "queued"), "w")
    real = history.get_paginator

    def paginator(name: str) -> Any:
        pages = real(name)
        original = pages.paginate

        def paginate(**kwargs: Any) -> Any:
            yield from original(**kwargs)
            if kwargs["ExpressionAttributeValues"][":bucket"]["S"] == "queued":  # it starts right after
                started = record(7, "linux.2xlarge", now - timedelta(minutes=3), "in_progress")
                assert put_job(history, TABLE, started, "w2") == PROGRESS["queued"]

        pages.paginate = paginate
        return pages

    monkeypatch.setattr(history, "get_paginator", paginator)
    found = list(read_history(history, TABLE, now - timedelta(hours=1), now))
    assert [(j.job_id, j.status) for j in found] == [(7, "in_progress")]


def test_reading_the_history_costs_a_fixed_number_of_calls_whatever_the_fleet(history: Any) -> None:
    now = datetime(2026, 11, 22, 12, tzinfo=UTC)
    names = [f"rt{n}" for n in range(200)]
    for index, name in enumerate(names):
        put_job(history, TABLE, record(index + 1, name, now - timedelta(minutes=1 + index % 180)), "w")
    calls: Counter[str] = Counter()
    history.meta.events.register("before-call.dynamodb.Query", lambda **_: calls.update(["Query"]))
    everything = list(read_history(history, TABLE, now - timedelta(hours=3, minutes=15), now))
    assert len(everything) == 200 and calls["Query"] == 1 + HISTORY_SHARDS  # one day: every shard, and queued
    calls.clear()
    some = list(read_history(history, TABLE, now - timedelta(hours=3, minutes=15), now, runner_types=names[:3]))
    assert sorted(str(j.runner_type) for j in some) == sorted(names[:3])
    assert calls["Query"] == 1 + len({shard_of(name) for name in names[:3]})


def test_a_discovered_candidates_jobs_are_read_under_the_watched_queues_spelling(history: Any) -> None:
    # The track stage keeps a discovered runner type in lower case; the collector watches "Linux-X64".
    midnight = datetime(2026, 11, 22, tzinfo=UTC)
    jobs = [record(i, "linux-x64", midnight + timedelta(minutes=i)) for i in range(1, 4)]
    jobs.append(record(9, "linux-arm64", midnight + timedelta(minutes=9)))  # another runner type
    for job in jobs:
        put_job(history, TABLE, job, "w")
    end = midnight + timedelta(hours=1)
    found = read_history(history, TABLE, midnight, end, runner_types=["Linux-X64"])
    assert sorted(j.job_id for j in found) == [1, 2, 3]
    jobs_read = list(read_history(history, TABLE, midnight, end, runner_types=["Linux-X64"]))
    wanted = {"Linux-X64": {SignalName.JOB_ARRIVALS}}
    readings = history_readings(jobs_read, wanted, end, window=3600, baseline=3600)
    assert readings["Linux-X64"][SignalName.JOB_ARRIVALS].value == 3


def test_a_seeded_history_stores_each_job_as_its_first_tracked_write_does(aws: None) -> None:
    """seed_jobs, for tests and the benchmark's histories, writes in bulk what put_job writes job by job: the
    same items, every optional attribute present or absent, beyond one BatchWriteItem call."""
    from queuewatch_cli.devkit.seed import seed_jobs

    client = boto3.client("dynamodb", region_name="us-east-1")
    for table in ("put", "seeded"):
        create_jobs_table(client, table)
    at = CREATED
    shapes = [
        job_record(1, "linux.2xlarge", at),
        job_record(2, "linux.2xlarge", at, started_at=at + timedelta(minutes=2)),
        job_record(3, None, at, started_at=at, completed_at=at + timedelta(hours=1), html_url="https://x/3"),
        job_record(4, "linux.2xlarge", None, created_at=at, status="waiting"),
        job_record(5, "gpu.a100", at, completed_at=at + timedelta(minutes=1), status="completed"),  # cancelled
    ]
    records = [r.model_copy(update={"job_id": r.job_id + 10 * n}) for n in range(6) for r in shapes]  # 30
    for record in records:
        put_job(client, "put", record, "seed")
    assert seed_jobs(client, "seeded", records) == len(records)

    def items(table: str) -> dict[str, Any]:
        return {item[PARTITION_KEY]["S"]: item for item in client.scan(TableName=table)["Items"]}

    put, seeded = items("put"), items("seeded")
    assert len(put) == len(records) and seeded == put
