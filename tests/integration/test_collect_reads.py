"""With tracking on and the jobs judged, a warm collector reads the autoscaler's queues only where they can
matter (collect/depth_reads.py), and the pages are the same as when it reads every queue: the firing page
with its triage (no scale-up request), the steady ticks, and the resolve page with the requests figure."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import boto3
from support import T0, StackInMoto

from queuewatch.adapters.clients import AwsClients
from queuewatch.adapters.job_store import create_jobs_table
from queuewatch.collect import CollectorMemory, collect
from queuewatch.collect.depth_reads import in_rotation
from queuewatch.config.load import parse_config
from queuewatch.signals import SignalName
from queuewatch.snapshot import Snapshot
from queuewatch_cli.seed import put_queue_ages, put_queued_jobs

JOBS = "jobs"
FLEET = [f"linux-{n:02d}" for n in range(30)]
INCIDENT = FLEET[7]
CONFIG = (
    "version: 1\ndefaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 2m}}\nrunner_types:\n"
    + "".join(f"  - {{name: {name}, queue: {{name: q-{name}}}}}\n" for name in FLEET)
    + "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}\n"
)


def at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


class Pipeline:
    """A collector (with a container's memory, or reading every queue) and its own evaluator and inbox."""

    def __init__(self, name: str, memory: CollectorMemory | None) -> None:
        self.calls: Counter[str] = Counter()
        session = boto3.Session()
        session.events.register("before-call.sqs", self._count)
        self.clients = AwsClients(session)
        self.memory = memory
        self.stack = StackInMoto.create(table=f"state-{name}", name=name)
        self.inbox = self.stack.subscribe_queue(f"inbox-{name}")
        self.config = parse_config(CONFIG, source="t.yaml")

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1

    def tick(self, minute: int) -> tuple[Snapshot, list[dict[str, Any]]]:
        self.calls.clear()
        snap = collect(self.config, self.clients, now=at(minute), account_id="123456789012",
                       snapshot_id=f"s{minute}", jobs_table=JOBS, memory=self.memory)  # fmt: skip
        self.stack.evaluate(snap, self.config)
        sqs = boto3.client("sqs", region_name="us-east-1")
        pages = []
        while messages := sqs.receive_message(QueueUrl=self.inbox, MaxNumberOfMessages=10).get("Messages", []):
            for message in messages:
                pages.append(json.loads(json.loads(message["Body"])["Message"]))
                sqs.delete_message(QueueUrl=self.inbox, ReceiptHandle=message["ReceiptHandle"])
        return snap, pages


def test_reading_less_pages_the_same(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    for name in FLEET:
        sqs.create_queue(QueueName=f"q-{name}")  # the scale-up Lambda took every request
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {f"q-{INCIDENT}": 0}, T0)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    jobs = put_queued_jobs(dynamodb, JOBS, INCIDENT, [T0 - timedelta(minutes=30)] * 3, now=T0)
    lean, full = Pipeline("lean", CollectorMemory()), Pipeline("full", None)

    def both(minute: int) -> list[dict[str, Any]]:
        (snap, pages), (full_snap, full_pages) = lean.tick(minute), full.tick(minute)
        assert full.calls["GetQueueAttributes"] == len(FLEET)
        strip = ("dedup_key", "notification_id", "group", "silence", "view_url", "source")  # name the stack
        assert [{k: v for k, v in p.items() if k not in strip} for p in pages] == [
            {k: v for k, v in p.items() if k not in strip} for p in full_pages
        ], minute
        if minute <= 2:  # jobs wait: the same figures, the requests beside the jobs
            incident = {rt.name: rt for rt in snap.runner_types}[INCIDENT]
            assert incident.signals == {rt.name: rt for rt in full_snap.runner_types}[INCIDENT].signals, minute
        return pages

    [firing] = both(0)  # a new container reads every queue
    assert lean.calls["GetQueueAttributes"] == len(FLEET)
    assert firing["runner_types"][0]["triage"]["findings"][0]["cause"] == "no_scale_up_request"
    for minute in (1, 2):
        assert both(minute) == []
        turn = {name for name in FLEET if in_rotation(name, at(minute))}
        assert lean.calls["GetQueueAttributes"] == len(turn | {INCIDENT}) < len(FLEET) / 3
    for job in jobs:  # a runner took each: no longer queued
        dynamodb.delete_item(TableName=JOBS, Key={"pk": {"S": f"job#{job.job_id}"}})
    pages: list[dict[str, Any]] = []
    for minute in (3, 4, 5, 6):
        pages += both(minute)  # the jobs are gone; the alert keeps firing for 2 minutes, then resolves
    [resolved] = pages
    assert resolved["status"] == "resolved"
    [figures] = resolved["runner_types"]
    assert figures["signals"][SignalName.SCALE_UP_REQUESTS] == 0  # the queue still read while it could resolve
    snap, _ = lean.tick(9)
    quiet = {rt.name: rt for rt in snap.runner_types}[INCIDENT]
    if not in_rotation(INCIDENT, at(9)):
        assert SignalName.SCALE_UP_REQUESTS not in quiet.signals  # long resolved, and not its turn: not read
