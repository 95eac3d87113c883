"""SLOs at scale: the AWS calls, items read and read units a tick spends on the SLOs' burn rates, at 10 and
5,000 runner types and at a light and a heavy job volume, with a verdict: one Query of the counters per SLO,
one page each, whatever the fleet and the volume (the design: a counter per SLO per hour holding its minutes,
adapters/slo_table/counters.py).

Run: .venv/bin/python -m bench.slo_calls [--fleets 10,5000]. On an in-process moto: each SLO's counters are
filled for every minute of its longest burn window (3 days, the most a read can meet), the jobs queued now
are spread over the fleet, and the collector's SLO step (adapters/slo_table/readings.py `slo_readings`,
which `collect()` runs with tracking and SLOs on) reads them; the evaluator then judges the readings
(evaluate/slo.py `judge_slos`), which must call nothing. Beside it, the same jobs read as two layouts not
chosen would hold them, written and read by this bench alone: 5-minute buckets (windows of W to W + 5
minutes) and an item per minute, one Query each. Read units are
DynamoDB's for an eventually consistent Query: half a unit per 4 KB read, rounded up per call, with the item
sizes reckoned by DynamoDB's rules. The rest of a tick (queues, metrics, the jobs census) is bench/run.py's and
bench/track.py's; the figures here are the SLOs' share of it.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from moto import mock_aws

from bench.counting import CallLog, counting_session
from queuewatch.adapters.slo_table.counters import COUNTER_PREFIX, EXPIRES_AT, hour_key
from queuewatch.adapters.slo_table.readings import slo_readings
from queuewatch.config.load import parse_config
from queuewatch.evaluate.slo import judge_slos
from queuewatch.model.jobs import JobRecord
from queuewatch.model.slo import HOUR, MINUTE, floor_to
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.devkit.moto_tables import create_slo_table

REGION = "us-east-1"
TABLE = "queuewatch-bench-slos"
NOW = datetime(2026, 11, 25, 12, 2, tzinfo=UTC)
VOLUMES = {"1,000 jobs/day": (1_000, 10), "50,000 jobs/day": (50_000, 2_000)}  # jobs a day, jobs queued now
SLOS = (
    "slos:\n"
    '  - {name: linux-fast, match: ["linux-*"], objective: 99%, queue_time_under: 2m}\n'
    '  - {name: gpu-fast, match: ["gpu-*"], objective: 95%, queue_time_under: 10m}\n'
)
FIVE_MINUTES = 300  # the buckets of the 5-minute layout compared with the hours'


def fleet_config(size: int) -> str:
    """`size` runner types, a tenth of them GPU pools, each with its queue, one rule and the two SLOs."""
    names = [f"gpu-{n}" if n % 10 == 0 else f"linux-{n}" for n in range(size)]
    runner_types = "".join(f"  - {{name: {name}, queue: {{name: q-{name}}}}}\n" for name in names)
    rules = "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 30m}}\n"
    return f"version: 1\ndefaults: {{rule: {{team: ci-infra}}}}\nrunner_types:\n{runner_types}{rules}{SLOS}"


def fill_counters(dynamodb: Any, slo_names: list[str], jobs_per_day: int, span: timedelta) -> dict[str, int]:
    """Every minute of `span` for each SLO (2% late) as this release keeps it, an hour's item holding its
    minutes; and the same jobs as the other layouts would (5-minute buckets, an item per minute), each in a
    partition of its own (`<name>-5m`, `<name>-1m`) so each read is measured apart."""
    expires = {EXPIRES_AT: {"N": str(int((NOW + timedelta(days=30)).timestamp()))}}
    per_minute = max(1, round(jobs_per_day / 1440))

    good, bad = per_minute - per_minute // 50, per_minute // 50
    items, filled = [], {}
    for layout, suffix, seconds in (("hours", "", HOUR), ("5-minute buckets", "-5m", FIVE_MINUTES),
                                    ("minute items", "-1m", MINUTE)):  # fmt: skip
        at, step, count = floor_to(NOW - span, seconds), timedelta(seconds=seconds), 0
        minutes = seconds // MINUTE
        while at <= NOW:
            item: dict[str, Any] = {"good": {"N": str(good * minutes)}, "bad": {"N": str(bad * minutes)}, **expires}
            if layout == "hours":
                for minute in range(60):
                    item |= {f"g{minute:02d}": {"N": str(good)}, f"b{minute:02d}": {"N": str(bad)}}
            for name in slo_names:
                key = hour_key(at) if layout == "hours" else at.isoformat()
                full = {"pk": {"S": f"{COUNTER_PREFIX}{name}{suffix}"}, "sk": {"S": key}, **item}
                items.append({"PutRequest": {"Item": full}})
            at, count = at + step, count + 1
        filled[layout] = count
    for start in range(0, len(items), 25):
        dynamodb.batch_write_item(RequestItems={TABLE: items[start : start + 25]})
    return filled


def query_all(dynamodb: Any, pk: str, low: str, high: str) -> int:
    """One paged Query of a partition's range, as the layouts not chosen would be read: the items read."""
    read = 0
    for page in dynamodb.get_paginator("query").paginate(
        TableName=TABLE,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :low AND :high",
        ExpressionAttributeValues={":pk": {"S": pk}, ":low": {"S": low}, ":high": {"S": high}},
    ):
        read += len(page.get("Items", []))
    return read


