"""The autoscaler's own words at scale: what reading its log lines adds to a tick, at 150 and 5,000 runner types,
every one of them in breach (the worst case), with a verdict.

Run: .venv/bin/python -m bench.autoscaler_words [--fleets 150,5000]. On an in-process moto: each runner type
read has a scale-up log group with a busy breach's lines in the window (one scale-up a minute refused at the
maximum, each with its `Current runners` line), and the collector's step (collect/autoscaler_log.py
`read_autoscaler_logs`, the one `collect()` runs beside the second metric round) reads them through the real
adapter, Logs Insights answered by queuewatch_cli/devkit/insights_moto.py over moto's FilterLogEvents. Counted: the
Logs calls a tick makes, the runner types read and those said to be unread past the bound, queuewatch's own CPU
time for the step (the classification of the rows), and the bytes the query would scan, which Logs Insights
bills. Not measured here: how long Logs Insights takes to answer, which no local stand-in shows; a tick waits
for it at most WAIT_SECONDS, beside the second metric round.
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
from moto import mock_aws

from queuewatch.collect.autoscaler_log import WAIT_SECONDS, Query, logs_query, read_autoscaler_logs
from queuewatch.collect.queues import WatchedQueue
from queuewatch.model.autoscaler_log import MAX_READ_PER_TICK, LogRow
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot
from queuewatch_cli.devkit.insights_moto import InsightsOverMoto, powertools_line, put_lines

REGION = "us-east-1"
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
WINDOW = 900  # the triage window: the page's window is at least this
WAITED = timedelta(minutes=45)  # the longest-waiting job: the window reaches back to it
PRICE_PER_GB_SCANNED = 0.005  # Logs Insights, us-east-1 (docs/COST.md)
CPU_BUDGET_SECONDS = 0.1  # queuewatch's own share of the step, whatever the fleet
RESULTS = Path(__file__).with_name("autoscaler_words.json")  # docs/COST.md's figures (bench/words_cost.py)


def fleet(size: int) -> tuple[list[WatchedQueue], list[RunnerTypeSnapshot]]:
    """`size` upstream-named runner types (multi-runner: gh-ci-<key>-queued-builds), every one in breach."""
    targets, snapshots = [], []
    for n in range(size):
        key = f"linux-{n:04d}"
        queue = f"gh-ci-{key}-queued-builds"
        targets.append(WatchedQueue(key, REGION, "123456789012", queue, None, {}))
        waited = WAITED.total_seconds() - n / 1000  # the first ones waited longest: they are read first
        snapshots.append(
            RunnerTypeSnapshot(
                name=key, region=REGION, queue_name=queue, signals={SignalName.QUEUE_TIME: Reading.of(waited)}
            )
        )
    return targets, snapshots


def busy_lines(key: str) -> list[tuple[datetime, str]]:
    """A busy breach: a scale-up a minute over the window, each refused at the maximum, with every line that
    invocation writes at INFO (scale-up.ts at v7.11) and Lambda's own START, END and REPORT: all are scanned."""
    function = f"gh-ci-{key}-scale-up"
    request = "0b9e2c4d-5f60-4a1b-9c2d-3e4f5a6b7c8d"
    out = []
    for minute in range(int(WAITED.total_seconds() // 60)):
        at = NOW - timedelta(minutes=minute, seconds=30)
        said = [
            f"START RequestId: {request} Version: $LATEST",
            powertools_line("Received events", function, runner={"ephemeral": False, "type": "Org", "n_events": 3}),
            powertools_line("Current runners", function, currentRunners=50, maximumRunners=50),
            powertools_line(
                "Not all runners will be created for this group, maximum number of runners reached.",
                function,
                desiredNewRunners=3,
            ),
            f"END RequestId: {request}",
            f"REPORT RequestId: {request}\tDuration: 412.31 ms\tBilled Duration: 413 ms\tMemory Size: 512 MB\t"
            "Max Memory Used: 143 MB",
        ]
        out += [(at + timedelta(milliseconds=index), text) for index, text in enumerate(said)]
    return out


def measure(size: int) -> dict[str, Any]:
    targets, snapshots = fleet(size)
    with mock_aws():
        logs = boto3.client("logs", region_name=REGION)
        scanned = 0
        for key in [t.runner_type for t in targets[:MAX_READ_PER_TICK]]:
            lines = busy_lines(key)
            put_lines(logs, f"/aws/lambda/gh-ci-{key}-scale-up", lines)
            scanned += sum(len(text.encode()) for _, text in lines)
        insights = InsightsOverMoto(logs)
        answered: list[list[LogRow]] = []
        through_moto = logs_query(lambda region: insights, wait_seconds=WAIT_SECONDS)

        def recorded(region: str, groups: list[str], start: datetime, end: datetime) -> list[LogRow]:
            answered.append(through_moto(region, groups, start, end))
            return answered[-1]

        started = time.perf_counter()
        said, past = step(targets, snapshots, recorded)
        wall = time.perf_counter() - started
    # queuewatch's own CPU for the step: the same rows answered at once, so nothing but its own work is timed.
    started = time.process_time()
    for _ in range(5):
        step(targets, snapshots, lambda region, groups, start, end: answered[0])
    cpu = (time.process_time() - started) / 5
    read = [log for log in said.values() if log.error is None]
    return {
        "runner_types": size,
        "breaching": size,
        "read": len(read),
        "said_unread": past + sum(1 for log in said.values() if log.error is not None),
        "rows": sum(len(rows) for rows in answered),
        "with_cause": sum(1 for log in read if log.causes and log.causes[0].maximum_runners == 50),
        "calls": {name: insights.calls.count(name) for name in sorted(set(insights.calls))},
        "step_cpu_seconds": cpu,
        "wall_seconds_with_moto": wall,
        "bytes_scanned": scanned,
        "dollars_per_tick": scanned / 1e9 * PRICE_PER_GB_SCANNED,
    }


def step(targets: list[WatchedQueue], snapshots: list[RunnerTypeSnapshot], query: Query) -> tuple[dict[int, Any], int]:
    """The collector's log step as collect() runs it, every runner type in breach."""
    return read_autoscaler_logs(
        targets, snapshots, set(range(len(targets))), prefix="gh-ci", window_seconds=WINDOW, now=NOW, query=query
    )


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for row in rows:
        bounded = row["read"] == min(row["breaching"], MAX_READ_PER_TICK)
        said = row["read"] + row["said_unread"] == row["breaching"]  # every breaching runner type has a reading
        calls = row["calls"].get("StartQuery", 0) == 1 and row["calls"].get("GetQueryResults", 0) == 1
        found = row["with_cause"] == row["read"]
        cheap = row["step_cpu_seconds"] <= CPU_BUDGET_SECONDS
        ok = bounded and said and calls and found and cheap
        out.append(
            f"{'PASS' if ok else 'FAIL'}  {row['runner_types']:>5,} runner types, all in breach: {row['read']} read "
            f"(each naming 'maximum reached (50 of 50 runners)': {row['with_cause']}), {row['said_unread']} said "
            f"unread (past the bound); Logs calls {row['calls']} ({row['rows']} rows); the step "
            f"{row['step_cpu_seconds'] * 1000:.1f} ms CPU; {row['bytes_scanned'] / 1e6:.2f} MB scanned, "
            f"${row['dollars_per_tick']:.6f} a tick; the query's own latency: at most {WAIT_SECONDS:g} s waited, "
            f"beside the second metric round ({row['wall_seconds_with_moto'] * 1000:.0f} ms wall with moto)"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fleets", default="150,5000", help="runner type counts, comma-separated")
    parser.add_argument("--out", default=str(RESULTS), help="where the figures go, for docs/COST.md (bench/cost.py)")
    args = parser.parse_args(argv)
    rows = [measure(int(size)) for size in args.fleets.split(",")]
    Path(args.out).write_text(json.dumps({"rows": rows}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print("The autoscaler's own words per tick (the collector's log step; moto in-process, Insights stood in):")
    lines = verdicts(rows)
    for line in lines:
        print("  " + line)
    failed = [line for line in lines if line.startswith("FAIL")]
    print(
        f"verdict: {'FAIL' if failed else 'PASS'}: at most {MAX_READ_PER_TICK} runner types read a tick, in one "
        "query per region, the rest said unread, never a quiet zero"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
