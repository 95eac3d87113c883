"""Job tracking at scale: the collector's reads of the jobs table against the fleet's size, and what
tracking costs a month at PyTorch's scale (tens of thousands of jobs a day, bursts of thousands of
events a minute).

Run: .venv/bin/python -m bench.track [--jobs-per-day 50000]. Everything runs against an in-process moto:
the collector's calls are counted per fleet size, and the track handler's CPU per event is measured
over real-shaped events; the month is priced from those figures with bench/cost.py's prices.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import statistics
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest.mock import patch

import boto3
from moto import mock_aws

from bench.cost import TRACK_MEMORY_MB, TRACK_RESULTS, tracking_lines
from bench.lambda_model import AWS_LATENCY_S, VCPU_MB
from bench.motoserver import MotoServer
from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.aws.item_size import item_size
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import HISTORY_DAYS, HISTORY_SHARDS
from queuewatch_cli.devkit.handlers import REPO_ROOT, FakeContext, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import put_finished_job, put_queued_jobs

FLEETS = (10, 100, 1000, 5000)
QUEUED_JOBS = 400  # jobs waiting at the tick, spread over the first runner types
HISTORY_JOBS = 20  # finished jobs per runner type with jobs queued, over the triage's window and baseline


def collector_reads(size: int) -> Counter[str]:
    """The DynamoDB calls one collect tick makes with tracking on, for a fleet of `size` runner types: every
    runner type with jobs queued breaches the rule, so the triage's evidence reads their history too.
    `Query` counts the reads of the jobs queued now, `Query (history)` those of the history."""
    now = datetime.now(UTC).replace(microsecond=0)
    text = (
        "version: 1\nrunner_types:\n"
        + "".join(f"  - {{name: rt{n}, queue: {{name: q-{n}}}}}\n" for n in range(size))
        + "rules:\n  - {name: r, team: ci-infra, thresholds: {queue_size: 0}}\n"
    )
    calls: Counter[str] = Counter()

    def count(event_name: str, params: dict[str, Any], **_: Any) -> None:
        history = ":bucket" in params.get("ExpressionAttributeValues", {})  # a day's bucket of the history
        calls[event_name.rsplit(".", 1)[-1] + (" (history)" if history else "")] += 1

    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_jobs_table(dynamodb, "jobs")
        for index in range(QUEUED_JOBS):
            created = [now - timedelta(minutes=5 + index % 60)]
            put_queued_jobs(dynamodb, "jobs", f"rt{index % min(size, 50)}", created, now=now, first_id=index + 1)
        for index in range(min(size, 50) * HISTORY_JOBS):
            queued = now - timedelta(minutes=10 + index % 180)
            run = timedelta(minutes=5)
            put_finished_job(dynamodb, "jobs", f"rt{index % min(size, 50)}", 100_000 + index, queued, run=run, now=now)
        session = boto3.Session()
        session.events.register_first("provide-client-params.dynamodb", count)
        collect(parse_config(text, source="bench"), AwsClients(session), now=now, account_id="1" * 12,
                snapshot_id="bench", jobs_table="jobs")  # fmt: skip
    return calls


def track_cpu_per_event(jobs: int = 100, jobs_per_day: int = 50_000) -> tuple[float, int]:
    """Median CPU seconds of the track handler per event, and a job item's size in bytes. DynamoDB is a moto
    server on 127.0.0.1 in its own process, so the figure is the handler's and botocore's CPU, as in Lambda,
    not moto's work on the table. The bus stamps the events on a clock that moves forward at `jobs_per_day`
    (three events a job), as production's do: the samples' own stamps jump hours back and forth, which would
    write the source's heartbeat at every event instead of once a minute (track/heartbeat.py)."""
    samples: list[float] = []
    local = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing"}
    with MotoServer() as server, patch.dict(os.environ, {**local, "AWS_ENDPOINT_URL": server.endpoint}):
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_jobs_table(dynamodb, "jobs")
        # The handler's logs and EMF lines would drown the figures: the log level is raised, EMF goes nowhere.
        os.environ.update(
            JOBS_TABLE="jobs", STACK_NAME="bench", RUNNER_TYPE_METRICS="queued", POWERTOOLS_LOG_LEVEL="WARNING"
        )
        os.environ.setdefault("QUEUEWATCH_CONFIG", str(REPO_ROOT / "config" / "queuewatch.yaml"))
        tracker = load_handler_module("track")
        stamp = datetime(2026, 11, 21, 16, tzinfo=UTC)
        between_events = timedelta(days=1) / (3 * jobs_per_day)
        for job_id in range(1, jobs + 1):
            for action in ("queued", "in_progress", "completed"):
                event = copy.deepcopy(load_event(f"track_{action}.json"))
                event["detail"]["workflow_job"]["id"] = job_id
                event["time"] = stamp.isoformat().replace("+00:00", "Z")
                stamp += between_events
                started = time.process_time()
                with contextlib.redirect_stdout(io.StringIO()):
                    tracker.lambda_handler(event, FakeContext("queuewatch-track"))
                samples.append(time.process_time() - started)
        item = dynamodb.get_item(TableName="jobs", Key={"pk": {"S": "job#1"}})["Item"]
    return statistics.median(samples), item_size(item)  # as DynamoDB counts it: what reads and storage bill


