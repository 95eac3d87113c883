"""SLOs at scale: the AWS calls a tick makes for the SLOs' burn rates, at 10 and 5,000 runner types and at a
light and a heavy job volume, with a verdict: one Query of the counters per SLO, one page each, whatever the
fleet and the volume (the design: counters per SLO per 5-minute bucket, adapters/slo_table/counters.py).

Run: .venv/bin/python -m bench.slo_calls [--fleets 10,5000]. On an in-process moto: each SLO's counters are
filled for every bucket of its longest burn window (3 days, the most items a read can meet), the jobs
queued now are spread over the fleet, and the collector's SLO step (alerting/slo_reading.py `slo_readings`, the
step `collect()` runs with tracking and SLOs on) reads them; the evaluator then judges the readings
(evaluate/slo.py `judge_slos`), which must call nothing. The rest of a tick (queues, metrics, the jobs
census) is bench/run.py's and bench/track.py's; the figures here are the SLOs' share of it.
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from moto import mock_aws

from bench.counting import CallLog, counting_session
from queuewatch.adapters.slo_table.counters import COUNTER_PREFIX, EXPIRES_AT
from queuewatch.adapters.slo_table.readings import slo_readings
from queuewatch.config.load import parse_config
from queuewatch.evaluate.slo import judge_slos
from queuewatch.model.jobs import JobRecord
from queuewatch.model.slo import BUCKET, bucket_start
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.moto_tables import create_slo_table

REGION = "us-east-1"
TABLE = "queuewatch-bench-slos"
NOW = datetime(2026, 11, 25, 12, 2, tzinfo=UTC)
VOLUMES = {"1,000 jobs/day": (1_000, 10), "50,000 jobs/day": (50_000, 2_000)}  # jobs a day, jobs queued now
SLOS = (
    "slos:\n"
    '  - {name: linux-fast, match: ["linux-*"], objective: 99%, queue_time_under: 2m}\n'
    '  - {name: gpu-fast, match: ["gpu-*"], objective: 95%, queue_time_under: 10m}\n'
)


def fleet_config(size: int) -> str:
    """`size` runner types, a tenth of them GPU pools, each with its queue, one rule and the two SLOs."""
    names = [f"gpu-{n}" if n % 10 == 0 else f"linux-{n}" for n in range(size)]
    runner_types = "".join(f"  - {{name: {name}, queue: {{name: q-{name}}}}}\n" for name in names)
    rules = "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 30m}}\n"
    return f"version: 1\ndefaults: {{rule: {{team: ci-infra}}}}\nrunner_types:\n{runner_types}{rules}{SLOS}"


def fill_counters(dynamodb: Any, slo_names: list[str], jobs_per_day: int, span: timedelta) -> int:
    """Every 5-minute bucket of `span` for each SLO, holding its share of the day's jobs (2% late)."""
    per_bucket = max(1, round(jobs_per_day * BUCKET / 86400))
    expires = str(int((NOW + timedelta(days=30)).timestamp()))
    items = []
    first, bucket = bucket_start(NOW - span), timedelta(seconds=BUCKET)
    for name in slo_names:
        at = first
        while at <= NOW:
            good, bad = per_bucket - per_bucket // 50, per_bucket // 50
            item = {
                "pk": {"S": f"{COUNTER_PREFIX}{name}"},
                "sk": {"S": at.isoformat()},
                "good": {"N": str(good)},
                "bad": {"N": str(bad)},
                EXPIRES_AT: {"N": expires},
            }
            items.append({"PutRequest": {"Item": item}})
            at += bucket
    for start in range(0, len(items), 25):
        dynamodb.batch_write_item(RequestItems={TABLE: items[start : start + 25]})
    return len(items) // len(slo_names)


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
        log = CallLog()
        dynamodb = counting_session(log).client("dynamodb", region_name=REGION)
        create_slo_table(dynamodb, TABLE)
        span = timedelta(seconds=max(slo.longest_burn_window for slo in config.resolved_slos))
        buckets = fill_counters(dynamodb, [slo.name for slo in config.resolved_slos], jobs_per_day, span)
        queued = queued_jobs([r.name for r in config.runner_types], queued_count)
        log.take()
        started = time.perf_counter()
        readings = slo_readings(config, dynamodb, TABLE, queued, NOW)
        seconds = time.perf_counter() - started
        calls, attempts, _ = log.take()
        snapshot = Snapshot(snapshot_id="bench", collected_at=NOW, runner_types=[], slos=readings)
        judged, blind = judge_slos(config, snapshot)
        judge_calls, _, _ = log.take()
    return {
        "runner_types": size,
        "volume": volume,
        "queued": queued_count,
        "slos": len(config.resolved_slos),
        "buckets_per_slo": buckets,
        "calls": dict(calls),
        "attempts": attempts,
        "seconds": seconds,
        "judge_calls": sum(judge_calls.values()),
        "blind": sorted(blind),
        "judged": len(judged),
        "errors": [r.error for r in readings if r.error],
    }


def verdicts(rows: list[dict[str, Any]]) -> list[str]:
    """One line per row: PASS when the SLO step made one Query per SLO in one page and the judge none."""
    out = []
    for row in rows:
        queries = row["calls"].get("dynamodb.Query", 0)
        others = sum(n for name, n in row["calls"].items() if name != "dynamodb.Query")
        fixed = queries == row["slos"] and row["attempts"] == row["slos"] and others == 0
        clean = row["judge_calls"] == 0 and not row["blind"] and not row["errors"]
        out.append(
            f"{'PASS' if fixed and clean else 'FAIL'}  {row['runner_types']:>5,} runner types, {row['volume']:>15}, "
            f"{row['queued']:>5,} queued: {queries} Query call(s) for {row['slos']} SLOs "
            f"({row['buckets_per_slo']} buckets each), {row['attempts']} HTTP request(s), {others} other call(s); "
            f"the evaluator's judge {row['judge_calls']} call(s); {row['seconds'] * 1000:.0f} ms wall (moto in-process)"
        )
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
    print(f"verdict: {'FAIL' if failed else 'PASS'}: calls per tick for the SLOs do not grow with the fleet or volume")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
