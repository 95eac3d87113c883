"""The backtest's memory at fleet scale: `queuewatch backtest` over N runner types x D days, dense history.

Run: .venv/bin/python -m bench.backtest_memory [runner types, default 1000] [days, default 14]

The worst case for memory: every one of the 4 series a runner type is judged on (queue time,
and the three AWS/SQS depth series standing in for queue size) has a datapoint every minute
of the range, as AWS/SQS publishes for queues that are active (zeros while empty). A
stand-in CloudWatch client generates those datapoints as each GetMetricData call asks for
them (moto would hold them all in memory and take hours to seed), checks every call
against the API's limits, and every runner type queues once in the range, its oldest job
aging a minute a minute for an hour past the threshold, so the replay pages.
Everything else is the command's own path: backtest() with its chunked reads, the real
evaluate.plan on every tick, the report. It prints the peak resident set size, and the
same process's size before the history is read, so the backtest's own share is plain.
"""

from __future__ import annotations

import resource
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.config.load import parse_config
from queuewatch_cli.commands.backtest.history import MAX_DATAPOINTS_PER_CALL, ChunkRead
from queuewatch_cli.commands.backtest.report import report
from queuewatch_cli.commands.backtest.run import backtest

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
INCIDENT_MINUTES = 60


def config_text(size: int) -> str:
    return (
        "version: 1\ndefaults:\n  region: us-east-1\n  rule: {team: ci-infra}\nrunner_types:\n"
        + "".join(f"  - {{name: rt{n}, queue: {{name: q{n}}}}}\n" for n in range(size))
        + "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 30m, queue_size: 5}, breach_when: all,"
        " for: 5m, priority: P2, group_by: runner_type}\n"
    )


class DenseCloudWatch:
    """A datapoint every period for every query; each runner type queues once, past the threshold."""

    def __init__(self, start: datetime, days: int) -> None:
        self.start = start
        self.days = days
        self.calls = 0
        self.datapoints = 0

    def incident_start(self, queue: str) -> int:
        index = int(queue.removeprefix("q"))
        return (index % self.days) * 1440 + (index * 13) % (1440 - INCIDENT_MINUTES)

    def value(self, metric: str, queue: str, minute: int) -> float:
        into = minute - self.incident_start(queue)
        queueing = 0 <= into < INCIDENT_MINUTES
        if metric == "ApproximateAgeOfOldestMessage":
            return (25 + into) * 60.0 if queueing else 0.0
        if metric == "ApproximateNumberOfMessagesVisible":
            return 12.0 if queueing else 0.0
        return 0.0

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        queries = kwargs["MetricDataQueries"]
        start, end = kwargs["StartTime"], kwargs["EndTime"]
        self.calls += 1
        results = []
        for query in queries:
            stat = query["MetricStat"]
            period = stat["Period"]
            queue = stat["Metric"]["Dimensions"][0]["Value"]
            count = int((end - start).total_seconds() // period)
            stamps = [start + timedelta(seconds=period * i) for i in range(count)]
            minutes = [int((s - self.start).total_seconds() // 60) for s in stamps]
            values = [self.value(stat["Metric"]["MetricName"], queue, m) for m in minutes]
            results.append({"Id": query["Id"], "Timestamps": stamps, "Values": values})
            self.datapoints += count
        if len(queries) > 500 or sum(len(r["Values"]) for r in results) > MAX_DATAPOINTS_PER_CALL:
            raise SystemExit(f"a call broke GetMetricData's limits: {len(queries)} queries")
        return {"MetricDataResults": results}


class StandInClients(AwsClients):
    def __init__(self, cloudwatch: DenseCloudWatch) -> None:
        super().__init__()
        self.stand_in = cloudwatch

    def cloudwatch(self, region: str) -> CloudWatchClient:
        return cast("CloudWatchClient", self.stand_in)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main(size: int, days: int) -> None:
    config = parse_config(config_text(size), source="bench.yaml")
    start, end = NOW - timedelta(days=days, hours=1), NOW - timedelta(hours=1)
    cloudwatch = DenseCloudWatch(start, days)
    before = peak_rss_mib()
    began = time.monotonic()
    chunks: list[ChunkRead] = []

    def progress(read: ChunkRead) -> None:
        chunks.append(read)
        if read.number == 1 or read.number % 10 == 0 or read.number == read.of:
            rate = read.number / max(time.monotonic() - began, 1e-9)
            print(
                f"  chunk {read.number}/{read.of}: {read.calls} calls, {read.datapoints:,} datapoints; "
                f"peak RSS {peak_rss_mib():.0f} MiB; {rate * 60:.1f} chunks a minute",
                file=sys.stderr,
                flush=True,
            )

    outcome = backtest(config, StandInClients(cloudwatch), start, end, now=NOW, progress=progress)
    elapsed = time.monotonic() - began
    lines = report("bench.yaml", outcome.replay.episodes, start, end)
    print(f"backtest of {size:,} runner types x {days} days ({(end - start) // timedelta(minutes=1) + 1:,} ticks)")
    print(f"  GetMetricData calls {cloudwatch.calls:,}, datapoints {cloudwatch.datapoints:,}, chunks {len(chunks)}")
    print(f"  most datapoints in one chunk {max(c.datapoints for c in chunks):,}")
    print(f"  pages {len(outcome.replay.episodes):,} ({lines[-2].strip()})")
    print(f"  peak RSS {peak_rss_mib():.0f} MiB; before reading {before:.0f} MiB (Python, boto3, the config)")
    print(f"  wall time {elapsed / 60:.1f} min")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000, int(sys.argv[2]) if len(sys.argv) > 2 else 14)