def main() -> None:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the stack's region, where the jobs table lives
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs-per-day", type=int, default=50_000)
    parser.add_argument("--runner-types", type=int, default=150, help="runner types with jobs in a month")
    parser.add_argument("--queued", type=int, default=2_000, help="jobs queued at a busy tick")
    parser.add_argument("--fleets", default=",".join(str(n) for n in FLEETS), help="runner types, comma-separated")
    args = parser.parse_args()
    fleets = [int(n) for n in args.fleets.split(",")]

    print(f"the collector's DynamoDB calls a tick, {QUEUED_JOBS} jobs queued (every runner type with jobs breaching):")
    reads = {size: collector_reads(size) for size in fleets}
    for size, calls in reads.items():
        print(f"  {size:>6,} runner types: " + ", ".join(f"{op} {n}" for op, n in sorted(calls.items())))
    census = {calls["Query"] for calls in reads.values()}
    bound = 2 * HISTORY_SHARDS  # a span over midnight reads two days of every shard
    bounded = census == {1} and all(calls["Query (history)"] <= bound for calls in reads.values())
    print(
        f"  the jobs queued now: 1 Query at every size; the history: at most {bound} Queries at any size: "
        + ("met" if bounded else "MISSED")
    )

    cpu_s, item_bytes = track_cpu_per_event(jobs_per_day=args.jobs_per_day)
    print(f"\nthe track handler: {cpu_s * 1000:.1f} ms CPU an event (median), a job's item {item_bytes} bytes")
    burst = 3000 / 60 * (cpu_s * VCPU_MB / TRACK_MEMORY_MB + AWS_LATENCY_S)
    print(f"a burst of 3,000 events a minute keeps {burst:.1f} invocations busy on average")
    figures: dict[str, Any] = {
        "jobs_per_day": args.jobs_per_day,
        "runner_types": args.runner_types,
        "queued": args.queued,
        "history_days": HISTORY_DAYS,
        "job_metrics": "off",
        "cpu_ms": round(cpu_s * 1000, 2),
        "item_bytes": item_bytes,
        "collector_queries": reads[fleets[0]]["Query"],
        "history_reads": {str(size): calls["Query (history)"] for size, calls in reads.items()},
    }
    lines = tracking_lines(figures)
    print(f"\na month at {args.jobs_per_day:,} jobs a day (us-east-1 list prices, bench/cost.py):")
    for item, usd, basis in lines:
        print(f"  {item:<56} ${usd:>8.2f}   {basis}")
    print(f"  {'total':<56} ${sum(usd for _, usd, _ in lines):>8.2f}")
    TRACK_RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {TRACK_RESULTS.relative_to(REPO_ROOT)}; `make cost` puts them in docs/COST.md")
    if not bounded:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
