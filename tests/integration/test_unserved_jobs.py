"""Jobs not for this fleet, through the track stage, the collector and the evaluator: with discovery taking
every name (match ["*"]), a GitHub-hosted job is no runner type, a discovered name is confirmed against the
queues watched (without case, as GitHub compares labels), and jobs waiting for labels nothing serves page
the monitor by their labels."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
from support import T0, StackInMoto, arriving_now, minutes, snapshot

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot, UnmatchedJobs
from queuewatch.track import Router, WorkflowJobEvent
from queuewatch.track.stage import TrackResult, track
from queuewatch.track.telemetry import record_job
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.handlers import REPO_ROOT
from queuewatch_cli.devkit.moto_tables import create_jobs_table

JOBS = "jobs"
CONFIG = """
version: 1
defaults: {region: us-east-1, queue_source: jobs, rule: {team: ci-infra}}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", match: ["*"]}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
monitor: {for: 5m, unserved_after: 10m}
"""
ARM = "gh-ci-Linux-Arm64-Large-queued-builds"  # a queue name keeps its case; a label need not


def queued_event(job_id: int, labels: list[str], created: datetime) -> WorkflowJobEvent:
    detail = json.loads((REPO_ROOT / "events" / "track_queued.json").read_text())["detail"]
    detail["workflow_job"] |= {"id": job_id, "labels": labels, "created_at": created.isoformat()}
    return WorkflowJobEvent.model_validate(detail)


@pytest.fixture
def tracked(aws: None) -> tuple[Config, list[TrackResult]]:
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName=ARM)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    config = parse_config(CONFIG, source="t.yaml")
    router = Router(config)
    created = T0 - timedelta(minutes=40)
    jobs = [
        (1, ["self-hosted", "linux-arm64-LARGE"]),  # the discovered queue, asked for in other case
        (2, ["ubuntu-latest"]),  # GitHub-hosted: not this fleet's
        (3, ["windows-2022"]),
        (4, ["self-hosted", "gpu-a100"]),  # nothing serves these
        (5, ["self-hosted", "gpu-a100"]),
        (6, ["self-hosted", "gpu-a100"]),
    ]
    results = [track(queued_event(i, labels, created), router, dynamodb, JOBS, T0) for i, labels in jobs]
    return config, results


def snapshot_at(config: Config, now: datetime) -> Snapshot:
    return collect(
        config, AwsClients(), now=now, account_id="123456789012", snapshot_id=f"s{now:%H%M}", jobs_table=JOBS
    )


def test_only_watched_queues_are_runner_types_and_hosted_jobs_are_no_finding(
    tracked: tuple[Config, list[TrackResult]],
) -> None:
    config, _ = tracked
    snap = snapshot_at(config, T0)
    [arm] = snap.runner_types  # ubuntu-latest and gpu-a100 name no queue: no runner type
    assert arm.name == "Linux-Arm64-Large" and arm.value(SignalName.QUEUE_SIZE) == 1
    assert arm.value(SignalName.QUEUE_TIME) == 40 * 60
    assert [(u.label_set, u.count) for u in snap.unmatched_jobs] == [("gpu-a100,self-hosted", 3)]
    assert snap.github_hosted_jobs == 2


def test_no_per_runner_type_metric_for_a_name_the_collector_has_not_confirmed(
    tracked: tuple[Config, list[TrackResult]], capsys: pytest.CaptureFixture[str]
) -> None:
    _, results = tracked
    # With match ["*"], each job's one specific label is a candidate name: the track stage cannot tell a
    # watched queue from none, so it bills nothing per name; the collector counts what no queue serves.
    assert [r.runner_type for r in results] == ["linux-arm64-large", "ubuntu-latest", "windows-2022", *["gpu-a100"] * 3]
    assert all(r.candidate for r in results)
    for result in results:
        record_job(result, "Queuewatch", stack="test")
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert not [b for b in blobs if "RunnerType" in b or "LabelSet" in b]


def test_jobs_waiting_for_labels_nothing_serves_page_the_monitor(tracked: tuple[Config, list[TrackResult]]) -> None:
    config, _ = tracked
    moto = StackInMoto.create(name="prod")
    inbox = moto.subscribe_queue("inbox")
    pages: list[dict[str, Any]] = []
    for minute in (0, 6):  # pending at 40m of waiting, firing once the monitor's `for` has passed
        snap = snapshot_at(config, T0 + timedelta(minutes=minute))
        moto.evaluate(snap, config, clock=arriving_now(snap))
        messages = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox, MaxNumberOfMessages=10)
        for message in messages.get("Messages", []):
            envelope = json.loads(message["Body"])
            pages.append(json.loads(envelope["Message"]) | {"subject": envelope["Subject"]})
    monitor = [p for p in pages if p["rule"] == "queuewatch-health"]
    assert len(monitor) == 1, [p["title"] for p in pages]
    [page] = monitor
    assert "3 jobs for 46m for labels [gpu-a100, self-hosted], that no runner type serves" in page["summary"]
    assert "ubuntu" not in page["summary"] and "windows" not in page["summary"]
    assert [(r["runner_type"], r["breached"]) for r in page["runner_types"]] == [("jobs:unserved", ["unserved_jobs"])]
    assert page["subject"] == "ALARM: P3 jobs queued that no runner type serves: queuewatch monitor degraded"


def test_unserved_after_null_never_pages(tracked: tuple[Config, list[TrackResult]]) -> None:
    config = parse_config(CONFIG.replace("unserved_after: 10m", "unserved_after: null"), source="t.yaml")
    moto = StackInMoto.create(name="prod")
    for minute in (0, 6, 12):
        snap = snapshot_at(config, T0 + timedelta(minutes=minute))
        result = moto.evaluate(snap, config, clock=arriving_now(snap))
        assert not [key for key in result.firing if key.runner_type == "jobs:unserved"]


def test_without_discovery_a_hosted_job_is_not_counted_unmatched(aws: None, capsys: pytest.CaptureFixture[str]) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    discovery = '  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", match: ["*"]}\n'
    named = "runner_types:\n  - {name: gpu, queue: {name: q}, labels: [gpu]}\n"
    config = parse_config(CONFIG.replace(discovery, "").replace("discovery:\n", named), source="t.yaml")
    router = Router(config)
    for job_id, labels in ((1, ["ubuntu-latest"]), (2, ["self-hosted", "gpu-h100"])):
        record_job(track(queued_event(job_id, labels, T0), router, dynamodb, JOBS, T0), "Queuewatch", stack="test")
    blobs = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert [b["LabelSet"] for b in blobs] == ["gpu-h100,self-hosted"]


def test_status_names_jobs_no_runner_type_serves(aws: None) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    stack = StackInMoto.create()
    waiting = [UnmatchedJobs(label_set="gpu-a100,self-hosted", count=3, oldest_seconds=40 * 60)]
    for minute in (0, 6):
        stack.evaluate(snapshot(minutes(minute)).model_copy(update={"unmatched_jobs": waiting}), config)
    text = show_status(boto3.client("dynamodb", region_name="us-east-1"), "state", minutes(7), as_json=False)
    degraded = text.split("degraded signals (the queuewatch-health rule's instances): ")[1]
    assert degraded == (
        "1\n  tracked jobs queued for labels no runner type serves (the monitor page lists them): "
        "firing since 2026-11-21 18:06 UTC\n"
        "    queued: 3 jobs for 40m for labels [gpu-a100, self-hosted], that no runner type serves"
    )


def test_unserved_jobs_page_only_once_they_have_waited_unserved_after(aws: None) -> None:
    """The wait binds: jobs younger than `unserved_after` (10m) never page, however long the monitor's `for`
    (5m) has run; the monitor turns pending once the oldest has waited 10m, and fires 5m later."""
    config = parse_config(CONFIG, source="t.yaml")
    stack = StackInMoto.create()
    firing_at = []
    for minute in range(0, 20):
        waited = 60.0 + 60 * minute  # first seen 1m after it was queued
        waiting = [UnmatchedJobs(label_set="gpu-a100,self-hosted", count=3, oldest_seconds=waited)]
        snap = snapshot(minutes(minute)).model_copy(update={"unmatched_jobs": waiting})
        result = stack.evaluate(snap, config)
        if [key for key in result.firing if key.runner_type == "jobs:unserved"]:
            firing_at.append(minute)
    # pending at minute 9 (10m waited), firing once the monitor's 5m `for` has passed
    assert firing_at[0] == 14
