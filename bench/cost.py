"""docs/COST.md from the benchmark's own counts: `make cost` (after `make bench`).

Every quantity comes from bench/results.json: calls, metrics requested, state read
units, writes, log bytes and CPU seconds per tick, as measured. 150 runner types is
interpolated linearly between the measured 100 and 1,000 fleets (each count is
linear in the fleet size). Prices are us-east-1 list prices, stated below with
their date and source; free tiers are left out, since an account shares them.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.forecast_cost import forecast_section
from bench.lambda_model import AWS_LATENCY_S, VCPU_MB, cpu_scale, lambda_estimates, rounds
from bench.words_cost import words_section
from queuewatch_cli.common.template import read_template
from queuewatch_cli.devkit.handlers import REPO_ROOT

RESULTS = REPO_ROOT / "bench" / "results.json"
COST_DOC = REPO_ROOT / "docs" / "COST.md"
TRACK_RESULTS = REPO_ROOT / "bench" / "track.json"  # written by `python -m bench.track`
FLEETS = (10, 150, 1000)
TICKS_PER_MONTH = 60 * 730  # a 1-minute schedule; AWS prices a month as 730 hours
PLATFORM_LOG_BYTES = 3 * 120  # Lambda's START, END and REPORT lines per invocation (assumed)
EPISODES_PER_RUNNER_TYPE = 30  # alert episodes a month (fire, then resolve) per runner type (assumed)
SERVICE_METRICS = 5  # Heartbeat, AlertsFiring, RunnerTypesDegraded, PagesSent, PagesFailed, per stack (Stack dimension)

PRICES_AS_OF = "2026-11-21"


@dataclass(frozen=True)
class Price:
    amount: float  # US dollars per `per` units
    per: float
    unit: str
    source: str

    @property
    def usd(self) -> float:
        """Dollars per single unit."""
        return self.amount / self.per

    def __str__(self) -> str:
        count = {1: "", 1000: "1,000 ", 10000: "10,000 ", 1e6: "1M "}[self.per]
        whole, _, cents = f"{self.amount:.10f}".rstrip("0").partition(".")
        return f"${whole}.{cents.ljust(2, '0')} per {count}{self.unit}"


LAMBDA, CLOUDWATCH = "https://aws.amazon.com/lambda/pricing/", "https://aws.amazon.com/cloudwatch/pricing/"
DYNAMODB = "https://aws.amazon.com/dynamodb/pricing/on-demand/"
KMS = "https://aws.amazon.com/kms/pricing/"
PRICES = {
    "lambda_request": Price(0.20, 1e6, "requests", LAMBDA),
    "lambda_gb_second": Price(0.0000166667, 1, "GB-second (x86)", LAMBDA),
    "metrics_requested": Price(0.01, 1000, "metrics requested by GetMetricData", CLOUDWATCH),
    "sqs_request": Price(0.40, 1e6, "requests (standard queue)", "https://aws.amazon.com/sqs/pricing/"),
    "dynamodb_read": Price(0.125, 1e6, "read request units (on-demand)", DYNAMODB),
    "dynamodb_write": Price(0.625, 1e6, "write request units (on-demand)", DYNAMODB),
    "dynamodb_storage": Price(0.25, 1, "GB-month of table and index storage (standard class)", DYNAMODB),
    "sns_publish": Price(0.50, 1e6, "publishes (standard topic)", "https://aws.amazon.com/sns/pricing/"),
    "log_ingestion": Price(0.50, 1, "GB of logs ingested (standard class)", CLOUDWATCH),
    "custom_metric": Price(0.30, 1, "custom metric a month (first 10,000)", CLOUDWATCH),
    "alarm": Price(0.10, 1, "standard-resolution alarm a month", CLOUDWATCH),
    "composite_alarm": Price(0.50, 1, "composite alarm a month", CLOUDWATCH),
    # The account's first three dashboards are free; a stack beside others pays for its own.
    "dashboard": Price(3.00, 1, "dashboard a month (beyond the account's first 3)", CLOUDWATCH),
    # A customer managed key; each of its first two yearly rotations adds $1 a month, later ones nothing.
    "kms_key": Price(1.00, 1, "customer managed KMS key a month", KMS),
    "kms_request": Price(0.03, 10000, "KMS requests", KMS),
}


@dataclass(frozen=True)
class Line:
    item: str
    quantity: float
    unit: str
    price: str

    @property
    def usd(self) -> float:
        return self.quantity * PRICES[self.price].usd


def per_tick(results: dict[str, Any], size: int) -> dict[str, float]:
    """The per-tick figures of a fleet: measured, or interpolated between the nearest measured fleets."""
    measured = {int(n): _flatten(f, results) for n, f in results["fleets"].items()}
    if size in measured:
        return measured[size]
    below = max(n for n in measured if n < size)
    above = min(n for n in measured if n > size)
    share = (size - below) / (above - below)
    return {k: measured[below][k] + share * (measured[above][k] - measured[below][k]) for k in measured[below]}


def _flatten(fleet: dict[str, Any], results: dict[str, Any]) -> dict[str, float]:
    ours = fleet["ours"]
    calls: dict[str, float] = {}
    for stage in ("collect", "evaluate"):
        for name, count in ours[stage]["calls"].items():
            calls[name] = calls.get(name, 0) + count
    cold = ours["cold"]["evaluate"]["calls"]
    cold_writes = sum(n for name, n in cold.items() if name.split(".")[-1] in ("PutItem", "DeleteItem", "UpdateItem"))
    return {
        "runner_types": fleet["runner_types"],
        "queued": fleet["queued"],
        "firing": fleet["firing"],
        # tracking off: every queue read at every tick (bench/lambda_model.py's estimate, kept-alive connections)
        "collect_s": lambda_estimates(fleet)["tracking off"]["collect"],
        "evaluate_s": lambda_estimates(fleet)["tracking off"]["evaluate"],
        "sqs_requests": calls.get("sqs.GetQueueAttributes", 0) + calls.get("sqs.ListQueues", 0),
        "get_queue_attributes": calls.get("sqs.GetQueueAttributes", 0),
        "metrics_requested": ours["collect"]["metrics_requested"],
        # the first round asks the age of each queue holding jobs; the rest is the triage's evidence
        "evidence_metrics": ours["collect"]["metrics_requested"] - fleet["queued"],
        "read_units": ours["state"]["read_units"] * calls.get("dynamodb.Query", 0),
        "steady_writes": ours["writes"],
        "writes_per_firing_type": cold_writes / max(1, fleet["firing"]),
        "log_bytes": ours["collect"]["log_bytes"] + ours["evaluate"]["log_bytes"] + 2 * PLATFORM_LOG_BYTES,
        "emf_bytes": ours["evaluate"]["emf_bytes"],
    }


# The template's RunnerTypeMetrics: which runner types get their own QueueSize and QueueTime.
PER_RUNNER_TYPE_LINE = {
    "queued": "EMF custom metrics: per runner type while jobs wait",
    "alerting": "EMF custom metrics: per runner type while alerting",
    "off": "EMF custom metrics: per runner type, turned off",
}


def queuewatch_lines(
    figures: dict[str, float], memory: dict[str, int], *, all_busy: bool = False, runner_type_metrics: str = "queued"
) -> list[Line]:
    """The month's bill, line by line. `all_busy`: as if every queue held jobs at every tick (the worst case).

    `runner_type_metrics` is the template parameter; with "alerting", the runner types alerting stay
    the benchmark's firing ones even when every queue holds jobs.
    """
    n = figures["runner_types"]
    t = TICKS_PER_MONTH
    busy = n / figures["queued"] if all_busy else 1.0  # what waiting runner types cost scales by this
    with_own_metrics = {"queued": figures["queued"] * busy, "alerting": figures["firing"], "off": 0.0}
    gb_seconds = (figures["collect_s"] * memory["collect"] + figures["evaluate_s"] * memory["evaluate"]) / 1024
    episode_writes = 2 * EPISODES_PER_RUNNER_TYPE * n * figures["writes_per_firing_type"]
    # The per-runner-type EMF lines are what grows with busy queues; the rest of the log is per tick.
    log_bytes = figures["log_bytes"] + (figures["emf_bytes"] * (busy - 1) if runner_type_metrics == "queued" else 0)
    return [
        Line("Lambda requests (collect + evaluate)", 2 * t, "requests", "lambda_request"),
        Line("Lambda duration", gb_seconds * t, "GB-seconds", "lambda_gb_second"),
        Line(
            "GetMetricData metrics requested",
            ((figures["metrics_requested"] - figures["evidence_metrics"]) * busy + figures["evidence_metrics"]) * t,
            "metrics",
            "metrics_requested",
        ),
        Line("GetQueueAttributes and ListQueues", figures["sqs_requests"] * t, "requests", "sqs_request"),
        Line("DynamoDB reads (one Query a tick)", figures["read_units"] * t, "read units", "dynamodb_read"),
        Line(
            "DynamoDB writes (state changes only)",
            figures["steady_writes"] * t + episode_writes,
            "write units",
            "dynamodb_write",
        ),
        Line("SNS publishes (pages)", 2 * EPISODES_PER_RUNNER_TYPE * n, "publishes", "sns_publish"),
        Line("Logs and EMF ingestion", log_bytes * t / 1e9, "GB", "log_ingestion"),
        Line(
            PER_RUNNER_TYPE_LINE[runner_type_metrics],
            2 * with_own_metrics[runner_type_metrics],
            "metric-months",
            "custom_metric",
        ),
        Line("EMF custom metrics: heartbeat and counts", SERVICE_METRICS, "metric-months", "custom_metric"),
        Line("The stack's own alarms (template.yaml)", stack_alarms(), "alarm-months", "alarm"),
        Line("The stack's dashboard (template.yaml)", stack_dashboards(), "dashboard-months", "dashboard"),
        Line("The stack's KMS key (template.yaml)", stack_kms_keys(), "key-months", "kms_key"),
        Line("KMS requests: data keys for its topics and log groups", kms_requests(), "requests", "kms_request"),
    ]


def stack_alarms(template: Path = REPO_ROOT / "template.yaml") -> int:
    """The CloudWatch alarms every stack has (heartbeat, failed pages, the functions' errors and throttles);
    one that a parameter turns on (the track dead-letter alarm) is not in the base bill."""

    # As CloudFormation makes it, its loops unrolled and its nested stacks inlined: one alarm per logical id.
    resources = read_template(template)["Resources"]
    return sum(1 for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm" and "Condition" not in r)


def stack_dashboards(template: Path = REPO_ROOT / "template.yaml") -> int:
    return template.read_text(encoding="utf-8").count("Type: AWS::CloudWatch::Dashboard")


def stack_kms_keys(template: Path = REPO_ROOT / "template.yaml") -> int:
    return template.read_text(encoding="utf-8").count("Type: AWS::KMS::Key")


KMS_DATA_KEY_REUSE_MINUTES = 5
"""SNS and CloudWatch Logs reuse a data key for up to 5 minutes, so each encrypted topic or log group asks
KMS at most about once per 5 minutes it is used: an upper bound, whatever the fleet's size."""


def kms_requests(template: Path = REPO_ROOT / "template.yaml") -> float:
    key = {"Fn::GetAtt": ["QueuewatchKey", "Arn"]}  # its topics and log groups, nested stacks' too
    encrypted = [r.get("Properties", {}) for r in read_template(template)["Resources"].values()]
    users = sum(1 for p in encrypted if key in (p.get("KmsMasterKeyId"), p.get("KmsKeyId")))
    return users * TICKS_PER_MONTH / KMS_DATA_KEY_REUSE_MINUTES


def alarm_lines(n: int) -> list[Line]:
    return [
        Line("Alarms on queue size and queue time", 2 * n, "alarm-months", "alarm"),
        Line("Composite alarm (size AND time) per runner type", n, "alarm-months", "composite_alarm"),
    ]


def _usd(value: float) -> str:
    if value == 0:
        return "$0"
    return f"${value:,.2f}" if value >= 0.01 else "<$0.01"


def _qty(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def render(results: dict[str, Any]) -> str:
    memory = results["memory_mb"]
    fleets = {n: per_tick(results, n) for n in FLEETS}
    ours = {n: queuewatch_lines(fleets[n], memory) for n in FLEETS}
    alarms = {n: alarm_lines(n) for n in FLEETS}
    total = {n: sum(line.usd for line in ours[n]) for n in FLEETS}
    worst = {
        mode: {
            n: sum(line.usd for line in queuewatch_lines(fleets[n], memory, all_busy=True, runner_type_metrics=mode))
            for n in FLEETS
        }
        for mode in PER_RUNNER_TYPE_LINE
    }
    total_alarms = {n: sum(line.usd for line in alarms[n]) for n in FLEETS}
    measured = ", ".join(f"{int(n):,}" for n in results["fleets"])
    out: list[str] = []
    add = out.append
    add("# What queuewatch costs a month\n")
    add(
        "<!-- Generated by bench/cost.py from bench/results.json (`make bench`, then `make cost`). "
        "Do not edit by hand. -->\n"
    )
    add(
        f"A 1-minute schedule ({TICKS_PER_MONTH:,} ticks a month), us-east-1 list prices as of {PRICES_AS_OF}, "
        "no free tier. The quantities are the benchmark's own counts per tick "
        f"(fleets of {measured} runner types measured; 150 interpolated between 100 and 1,000), "
        "times the ticks in a month. The fleet is the benchmark's: runner types over two regions, "
        f"{fleets[1000]['queued'] / fleets[1000]['runner_types']:.0%} of them with jobs waiting at any tick, "
        f"{fleets[1000]['firing'] / fleets[1000]['runner_types']:.0%} firing.\n"
    )
    add("| monthly | " + " | ".join(f"{n:,} runner types" for n in FLEETS) + " |")
    add("|---|" + "---:|" * len(FLEETS))
    add("| **queuewatch** | " + " | ".join(f"**{_usd(total[n])}**" for n in FLEETS) + " |")
    add(
        "| queuewatch, worst case: every queue holding jobs at every tick | "
        + " | ".join(_usd(worst["queued"][n]) for n in FLEETS)
        + " |"
    )
    for mode in ("alerting", "off"):
        add(
            f"| the same worst case with `RunnerTypeMetrics: {mode}` | "
            + " | ".join(_usd(worst[mode][n]) for n in FLEETS)
            + " |"
        )
    add(
        "| two CloudWatch alarms per runner type plus a composite alarm | "
        + " | ".join(_usd(total_alarms[n]) for n in FLEETS)
        + " |"
    )
    add("")
    add("## queuewatch, line by line\n")
    add("| line | " + " | ".join(f"{n:,}: quantity | {n:,}: $" for n in FLEETS) + " |")
    add("|---|" + "---:|---:|" * len(FLEETS))
    for index, line in enumerate(ours[FLEETS[0]]):
        cells = []
        for n in FLEETS:
            row = ours[n][index]
            cells += [f"{_qty(row.quantity)} {row.unit}", _usd(row.usd)]
        add(f"| {line.item} | " + " | ".join(cells) + " |")
    add("| **total** | " + " | ".join(f" | **{_usd(total[n])}**" for n in FLEETS) + " |")
    add("")
    add(measured_section(results))
    add(lambda_section(results))
    add("## The alternative: CloudWatch alarms\n")
    add(
        "Two alarms per runner type (`ApproximateNumberOfMessagesVisible` and `ApproximateAgeOfOldestMessage`, "
        "free AWS/SQS metrics) and a composite alarm per runner type that fires when both do, the same "
        "`breach_when: all` coverage as queuewatch's default rule.\n"
    )
    add("| line | " + " | ".join(f"{n:,}: $" for n in FLEETS) + " |")
    add("|---|" + "---:|" * len(FLEETS))
    for index, line in enumerate(alarms[FLEETS[0]]):
        add(f"| {line.item} ({PRICES[line.price]}) | " + " | ".join(_usd(alarms[n][index].usd) for n in FLEETS) + " |")
    add("")
    add(
        "One composite alarm over the whole fleet instead costs "
        + ", ".join(f"{_usd(2 * n * PRICES['alarm'].usd + PRICES['composite_alarm'].usd)} ({n:,})" for n in FLEETS)
        + ", but loses the per-runner-type AND, and a composite rule holds at most 10,240 characters "
        "(a few hundred alarm names). Alarms keep no alert state across runner types, page once per alarm "
        "rather than once per incident, and say nothing about why jobs queue.\n"
    )
    add("## Assumptions\n")
    add(f"- **Prices**, us-east-1 list prices as of {PRICES_AS_OF}, looked up with the project's search tool in")
    add(
        "  copies of the AWS pricing pages and of summaries quoting them (not the live pages; check them before "
        "budgeting):"
    )
    for price in PRICES.values():
        add(f"  - {price} ({price.source})")
    add(
        "  DynamoDB's on-demand prices are those after its November 2024 reduction; "
        "a strongly consistent read of up to 4 KB is one read request unit."
    )
    add(
        f"- **Lambda duration** is the handlers' own CPU time the benchmark measured per tick (in the ticks "
        "through the latency proxy, whose connections stay open as AWS's do), scaled to the function's share of "
        f"a vCPU (MemorySize / {VCPU_MB:,} MB, at most one vCPU for one Python process; collect "
        f"{memory['collect']:,} MB, evaluate {memory['evaluate']:,} MB, from template.yaml), plus "
        f"{AWS_LATENCY_S * 1000:.0f} ms of AWS latency per sequential round of calls (64 concurrent "
        "GetQueueAttributes to a round), counted without overlap: an upper estimate. The bill is tracking off's "
        "(every queue read every tick); tracking on reads fewer (see the collector's Lambda time above)."
    )
    add(
        "- **GetMetricData** asks, first, the AWS/SQS age of each queue that holds a job (an empty queue's "
        "oldest job is 0 old), so most of this line scales with how many queues have jobs waiting at a tick: "
        f"{fleets[1000]['queued'] / fleets[1000]['runner_types']:.0%} here. If every queue held jobs at every "
        "tick, the ages would cost "
        + ", ".join(f"{_usd(n * TICKS_PER_MONTH * PRICES['metrics_requested'].usd)} ({n:,})" for n in FLEETS)
        + " a month. Then it asks the triage's evidence, only for the runner types that breach a rule "
        f"({fleets[1000]['firing'] / fleets[1000]['runner_types']:.0%} here, also in the worst-case rows): one "
        "query each with the benchmark's config (the queue-depth history), three with config/queuewatch.yaml "
        "(with arrivals and deletes), one more per triage signal the config adds. Asked for every queue that "
        "holds jobs instead, each evidence query would cost as much again as the ages."
    )
    add(
        f"- **State changes**: steady ticks write nothing (measured). Each runner type is assumed to fire and "
        f"resolve {EPISODES_PER_RUNNER_TYPE} times a month, each change costing the writes the benchmark's first "
        "tick measured per firing runner type, and each paging twice (upper bound: grouping shares pages)."
    )
    add(
        f"- **Logs**: the bytes both functions wrote per steady tick (log lines and EMF), plus "
        f"{PLATFORM_LOG_BYTES} bytes a tick of Lambda's own START/END/REPORT lines. Storage ($0.03 per GB-month, "
        "30-day retention) adds about 6% of the ingestion line."
    )
    add(
        "- **Custom metrics**: CloudWatch bills an EMF metric for each hour it receives data. queuewatch emits "
        "QueueSize and QueueTime per runner type only while jobs wait; the line assumes the runner types "
        "that wait at any tick are the same all month. If every runner type had a job waiting in every hour, "
        "it would be "
        + ", ".join(f"{_usd(2 * n * PRICES['custom_metric'].usd)} ({n:,})" for n in FLEETS)
        + " a month: the largest line at scale. Graphs fill the gaps with FILL(m, 0). The template's "
        "`RunnerTypeMetrics` parameter bounds it: `alerting` emits them only for runner types in a pending or "
        "firing alert (the worst-case row assumes the benchmark's 1% firing), `off` never; pages, triage and "
        "the heartbeat do not depend on them."
    )
    add(
        "- Not counted: EventBridge scheduled rules (no charge), SNS deliveries to subscribers (the same for "
        "either option), data transfer within the region, DynamoDB storage and backups of a few kilobytes."
    )
    add("")
    out += tracking_section()
    out += words_section()
    out += forecast_section()
    return "\n".join(out)


# Job tracking's month (tracking_lines): what bench/track.py measured, times these.
TRACK_MEMORY_MB = 256  # template.yaml, TrackFunction
EVENTS_PER_JOB = 3  # queued, in_progress, completed (waiting only behind a deployment approval)
INDEX_WRITES_PER_JOB = 4  # into the history index's queued partition; out of it and into its day's at the start;
# updated at completion (queuewatch/model/jobs.py)
ITEM_OVERHEAD_BYTES = 100  # DynamoDB's per-item storage overhead, in the table and again in the index
TRIAGE_SPAN_S = 900 + 10800  # the triage's window and baseline by default (15m, 3h): what its evidence reads
BREACHING_SHARE = 0.01  # of runner types breaching a rule at a tick, on every tick (the benchmark's firing share)
HISTORY_SHARDS = 16  # queuewatch/model/jobs.py
LONG_HISTORY_DAYS = 90  # the longest history the docs price and the bench measures capacity over


def tracking_lines(figures: dict[str, Any]) -> list[tuple[str, float, str]]:
    """Tracking's month, line by line (item, dollars, on what), from bench/track.json's measured figures: the
    track handler's CPU an event, a job item's size as DynamoDB counts it, jobs a day, the history's days."""
    days = 730 / 24
    jobs_per_day, item = figures["jobs_per_day"], figures["item_bytes"]
    history_days = figures.get("history_days", 14)
    events = jobs_per_day * EVENTS_PER_JOB * days
    seconds = figures["cpu_ms"] / 1000 * VCPU_MB / TRACK_MEMORY_MB + AWS_LATENCY_S  # one write a round trip
    write_units = -(-item // 1024)  # per write, per 1 KB
    writes = (events + jobs_per_day * INDEX_WRITES_PER_JOB * days) * write_units
    queued = figures["queued"]
    collector_units = max(0.5, queued * item / 4096 * 0.5)  # eventually consistent: 0.5 a 4 KB
    pages = max(1, -(-queued * item // 1_000_000))
    # The triage's evidence, on every tick that some runner type breaches (here: every tick): the jobs of the
    # window and baseline in the shards the breaching runner types hash to, each Query at least 0.5 unit.
    breaching = max(1.0, BREACHING_SHARE * figures["runner_types"])
    shards = HISTORY_SHARDS * (1 - (1 - 1 / HISTORY_SHARDS) ** breaching)
    in_span = jobs_per_day * TRIAGE_SPAN_S / 86400 * shards / HISTORY_SHARDS
    queries = shards * (1 + TRIAGE_SPAN_S / 86400)  # a span crossing midnight reads two days
    triage_units = in_span * item / 4096 * 0.5 + queries * 0.5
    stored_gb = jobs_per_day * history_days * (item + ITEM_OVERHEAD_BYTES) * 2 / 1e9  # the table and its index
    metrics = 3 * figures["runner_types"] * PRICES["custom_metric"].usd
    return [
        ("Lambda requests", events * PRICES["lambda_request"].usd, f"{events:,.0f} events"),
        (
            "Lambda GB-seconds",
            events * seconds * TRACK_MEMORY_MB / 1024 * PRICES["lambda_gb_second"].usd,
            f"{seconds * 1000:.0f} ms an event at {TRACK_MEMORY_MB} MB",
        ),
        (
            "DynamoDB writes (table and history index)",
            writes * PRICES["dynamodb_write"].usd,
            f"{write_units} write unit(s) an event, {INDEX_WRITES_PER_JOB} index writes a job",
        ),
        (
            "DynamoDB reads (the collector's queued jobs)",
            TICKS_PER_MONTH * collector_units * PRICES["dynamodb_read"].usd,
            f"{queued:,} jobs queued at every tick: {pages} Query page(s)",
        ),
        (
            "DynamoDB reads (the triage's evidence from the history)",
            TICKS_PER_MONTH * triage_units * PRICES["dynamodb_read"].usd,
            f"{breaching:g} runner type(s) breaching at every tick: {in_span:,.0f} jobs of "
            f"{TRIAGE_SPAN_S // 60}m in {shards:.1f} of {HISTORY_SHARDS} shards, {triage_units:.0f} read units",
        ),
        (
            "DynamoDB storage (the history)",
            stored_gb * PRICES["dynamodb_storage"].usd,
            f"{history_days} days of jobs, {stored_gb:.2f} GB with the index",
        ),
        (
            "Job metrics per runner type",
            metrics if figures.get("job_metrics") == "on" else 0.0,
            f"JobMetrics off (the default); on: {_usd(metrics)}, JobsQueued, JobQueueTime, JobRunTime for "
            f"{figures['runner_types']} runner types",
        ),
    ]


# Queue-time SLOs (slo_lines): adapters/slo_table/counters.py's writes and alerting/slo_reading.py's reads.
SLO_ITEMS_PER_JOB = 2  # a job's mark and one hour's counter per SLO that counts it, in one transaction
SLO_MARK_DAYS = 14 + 1  # a mark is kept the jobs' history and a day (track/slo.py)
SLO_HOURS_READ = 3 * 24 + 1  # the longest burn window (3d) in hours, read by one Query a tick
SLO_COUNTER_BYTES = 700  # an hour's item with every minute counted (bench/slo_calls.py): keys, totals, minutes
SLO_MARK_BYTES = 60
SLO_CALL_S = 0.015  # one TransactWriteItems round trip in the track function, one Query in the collector
COLLECT_MEMORY_MB = 1769  # template.yaml, CollectFunction
SLO_WINDOW_DAYS = 28  # an SLO's window by default: `queuewatch slo` reads its jobs from the history
SLO_TARGET_USD = 5.0  # the month one SLO may add at 150 runner types and 50,000 jobs a day


def slo_lines(figures: dict[str, Any], slos: int = 1) -> list[tuple[str, float, str]]:
    """The month that `slos` SLOs add (each job counted by all of them), at bench/track.json's jobs a day:
    a transactional write is two write units a 1 KB item; the read is eventually consistent."""
    days = 730 / 24
    jobs = figures["jobs_per_day"] * days
    write_units = jobs * 2 * (1 + slos)
    read_units = slos * max(0.5, SLO_HOURS_READ * SLO_COUNTER_BYTES / 4096 * 0.5)
    marks_gb = figures["jobs_per_day"] * SLO_MARK_DAYS * (SLO_MARK_BYTES + ITEM_OVERHEAD_BYTES) / 1e9
    track_s, collect_s = jobs * SLO_CALL_S, TICKS_PER_MONTH * slos * SLO_CALL_S
    gb_seconds = track_s * TRACK_MEMORY_MB / 1024 + collect_s * COLLECT_MEMORY_MB / 1024
    # The window's jobs kept in the history (config/slos.py `history_days_needed`: the window and a day).
    history_days, needed = figures.get("history_days", 14), SLO_WINDOW_DAYS + 1
    item = figures["item_bytes"] + ITEM_OVERHEAD_BYTES
    history_gb = figures["jobs_per_day"] * max(0, needed - history_days) * item * 2 / 1e9  # the table and its index
    return [
        (
            "SLO counters: writes (a job's mark and its counters, one transaction)",
            write_units * PRICES["dynamodb_write"].usd,
            f"{SLO_ITEMS_PER_JOB + slos - 1} items a job, 2 write units each",
        ),
        (
            "SLO counters: the collector's reads",
            TICKS_PER_MONTH * read_units * PRICES["dynamodb_read"].usd,
            f"one Query of {SLO_HOURS_READ} hours (each with its minutes) per SLO a tick",
        ),
        ("SLO counters: storage", marks_gb * PRICES["dynamodb_storage"].usd, f"{marks_gb:.2f} GB of marks"),
        (
            "SLO counters: Lambda time",
            gb_seconds * PRICES["lambda_gb_second"].usd,
            f"{SLO_CALL_S * 1000:.0f} ms a call, a job's write and a tick's Query",
        ),
        (
            f"The jobs' history for a {SLO_WINDOW_DAYS}-day window (JobHistoryDays {needed}, not {history_days})",
            history_gb * PRICES["dynamodb_storage"].usd,
            f"{history_gb:.2f} GB more with the index",
        ),
    ]


def tracking_section(path: Path = TRACK_RESULTS) -> list[str]:
    """Job tracking's month, from the figures `python -m bench.track` measured (bench/track.json)."""
    if not path.exists():
        return []
    figures = json.loads(path.read_text(encoding="utf-8"))
    figures.setdefault("queued", 2_000)
    lines = tracking_lines(figures)
    reads = figures.get("history_reads", {})
    read_text = (
        " The triage's evidence from the history, with tracking on and every runner type with jobs queued "
        "breaching: "
        + ", ".join(
            f"{calls} `Query` at {int(size):,} runner types"
            for size, calls in sorted(reads.items(), key=lambda kv: int(kv[0]))
        )
        + " (one per day and history shard the breaching runner types hash to, at most 2 x 16)."
        if reads
        else ""
    )
    rows = [
        "## Job tracking",
        "",
        f"With tracking on (`AutoscalerEventBusName` or `WebhookSecretArn`), at {figures['jobs_per_day']:,} jobs "
        f"a day and {figures['runner_types']} runner types with jobs in a month, from `python -m bench.track`: "
        f"the track handler took {figures['cpu_ms']:.1f} ms of CPU an event (its own and botocore's; DynamoDB a moto "
        "server in its own process), a job's item is "
        f"{figures['item_bytes']} bytes as DynamoDB counts it, and the collector's reads of the jobs queued now "
        f"stay at {figures['collector_queries']} `Query` a tick from 10 to 5,000 runner types.{read_text} "
        "The jobs are kept as a history for `JobHistoryDays` (14 by default); the triage reads its arrivals and "
        "run times from it, so the per-runner-type job metrics are an option (`JobMetrics`), off by default.",
        "",
        "| monthly | $ | on what |",
        "|---|---:|---|",
    ]
    rows += [f"| {item} | {_usd(usd)} | {basis} |" for item, usd, basis in lines]
    rows += [f"| **total** | **{_usd(sum(usd for _, usd, _ in lines))}** | |", ""]
    longer = [line for line in tracking_lines({**figures, "history_days": LONG_HISTORY_DAYS}) if "storage" in line[0]]
    whole = figures["jobs_per_day"] * LONG_HISTORY_DAYS * figures["item_bytes"] / 4096 * 0.5  # eventually consistent
    for item, usd, basis in longer:  # the one line a longer history changes: its reads are by day, not by range
        rows += [
            f"A longer history (`JobHistoryDays` {LONG_HISTORY_DAYS}, for 28-day backtests and capacity over a "
            f"quarter) changes one line: {item}, {_usd(usd)} a month ({basis}). The collector and the "
            "triage read by day, so their reads do not grow with it; a backtest or `capacity` over the whole history "
            f"reads every job once: about {whole:,.0f} read units, {_usd(whole * PRICES['dynamodb_read'].usd)} a "
            "reading (one `Query` per day and history shard).",
            "",
        ]
    slo = slo_lines(figures)
    rows += [
        "With `slos:` in the config, each job is counted once for its SLOs (one SLO counting every job below; "
        f"each more SLO that counts it adds {_usd(slo_lines(figures, 2)[0][1] - slo[0][1])} of writes):",
        "",
        "| monthly | $ | on what |",
        "|---|---:|---|",
    ]
    rows += [f"| {item} | {_usd(usd)} | {basis} |" for item, usd, basis in slo]
    total = sum(usd for _, usd, _ in slo)
    verdict = "PASS" if total <= SLO_TARGET_USD else "FAIL"
    rows += [f"| **SLOs, total** | **{_usd(total)}** | {verdict}: the target is at most {_usd(SLO_TARGET_USD)} |", ""]
    return rows


def measured_section(results: dict[str, Any]) -> str:
    """The benchmark's own figures per steady tick, that the bill above multiplies."""
    rows = [
        "## What the benchmark measured\n",
        "Per steady tick against a moto server on 127.0.0.1 (a real HTTP round trip per call; moto's one "
        "server process, not AWS, sets the wall time), median of several ticks; calls are per tick and "
        "equal the minimum in every fleet (`make bench` prints both). Peak memory is the cold first tick's, "
        "in a fresh interpreter.\n",
        "| runner types | tick: collect + evaluate | naive watcher | GetQueueAttributes | GetMetricData "
        "(metrics) | DynamoDB Query (read units) | writes, publishes | snapshot sent | peak memory "
        "collect / evaluate |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, fleet in results["fleets"].items():
        ours = fleet["ours"]
        calls: dict[str, int] = {}
        for stage in ("collect", "evaluate"):
            for name, count in ours[stage]["calls"].items():
                calls[name] = calls.get(name, 0) + count
        naive = fleet.get("naive")
        naive_text = f"{naive['wall_s']:.2f} s (ours {fleet['ratio']:.2f}×)" if naive else "not run"
        snapshot = ours["snapshot"]
        encoding = "gzip" if snapshot["encoding"] != "plain" else "plain"
        rows.append(
            f"| {int(size):,} | {ours['collect']['wall_s']:.2f} + {ours['evaluate']['wall_s']:.2f} s | {naive_text} "
            f"| {calls.get('sqs.GetQueueAttributes', 0):,} | {calls.get('cloudwatch.GetMetricData', 0)} "
            f"({ours['collect']['metrics_requested']:,}) | {calls.get('dynamodb.Query', 0)} "
            f"({ours['state']['read_units']}) | {ours['writes']}, {ours['publishes']} "
            f"| {snapshot['sent_bytes'] / 1024:,.1f} KiB {encoding} (of {snapshot['plain_bytes'] / 1024:,.0f} KiB) "
            f"| {ours['cold']['collect']['peak_rss_mb']:.0f} / {ours['cold']['evaluate']['peak_rss_mb']:.0f} MB |"
        )
    imports = results["imports"]
    rows.append(
        f"\nCold-start import, CPU time in fresh interpreters: `import boto3` {imports['import boto3']['ms']:.0f} ms, "
        f"collect handler {imports['collect handler']['ms']:.0f} ms "
        f"({imports['collect handler']['ratio']:.2f}×), evaluate handler {imports['evaluate handler']['ms']:.0f} ms "
        f"({imports['evaluate handler']['ratio']:.2f}×). boto3, the Powertools Logger and Parser (pydantic) alone, "
        f"before any queuewatch code: {imports['libraries alone']['ms']:.0f} ms "
        f"({imports['libraries alone']['ratio']:.2f}×).\n"
    )
    return "\n".join(rows)


def lambda_section(results: dict[str, Any]) -> str:
    """The collector's Lambda time per tick, tracking off and on, and what memory buys at the largest fleet."""
    memory = int(results["memory_mb"]["collect"])
    rows = [
        "## The collector's Lambda time per tick\n",
        f"Estimated from the handlers' own CPU per steady tick (not wall time, which moto's server and the "
        f"machine's load set), at the template's {memory:,} MB ({memory / VCPU_MB:.2f} vCPU), plus "
        f"{AWS_LATENCY_S * 1000:.0f} ms per "
        "sequential round of calls. Every queue is read every tick, tracking off or on (with tracking the "
        "jobs and the queue check each other, and a rule judges the worse of the two).\n",
        "| runner types | tracking off: collect | GetQueueAttributes | tracking on: collect | GetQueueAttributes "
        "| Lambda $ a month (collect, tracking off) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for size, fleet in results["fleets"].items():
        estimates = lambda_estimates(fleet)
        off = estimates["tracking off"]["collect"]
        tracked = fleet.get("tracked")
        on_text, on_reads = "-", "-"
        if tracked and "tracking on" in estimates:
            on_text = f"{estimates['tracking on']['collect']:.2f} s"
            on_reads = f"{tracked['collect']['calls'].get('sqs.GetQueueAttributes', 0):,}"
        usd = off * memory / 1024 * TICKS_PER_MONTH * PRICES["lambda_gb_second"].usd
        reads = fleet["ours"]["collect"]["calls"].get("sqs.GetQueueAttributes", 0)
        rows.append(f"| {int(size):,} | {off:.2f} s | {reads:,} | {on_text} | {on_reads} | {_usd(usd)} |")
    largest = max(results["fleets"], key=int)
    fleet = results["fleets"][largest]
    cpu = float(fleet["latency"]["ours"].get("collect_cpu_s", fleet["ours"]["collect"]["cpu_s"]))
    calls = fleet["ours"]["collect"]["calls"]
    waits = rounds(calls) * AWS_LATENCY_S
    rows.append(
        f"\nWhat memory buys at {int(largest):,} runner types, tracking off ({cpu:.2f} s of collect CPU a tick on a "
        "full core; the same CPU-seconds cost the same at any size, only the waits on AWS cost more with more "
        "memory):\n"
    )
    rows.append("| MemorySize | vCPU | collect per tick | GB-seconds a month | $ a month |")
    rows.append("|---:|---:|---:|---:|---:|")
    for size_mb, processes in ((1024, 1), (1769, 1), (3538, 2)):
        seconds = cpu * cpu_scale(size_mb) / processes + waits / processes
        gb_seconds = seconds * size_mb / 1024 * TICKS_PER_MONTH
        label = f"{size_mb:,}" + (" (two processes: not built)" if processes == 2 else "")
        rows.append(
            f"| {label} | {size_mb / VCPU_MB:.2f} | {seconds:.2f} s | {gb_seconds:,.0f} | "
            f"{_usd(gb_seconds * PRICES['lambda_gb_second'].usd)} |"
        )
    rows.append(
        "\nA second vCPU helps only a second process (Python's threads share one core): the last row is what "
        "splitting the queue reads over two processes would give, priced, not measured.\n"
    )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--out", type=Path, default=COST_DOC)
    args = parser.parse_args(argv)
    results = json.loads(args.results.read_text(encoding="utf-8"))
    missing = {10, 100, 1000} - {int(n) for n in results["fleets"]}
    if missing:
        raise SystemExit(f"{args.results}: needs the fleets {sorted(missing)}; run `make bench` first")
    args.out.write_text(render(results), encoding="utf-8")
    print(f"wrote {args.out.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
