"""docs/COST.md's section on the forecast's reads, from `python -m bench.forecast`'s figures (bench/forecast.json)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.forecast import NOW, RESULTS, WINDOW, fleet_jobs
from queuewatch.collect.autoscaler_log import MAX_COUNTS_PER_TICK

TICKS_A_MONTH = 60 * 730
DYNAMODB_READ_PER_MILLION = 0.125  # on-demand read request units, us-east-1 (bench/cost.py PRICES)
LOGS_INSIGHTS_PER_GB = 0.005
SCALE_UP_BYTES_PER_JOB = 4096
"""A guess, not a measure: what Logs Insights scans per scale-up invocation (Lambda's START, END and REPORT
lines and upstream's own, some ten lines of about 400 bytes), one invocation per job."""


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 else "$" + f"{value:.6f}".rstrip("0")


def forecast_section(path: Path = RESULTS) -> list[str]:
    if not path.exists():
        return []
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["rows"]
    out = [
        "## The forecast's reads",
        "",
        "With a rule's `forecast:` (tracking on), each tick reads the jobs' history of the runner types it "
        "selects over the triage's window and baseline (the read the triage makes for the runner types in breach, "
        "widened), and the `Current runners` line of the scale-up log groups of those that had a job in the "
        f"window, at most {MAX_COUNTS_PER_TICK}, with one Logs Insights query per region and 50 log groups. Without "
        "a forecast rule it reads neither. From `python -m bench.forecast` (moto in-process; every runner type "
        "under a forecast rule, 1 in 100 pools full, 1 in 10 busy, the rest idle, about 50,000 jobs a day at "
        "5,000). These figures come from that module's run alone, not from `make bench`'s.",
        "",
        "| runner types | history Query pages | read units | jobs returned | counts read | Logs Insights queries | "
        "a month: DynamoDB | a month: Logs Insights (a guess) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        reads = row["read_units"] * TICKS_A_MONTH * DYNAMODB_READ_PER_MILLION / 1e6
        in_window = sum(
            1 for job in fleet_jobs(row["runner_types"]) if job.queued_since >= NOW - timedelta(seconds=WINDOW)
        )
        scanned = in_window * SCALE_UP_BYTES_PER_JOB / 1e9
        out.append(
            f"| {row['runner_types']:,} | {row['calls'].get('dynamodb.Query', 0)} | {row['read_units']:.1f} | "
            f"{row['jobs_returned']:,} | {row['counts_read']} | {row['insights_calls'].get('StartQuery', 0)} | "
            f"{_usd(reads)} | {_usd(scanned * LOGS_INSIGHTS_PER_GB * TICKS_A_MONTH)} |"
        )
    out += [
        "",
        "- The Logs Insights column assumes some 4 KB scanned per scale-up invocation, one per job in the window: "
        "the stand-in does not measure what Logs Insights would scan.",
        "- CPU and the tick's time: [performance.md](performance.md#the-forecast-a-tick).",
        "",
    ]
    return out