class ReadLog:
    """Each Query's items and read units (eventually consistent: half a unit per 4 KB, rounded up per call)."""

    def __init__(self) -> None:
        self.items = 0
        self.units = 0.0

    def on_query(self, parsed: dict[str, Any], **_: Any) -> None:
        size = sum(item_size(item) for item in parsed.get("Items", []))
        self.items += len(parsed.get("Items", []))
        self.units += max(1, -(-size // 4096)) * 0.5

    def take(self) -> tuple[int, float]:
        taken = self.items, self.units
        self.items, self.units = 0, 0.0
        return taken


def item_size(item: dict[str, Any]) -> int:
    """An item's size by DynamoDB's rules: each name's bytes, a string's bytes, a number's digits halved and one."""
    size = 0
    for name, value in item.items():
        size += len(name.encode())
        if "S" in value:
            size += len(value["S"].encode())
        elif "N" in value:
            size += (len(value["N"].lstrip("-").replace(".", "")) + 1) // 2 + 1
    return size


def queued_jobs(names: list[str], count: int) -> list[JobRecord]:
    """`count` jobs queued now across the fleet, waiting from a second to an hour."""
    jobs = []
    for number in range(count):
        queued_at = NOW - timedelta(seconds=1 + (number * 37) % 3600)
        runner_type = names[number % len(names)]
        jobs.append(
            JobRecord(
                job_id=number,
                run_id=number,
                status="queued",
                progress=1,
                runner_type=runner_type,
                labels=(runner_type,),
                label_set=runner_type,
                org="o",
                repo="o/r",
                html_url=None,
                created_at=queued_at,
                queued_at=queued_at,
                updated_at=queued_at,
                expires_at=NOW + timedelta(days=1),
            )
        )
    return jobs


def measure(size: int, volume: str) -> dict[str, Any]:
    """One fleet size and volume in a fresh moto: the SLO step's calls, pages and seconds, and the judge's calls."""
    jobs_per_day, queued_count = VOLUMES[volume]
    config = parse_config(fleet_config(size))
    with mock_aws():
        log, reads = CallLog(), ReadLog()
        session = counting_session(log)
        session.events.register("after-call.dynamodb.Query", reads.on_query)
        dynamodb = session.client("dynamodb", region_name=REGION)
        create_slo_table(dynamodb, TABLE)
        span = timedelta(seconds=max(slo.longest_burn_window for slo in config.resolved_slos))
        names = [slo.name for slo in config.resolved_slos]
        buckets = fill_counters(dynamodb, names, jobs_per_day, span)
        queued = queued_jobs([r.name for r in config.runner_types], queued_count)
        layouts = {}
        for layout, suffix, first in (
            ("5-minute buckets", "-5m", floor_to(NOW - span, FIVE_MINUTES)),
            ("minute items", "-1m", NOW - span),
        ):
            reads.take()
            for name in names:
                query_all(dynamodb, f"{COUNTER_PREFIX}{name}{suffix}", first.isoformat(), NOW.isoformat())
            layouts[layout] = reads.take()
        log.take()
        reads.take()
        started = time.perf_counter()
        readings = slo_readings(config, dynamodb, TABLE, queued, NOW)
        seconds = time.perf_counter() - started
        calls, attempts, _ = log.take()
        layouts["hours with minutes"] = reads.take()
        snapshot = Snapshot(snapshot_id="bench", collected_at=NOW, runner_types=[], slos=readings)
        judged, blind = judge_slos(config, snapshot)
        judge_calls, _, _ = log.take()
    return {
        "runner_types": size,
        "volume": volume,
        "queued": queued_count,
        "slos": len(config.resolved_slos),
        "filled_per_slo": buckets,
        "read_per_slo": {k: (items / len(names), units / len(names)) for k, (items, units) in layouts.items()},
        "calls": dict(calls),
        "attempts": attempts,
        "seconds": seconds,
        "judge_calls": sum(judge_calls.values()),
        "blind": sorted(blind),
        "judged": len(judged),
        "errors": [r.error for r in readings if r.error],
    }


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """One line per row, and one per layout read: PASS when the SLO step made one Query per SLO in one page, read
    no more read units than 5-minute buckets would, and the judge called nothing."""
    out = []
    for row in rows:
        queries = row["calls"].get("dynamodb.Query", 0)
        others = sum(n for name, n in row["calls"].items() if name != "dynamodb.Query")
        fixed = queries == row["slos"] and row["attempts"] == row["slos"] and others == 0
        read = row["read_per_slo"]
        cheaper = read["hours with minutes"][1] <= read["5-minute buckets"][1]
        clean = row["judge_calls"] == 0 and not row["blind"] and not row["errors"]
        out.append(
            f"{'PASS' if fixed and cheaper and clean else 'FAIL'}  {row['runner_types']:>5,} runner types, "
            f"{row['volume']:>15}, {row['queued']:>5,} queued: {queries} Query call(s) for {row['slos']} SLOs, "
            f"{row['attempts']} HTTP request(s), {others} other call(s); the evaluator's judge "
            f"{row['judge_calls']} call(s); {row['seconds'] * 1000:.0f} ms wall (moto in-process)"
        )
        for layout, (items, units) in read.items():
            out.append(f"        {layout:>17}: {items:,.0f} items, {units:.1f} read units per SLO a tick")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fleets", default="10,5000", help="runner type counts, comma-separated")
    args = parser.parse_args(argv)
    rows = [measure(int(size), volume) for size in args.fleets.split(",") for volume in VOLUMES]
    print("SLO reads per tick (the collector's SLO step and the evaluator's judge; moto in-process):")
    lines = verdicts(rows)
    for line in lines:
        print("  " + line)
    failed = [line for line in lines if line.startswith("FAIL")]
    print(
        f"verdict: {'FAIL' if failed else 'PASS'}: calls and items per tick for the SLOs do not grow with the fleet "
        "or volume, and hours with their minutes read no more than 5-minute buckets would"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
