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

import boto3
from moto import mock_aws

from bench.cost import PRICES, TRACK_RESULTS
from bench.lambda_model import AWS_LATENCY_S, VCPU_MB
from queuewatch.adapters.clients import AwsClients
from queuewatch.adapters.job_store import create_jobs_table
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch_cli.localrun import REPO_ROOT, FakeContext, load_event, load_handler_module
from queuewatch_cli.seed import put_queued_jobs

FLEETS = (10, 100, 1000, 5000)
QUEUED_JOBS = 400  # jobs waiting at the tick, spread over the first runner types
TRACK_MEMORY_MB = 256  # template.yaml, TrackFunction
EVENTS_PER_JOB = 3  # queued, in_progress, completed (waiting only behind a deployment approval)
GSI_WRITES_PER_JOB = 2  # into the queued index at queued, out of it at in_progress
ITEM_BYTES = 700  # a job's item, labels and links included (measured below)
TICKS_PER_MONTH = 60 * 730
DAYS_PER_MONTH = 730 / 24


def collector_reads(size: int) -> Counter[str]:
    """The DynamoDB calls one collect tick makes with tracking on, for a fleet of `size` runner types."""
    now = datetime.now(UTC).replace(microsecond=0)
    text = (
        "version: 1\nrunner_types:\n"
        + "".join(f"  - {{name: rt{n}, queue: {{name: q-{n}}}}}\n" for n in range(size))
        + "rules:\n  - {name: r, team: ci-infra, thresholds: {queue_size: 0}}\n"
    )
    calls: Counter[str] = Counter()

    def count(event_name: str, **_: Any) -> None:
        calls[event_name.rsplit(".", 1)[-1]] += 1

    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_jobs_table(dynamodb, "jobs")
        for index in range(QUEUED_JOBS):
            created = [now - timedelta(minutes=5 + index % 60)]
            put_queued_jobs(dynamodb, "jobs", f"rt{index % min(size, 50)}", created, now=now, first_id=index + 1)
        session = boto3.Session()
        session.events.register_first("before-call.dynamodb", count)
        collect(parse_config(text, source="bench"), AwsClients(session), now=now, account_id="1" * 12,
                snapshot_id="bench", jobs_table="jobs")  # fmt: skip
    return calls


def track_cpu_per_event(jobs: int = 100) -> tuple[float, int]:
    """Median CPU seconds of the track handler per event, and a job item's size in bytes."""
    samples: list[float] = []
    with mock_aws():
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_jobs_table(dynamodb, "jobs")
        # The handler's logs and EMF lines would drown the figures: the log level is raised, EMF goes nowhere.
        os.environ.update(
            JOBS_TABLE="jobs", STACK_NAME="bench", RUNNER_TYPE_METRICS="queued", POWERTOOLS_LOG_LEVEL="WARNING"
        )
        os.environ.setdefault("QUEUEWATCH_CONFIG", str(REPO_ROOT / "config" / "queuewatch.yaml"))
        tracker = load_handler_module("track")
        for job_id in range(1, jobs + 1):
            for action in ("queued", "in_progress", "completed"):
                event = copy.deepcopy(load_event(f"track_{action}.json"))
                event["detail"]["workflow_job"]["id"] = job_id
                started = time.process_time()
                with contextlib.redirect_stdout(io.StringIO()):
                    tracker.lambda_handler(event, FakeContext("queuewatch-track"))
                samples.append(time.process_time() - started)
        item = dynamodb.get_item(TableName="jobs", Key={"pk": {"S": "job#1"}})["Item"]
    return statistics.median(samples), len(str(item).encode())


def month(jobs_per_day: int, cpu_s: float, runner_types: int, queued: int) -> list[tuple[str, float, str]]:
    events = jobs_per_day * EVENTS_PER_JOB * DAYS_PER_MONTH
    seconds = cpu_s * VCPU_MB / TRACK_MEMORY_MB + AWS_LATENCY_S  # one write a round trip
    pages = max(1, -(-queued * ITEM_BYTES // 1_000_000))
    read_units = TICKS_PER_MONTH * max(0.5, queued * ITEM_BYTES / 4096 * 0.5)  # eventually consistent
    return [
        ("Lambda requests", events * PRICES["lambda_request"].usd, f"{events:,.0f} events"),
        (
            "Lambda GB-seconds",
            events * seconds * TRACK_MEMORY_MB / 1024 * PRICES["lambda_gb_second"].usd,
            f"{seconds * 1000:.0f} ms an event at {TRACK_MEMORY_MB} MB",
        ),
        (
            "DynamoDB writes (table and index)",
            (events + jobs_per_day * GSI_WRITES_PER_JOB * DAYS_PER_MONTH) * PRICES["dynamodb_write"].usd,
            "one write unit an event, two index writes a job",
        ),
        ("DynamoDB reads (the collector)", read_units * PRICES["dynamodb_read"].usd, f"{pages} Query page(s) a tick"),
        (
            "Job metrics per runner type",
            3 * runner_types * PRICES["custom_metric"].usd,
            f"JobsQueued, JobQueueTime, JobRunTime for {runner_types} active runner types (RunnerTypeMetrics: off: $0)",
        ),
    ]


def main() -> None:
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the stack's region, where the jobs table lives
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs-per-day", type=int, default=50_000)
    parser.add_argument("--runner-types", type=int, default=150, help="runner types with jobs in a month")
    parser.add_argument("--queued", type=int, default=2_000, help="jobs queued at a busy tick")
    args = parser.parse_args()

    print(f"the collector's DynamoDB calls a tick, {QUEUED_JOBS} jobs queued:")
    reads = {size: collector_reads(size) for size in FLEETS}
    for size, calls in reads.items():
        print(f"  {size:>6,} runner types: " + ", ".join(f"{op} {n}" for op, n in sorted(calls.items())))
    constant = len({tuple(sorted(calls.items())) for calls in reads.values()}) == 1 and reads[FLEETS[0]]["Query"] >= 1
    print(f"  reads constant from {FLEETS[0]:,} to {FLEETS[-1]:,} runner types: {'met' if constant else 'MISSED'}")

    cpu_s, item_bytes = track_cpu_per_event()
    print(f"\nthe track handler: {cpu_s * 1000:.1f} ms CPU an event (median), a job's item {item_bytes} bytes")
    burst = 3000 / 60 * (cpu_s * VCPU_MB / TRACK_MEMORY_MB + AWS_LATENCY_S)
    print(f"a burst of 3,000 events a minute keeps {burst:.1f} invocations busy on average")
    lines = month(args.jobs_per_day, cpu_s, args.runner_types, args.queued)
    print(f"\na month at {args.jobs_per_day:,} jobs a day (us-east-1 list prices, bench/cost.py):")
    for item, usd, basis in lines:
        print(f"  {item:<36} ${usd:>8.2f}   {basis}")
    print(f"  {'total':<36} ${sum(usd for _, usd, _ in lines):>8.2f}")
    figures = {
        "jobs_per_day": args.jobs_per_day,
        "runner_types": args.runner_types,
        "cpu_ms": round(cpu_s * 1000, 2),
        "item_bytes": item_bytes,
        "collector_queries": reads[FLEETS[0]]["Query"],
        "lines": [[item, round(usd, 4), basis] for item, usd, basis in lines],
    }
    TRACK_RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {TRACK_RESULTS.relative_to(REPO_ROOT)}; `make cost` puts them in docs/COST.md")
    if not constant:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
