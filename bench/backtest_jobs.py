"""The backtest of the tracked jobs at scale: `queuewatch backtest --jobs-table` over D days at J jobs a day.

Run: .venv/bin/python -m bench.backtest_jobs [jobs a day, default 50000] [days, default 14] [runner types, 150]

The jobs table's history is served by a stand-in DynamoDB client that answers read_history's Queries as
the table's history index would (one partition per UTC day and shard, sorted by queued_at, 1 MB pages of
about 2,000 items), generating each page's items when it is asked for: seeding moto with 700,000 jobs
would take hours and hold them all. The items are the ones the track stage writes (job_store's own
mapping). The jobs: J a day spread evenly over the day and the runner types, each taken within 30 s to
2 minutes; every runner type queues once in the range, its jobs waiting for an hour and 25 minutes, so
the replay pages once per runner type. Everything else is the command's own path: read_history,
record_from, the rebuild of each tick (backtest/jobs.py), the real evaluate.plan on every tick, the report.

Target: a fortnight at 50,000 jobs a day within 10 minutes and 512 MiB on one core, so that an operator
runs it from a laptop or a CI job before changing a rule; the CloudWatch backtest of 1,000 runner types x
14 days (bench/backtest_memory.py) takes about 22 minutes and 83 MiB.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from bench.backtest_memory import config_text  # the same fleet and rule as the CloudWatch replay
from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.jobs_table import jobs as job_store
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import QUEUED_BUCKET, JobRecord, shard_of
from queuewatch_cli.commands.backtest.report import report
from queuewatch_cli.commands.backtest.run import backtest

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
PAGE_ITEMS = 2000  # about 1 MB of these items: a Query page
INCIDENT = timedelta(minutes=60)
INCIDENT_WAIT = timedelta(minutes=85)


class HistoryIndex:
    """Answers read_history's Queries of the history index from jobs generated on demand."""

    def __init__(self, per_day: int, size: int, first_day: datetime, days: int) -> None:
        self.per_day = per_day
        self.size = size
        self.first_day = first_day
        self.days = days
        self.spacing = 86400 / per_day
        self.names = [f"rt{n}" for n in range(size)]
        self.by_shard: dict[int, list[int]] = {}
        for index, name in enumerate(self.names):
            self.by_shard.setdefault(shard_of(name), []).append(index)
        self.queries = self.pages = self.items = 0

    def get_paginator(self, name: str) -> HistoryIndex:
        assert name == "query"
        return self

    def incident_start(self, runner_type: int) -> datetime:
        day = runner_type % self.days
        minute = (runner_type * 13) % (1440 - 120)
        return self.first_day + timedelta(days=day, minutes=minute)

    def paginate(self, **kwargs: Any) -> Iterator[dict[str, Any]]:
        self.queries += 1
        values = kwargs["ExpressionAttributeValues"]
        bucket = values[":bucket"]["S"]
        if bucket == QUEUED_BUCKET:
            return  # every job of the range has started
        start, end = (datetime.fromisoformat(values[key]["S"]) for key in (":start", ":end"))
        day_text, shard = bucket.split("#")
        day = datetime.fromisoformat(day_text).replace(tzinfo=UTC)
        page: list[dict[str, Any]] = []
        for number in range(self.per_day):
            runner_type = number % self.size
            if shard_of(self.names[runner_type]) != int(shard):
                continue
            queued = day + timedelta(seconds=number * self.spacing)
            if not start <= queued <= end:
                continue
            page.append(self.item(day, number, runner_type, queued))
            if len(page) == PAGE_ITEMS:
                yield self.page(page)
                page = []
        if page:
            yield self.page(page)

    def page(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        self.pages += 1
        self.items += len(items)
        return {"Items": items}

    def item(self, day: datetime, number: int, runner_type: int, queued: datetime) -> dict[str, Any]:
        began = self.incident_start(runner_type)
        waits = timedelta(seconds=30 + (number * 7) % 90)
        if began <= queued < began + INCIDENT:
            waits = began + INCIDENT_WAIT - queued  # every job of the incident waits until it ends
        started = queued + waits
        job_id = int((day - self.first_day).days + 2) * 10_000_000 + number
        record = JobRecord(
            job_id=job_id,
            run_id=job_id,
            status="completed",
            progress=3,
            runner_type=self.names[runner_type],
            labels=(self.names[runner_type],),
            label_set=self.names[runner_type],
            org="bench",
            repo="bench/repo",
            html_url=f"https://github.com/bench/repo/actions/runs/{job_id}/job/{job_id}",
            created_at=queued,
            queued_at=queued,
            started_at=started,
            completed_at=started + timedelta(minutes=20),
            updated_at=started + timedelta(minutes=20),
            expires_at=NOW + timedelta(days=14),
        )
        return job_store._attributes(record)  # as the track stage writes it


class StandInClients(AwsClients):
    def __init__(self, index: HistoryIndex) -> None:
        super().__init__()
        self.index = index

    def dynamodb(self, region: str | None = None) -> DynamoDBClient:
        return cast("DynamoDBClient", self.index)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


TARGET_CPU_SECONDS, TARGET_MIB = 600, 512  # a fortnight at 50,000 jobs a day, on a laptop (module docstring)


def main(per_day: int, days: int, size: int) -> bool:
    config = parse_config(config_text(size), source="bench.yaml")
    end = NOW - timedelta(hours=1)
    start = end - timedelta(days=days)
    index = HistoryIndex(per_day, size, start, days)
    before = peak_rss_mib()
    began, cpu = time.monotonic(), time.process_time()
    outcome = backtest(config, StandInClients(index), start, end, now=NOW, jobs_table="bench-jobs")
    elapsed, cpu = time.monotonic() - began, time.process_time() - cpu
    lines = report("bench.yaml", outcome.replay.episodes, start, end)
    print(f"backtest of the tracked jobs: {per_day:,} jobs a day x {days} days, {size} runner types")
    print(f"  jobs read {index.items:,} in {index.queries:,} Queries, {index.pages:,} pages")
    print(f"  pages {len(outcome.replay.episodes):,} ({lines[-2].strip()})")
    print(f"  peak RSS {peak_rss_mib():.0f} MiB; before reading {before:.0f} MiB (Python, boto3, the config)")
    # CPU time beside wall time: on a shared machine the wall time says more about the neighbours.
    print(f"  wall time {elapsed / 60:.1f} min; CPU time {cpu / 60:.1f} min")
    met = cpu <= TARGET_CPU_SECONDS and peak_rss_mib() <= TARGET_MIB
    print(
        f"  verdict: {'met' if met else 'MISSED'} (target: {TARGET_CPU_SECONDS // 60} min of CPU and "
        f"{TARGET_MIB} MiB, judged at any size)"
    )
    return met


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    sys.exit(0 if main(*(args + [50_000, 14, 150][len(args) :])) else 1)
