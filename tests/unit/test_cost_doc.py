"""docs/COST.md is what bench/cost.py makes of the committed benchmark figures, and its sums add up."""

from __future__ import annotations

import json

import pytest
from support import load_template

from bench.cost import (
    COST_DOC,
    LONG_HISTORY_DAYS,
    PRICES,
    RESULTS,
    TICKS_PER_MONTH,
    TRACK_RESULTS,
    alarm_lines,
    per_tick,
    queuewatch_lines,
    render,
    slo_lines,
    tracking_lines,
)


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    return json.loads(RESULTS.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_cost_doc_is_generated_from_the_committed_results(results: dict[str, object]) -> None:
    assert COST_DOC.read_text(encoding="utf-8") == render(results), "run `make cost` after `make bench`"


def test_each_line_is_a_measured_count_per_tick_times_the_ticks_of_a_month(results: dict[str, object]) -> None:
    figures = per_tick(results, 1000)
    lines = {line.item: line for line in queuewatch_lines(figures, results["memory_mb"])}  # type: ignore[arg-type]
    metrics = lines["GetMetricData metrics requested"]
    assert metrics.quantity == figures["metrics_requested"] * TICKS_PER_MONTH
    assert metrics.usd == pytest.approx(metrics.quantity * 0.01 / 1000)
    assert lines["GetQueueAttributes and ListQueues"].quantity >= 1000 * TICKS_PER_MONTH


def test_150_runner_types_lie_between_the_measured_100_and_1000(results: dict[str, object]) -> None:
    low, mid, high = (per_tick(results, n) for n in (100, 150, 1000))
    for key in ("sqs_requests", "collect_s", "log_bytes"):
        assert low[key] <= mid[key] <= high[key]
    assert mid["get_queue_attributes"] == pytest.approx(150)


def test_the_alarm_alternative_is_two_alarms_and_a_composite_per_runner_type() -> None:
    assert sum(line.usd for line in alarm_lines(1000)) == pytest.approx(
        1000 * (2 * PRICES["alarm"].usd + PRICES["composite_alarm"].usd)
    )


def test_runner_type_metrics_bound_the_worst_case_custom_metrics(results: dict[str, object]) -> None:
    figures = per_tick(results, 1000)
    memory = results["memory_mb"]

    def own_metrics(mode: str) -> float:
        lines = queuewatch_lines(figures, memory, all_busy=True, runner_type_metrics=mode)  # type: ignore[arg-type]
        [line] = [line for line in lines if line.item.startswith("EMF custom metrics: per runner type")]
        return line.quantity

    assert own_metrics("queued") == pytest.approx(2 * 1000)  # every runner type, both metrics
    assert own_metrics("alerting") == pytest.approx(2 * figures["firing"])
    assert own_metrics("off") == 0


def test_the_bill_counts_every_paid_resource_the_template_creates(results: dict[str, object]) -> None:
    """The stack's own key, alarms and dashboard are billed whatever the fleet: each is a line of the month."""
    lines = {line.price: line for line in queuewatch_lines(per_tick(results, 10), results["memory_mb"])}  # type: ignore[arg-type]
    assert lines["kms_key"].quantity == 1 and lines["kms_key"].usd == PRICES["kms_key"].usd
    assert lines["kms_request"].quantity > 0


def test_tracking_keeps_within_ten_dollars_at_150_runner_types_and_50000_jobs_a_day() -> None:
    figures = json.loads(TRACK_RESULTS.read_text(encoding="utf-8"))
    assert (figures["runner_types"], figures["jobs_per_day"], figures["history_days"]) == (150, 50_000, 14)
    lines = {item: usd for item, usd, _ in tracking_lines(figures)}
    assert sum(lines.values()) <= 10.0
    assert lines["Job metrics per runner type"] == 0  # JobMetrics off by default: the triage reads the history
    with_metrics = {item: usd for item, usd, _ in tracking_lines({**figures, "job_metrics": "on"})}
    assert with_metrics["Job metrics per runner type"] == pytest.approx(3 * 150 * 0.30)


def test_the_history_costs_four_index_writes_a_job_beside_one_write_an_event() -> None:
    figures = {"jobs_per_day": 1_000_000 / (730 / 24), "runner_types": 1, "queued": 0, "cpu_ms": 0, "item_bytes": 500}
    lines = {item: usd for item, usd, _ in tracking_lines(figures)}
    # a million jobs a month: 3 million events and 4 million index writes, at $0.625 per million
    assert lines["DynamoDB writes (table and history index)"] == pytest.approx(7 * 0.625)


def test_one_slo_adds_at_most_five_dollars_at_150_runner_types_and_50000_jobs_a_day() -> None:
    figures = json.loads(TRACK_RESULTS.read_text(encoding="utf-8"))
    lines = {item: usd for item, usd, _ in slo_lines(figures)}
    assert sum(lines.values()) <= 5.0
    # A 28-day window keeps 15 more days of jobs than the default 14: $0.015 a day at 50,000 jobs a day.
    history = "The jobs' history for a 28-day window (JobHistoryDays 29, not 14)"
    assert lines[history] == pytest.approx(15 * 50_000 * (figures["item_bytes"] + 100) * 2 / 1e9 * 0.25)
    assert "| PASS: the target is at most $5.00 |" in COST_DOC.read_text(encoding="utf-8")
    # 1.52 million jobs a month, each a transaction of two items at two write units: $0.625 a million
    jobs = 50_000 * 730 / 24
    assert lines["SLO counters: writes (a job's mark and its counters, one transaction)"] == pytest.approx(
        jobs * 4 * 0.625 / 1e6
    )


def test_the_longer_history_priced_is_one_the_stack_keeps() -> None:
    """docs/COST.md prices 90 days and make bench measures capacity over them: JobHistoryDays takes 90, and so does
    the track stage's setting it becomes."""
    from queuewatch.runtime.settings import TrackSettings

    days = load_template()["Parameters"]["JobHistoryDays"]
    assert LONG_HISTORY_DAYS == 90 and days["MinValue"] <= LONG_HISTORY_DAYS <= days["MaxValue"]
    kept = {"JOB_HISTORY_DAYS": LONG_HISTORY_DAYS, "JOBS_TABLE": "jobs", "QUEUEWATCH_CONFIG": "config.yaml"}
    assert TrackSettings.model_validate(kept).history_days == LONG_HISTORY_DAYS
