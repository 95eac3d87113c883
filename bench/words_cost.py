"""docs/COST.md's section on the autoscaler's own words, from `python -m bench.autoscaler_words`'s figures
(bench/autoscaler_words.json), beside the alternatives the design weighed (docs/alerts.md says why)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.autoscaler_words import RESULTS
from queuewatch.collect.autoscaler_log import WAIT_SECONDS
from queuewatch.model.autoscaler_log import MAX_READ_PER_TICK

LOGS_INSIGHTS_PER_GB = 0.005  # US dollars per GB scanned, us-east-1, standard class (CloudWatch pricing)
METRIC_FIRST_10K, METRIC_NEXT = 0.30, 0.10  # custom metrics a month: the first 10,000, then up to 250,000
KINDS = 5  # maximum reached, launch failed, rate limit, JIT config, retry dropped: one metric filter each
BREACH_TICKS = {"30 one-hour incidents a month": 30 * 60, "in breach all month": 60 * 730}
GB_SECOND_AT_1769_MB = 0.0000166667 * 1769 / 1024


def metric_filter_month(runner_types: int) -> float:
    """What one custom metric per kind per runner type costs a month: what metric filters would publish."""
    metrics = KINDS * runner_types
    return min(metrics, 10_000) * METRIC_FIRST_10K + max(0, metrics - 10_000) * METRIC_NEXT


def _usd(value: float) -> str:
    return f"${value:,.2f}" if value >= 0.01 else "$" + f"{value:.8f}".rstrip("0")


def words_section(path: Path = RESULTS) -> list[str]:
    if not path.exists():
        return []
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["rows"]
    out = [
        "## The autoscaler's own words",
        "",
        "With `autoscaler.prefix` in the config and `AutoscalerPrefix` on the stack, a tick in which runner types "
        f"breach a rule reads the scale-up and job-retry log lines of at most {MAX_READ_PER_TICK} of them, the "
        "longest-waiting first, with one Logs Insights query per region ([alerts.md](alerts.md#the-autoscalers-own-"
        "words)); a tick with no breach reads none. From `python -m bench.autoscaler_words` (moto in-process, "
        "Logs Insights stood in over its `FilterLogEvents`; every runner type in breach, each read one with a "
        "busy breach's lines: a scale-up a minute for 45 minutes, refused at the maximum, with Lambda's own "
        "START, END and REPORT lines, all of which Logs Insights scans and bills). These figures come from that "
        "module's run alone, not from `make bench`'s.",
        "",
        "| runner types in breach | read | counted as not read | Logs calls | queuewatch's CPU | scanned | "
        "Logs Insights a tick |",
        "|---:|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        calls = ", ".join(f"{count} `{name}`" for name, count in sorted(row["calls"].items()))
        out.append(
            f"| {row['breaching']:,} | {row['read']} | {row['said_unread']:,} | {calls} | "
            f"{row['step_cpu_seconds'] * 1000:.0f} ms | {row['bytes_scanned'] / 1e6:.1f} MB | "
            f"{_usd(row['dollars_per_tick'])} |"
        )
    worst = max(rows, key=lambda r: r["dollars_per_tick"])
    cpu = max(r["step_cpu_seconds"] for r in rows)
    out += [
        "",
        f"- Lambda time: queuewatch's own work is at most {cpu * 1000:.0f} ms a tick "
        f"({_usd(cpu * GB_SECOND_AT_1769_MB)} at 1,769 MB). The query's own latency is not measured here: no "
        f"local stand-in shows it. A tick waits for it at most {WAIT_SECONDS:g} s, beside the second metric round "
        "and the jobs' history, so only the part that outlasts them is added; past that the reading says the query "
        f"was still running. Each second waited costs {_usd(GB_SECOND_AT_1769_MB)}.",
        "- A month, at the scan above a tick in breach: "
        + "; ".join(
            f"{label}, {_usd(ticks * worst['dollars_per_tick'])} of Logs Insights and at most "
            f"{_usd(ticks * WAIT_SECONDS * GB_SECOND_AT_1769_MB)} of Lambda waiting"
            for label, ticks in BREACH_TICKS.items()
        )
        + ". The scan grows with the autoscaler's log volume over the window (at most 3 hours), never with "
        "the fleet: the bound holds it.",
        "- The alternative, a metric filter per kind of line on each runner type's log groups, would publish "
        f"{KINDS} custom metrics per runner type whether anything breaches or not: "
        + ", ".join(f"{_usd(metric_filter_month(n))} a month at {n:,} runner types" for n in (150, 5_000))
        + ", and still quote no line, count no runners and name no EC2 code or job.",
        "",
    ]
    return out
