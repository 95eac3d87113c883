"""The triage, on snapshots where each cause is the true one: it is named first, with its numbers."""

from __future__ import annotations

import pytest
from support import count, level, runner_type, with_signals

from queuewatch.alerting.triage import triage
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

WINDOW, BASELINE = 900, 10800
QUEUEING = runner_type("linux.2xlarge", 14, 114 * 60)


def explain(rt: RunnerTypeSnapshot) -> list[tuple[str, str]]:
    return [(f.cause, f.detail) for f in triage(rt, window=WINDOW, baseline=BASELINE).findings]


SCENARIOS = {
    # The seed incident on the fork: 14 jobs, the oldest 114 minutes old, and the autoscaler capped.
    "the 114-minute incident, at the maximum": (
        with_signals(
            QUEUEING,
            total_runners=level(40),
            busy_runners=level(40),
            idle_runners=level(0),
            max_hit=count(12, 0),
            creation_failures=count(0, 0),
            job_arrivals=count(14, 12),
        ),
        "at_max",
        ["refused 12 scale-ups at its maximum in 15m"],
    ),
    "saturated": (
        with_signals(QUEUEING, total_runners=level(40), busy_runners=level(40), idle_runners=level(0)),
        "saturated",
        ["40 of 40 runners busy (100%)"],
    ),
    "at the maximum by count": (
        with_signals(QUEUEING, total_runners=level(64), busy_runners=level(64), max_runners=level(64)),
        "at_max",
        ["64 runners, the autoscaler's maximum is 64"],
    ),
    "arrival surge": (
        with_signals(
            QUEUEING, job_arrivals=count(60, 12), total_runners=level(40), busy_runners=level(40), max_runners=level(80)
        ),
        "arrival_surge",
        ["60 jobs arrived in 15m", "5.0x the usual 12 per 15m over the 3h before"],
    ),
    "runner creation failing": (
        with_signals(
            QUEUEING,
            creation_failures=count(9, 0),
            ec2_exceptions=Reading(
                value=9,
                window_sum=9,
                baseline_sum=0,
                by_name={"InsufficientInstanceCapacity": 7, "VcpuLimitExceeded": 2},
                fleet_wide=True,
            ),
            total_runners=level(10),
            busy_runners=level(10),
        ),
        "scale_up_failing",
        ["9 runner creations failed in 15m", "(fleet-wide): InsufficientInstanceCapacity 7, VcpuLimitExceeded 2"],
    ),
    "scale-up stalled: the queue grows while the consumer's throughput drops": (
        with_signals(
            runner_type("linux.2xlarge", 14, 114 * 60),
            queue_size=level(14, first=3, last=14),
            jobs_dequeued=count(0, 21),
            job_arrivals=count(12, 11),
        ),
        "scale_up_failing",
        [
            "the queue grew from 3 to 14 jobs in 15m while the scale-up consumer dequeued 0 (usually 21 per 15m)",
            "or the autoscaler is at its maximum with ephemeral runners, which hand requests back to the queue "
            "(with non-ephemeral runners upstream deletes them instead: the queue empties)",
        ],
    ),
    "idle runners not taking jobs": (
        with_signals(
            QUEUEING,
            queue_size=level(9, first=2, last=9),
            idle_runners=level(5),
            total_runners=level(10),
            busy_runners=level(5),
            job_arrivals=count(9, 8),
        ),
        "idle_not_taking_jobs",
        ["5 idle runners while the queue grew from 2 to 9 jobs in 15m"],
    ),
    "jobs running longer": (
        with_signals(QUEUEING, job_duration=level(2400, mean=900), total_runners=level(40), busy_runners=level(40)),
        "jobs_longer",
        ["jobs take 40m, 2.7x the usual 15m"],
    ),
    "runners short of memory and disk": (
        with_signals(
            QUEUEING,
            cpu_used=level(64, mean=60),
            memory_used=level(97.4, mean=71),
            disk_used=Reading(value=93, age_seconds=60, fleet_wide=True),
            total_runners=level(40),
            busy_runners=level(40),
        ),
        "short_of_resources",
        ["memory 97% used (usually 71%)", "disk 93% used (fleet-wide)", "at or above 90%"],
    ),
    "no data or stale data": (
        with_signals(
            QUEUEING,
            busy_runners=Reading.missing("stale: the last datapoint is 47m old, beyond metric_lookback 10m"),
            total_runners=Reading.missing("no datapoints in the last 3h15m"),
        ),
        "no_data",
        ["busy_runners: stale: the last datapoint is 47m old", "total_runners: no datapoints in the last 3h15m"],
    ),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_true_cause_is_named_first_with_its_numbers(name: str) -> None:
    rt, cause, numbers = SCENARIOS[name]
    findings = explain(rt)
    assert findings, name
    first_cause, detail = findings[0]
    assert first_cause == cause
    for number in numbers:
        assert number in detail


def test_the_seed_incident_lists_saturation_after_the_maximum() -> None:
    rt, _, _ = SCENARIOS["the 114-minute incident, at the maximum"]
    assert [cause for cause, _ in explain(rt)] == ["at_max", "saturated"]


def test_missing_signals_come_last_when_something_else_explains_the_queue() -> None:
    rt = with_signals(
        QUEUEING,
        total_runners=level(64),
        max_runners=level(64),
        busy_runners=Reading.missing("GetMetricData returned Forbidden"),
    )
    assert [cause for cause, _ in explain(rt)] == ["at_max", "no_data"]


def test_a_queue_whose_oldest_job_aged_through_the_window_counts_as_growing() -> None:
    rt = with_signals(
        runner_type("linux.2xlarge", 14, None),
        queue_time=level(114 * 60, first=99 * 60),
        jobs_dequeued=count(0, 20),
    )
    [(cause, detail)] = explain(rt)
    assert cause == "scale_up_failing"
    assert "the oldest job aged from 1h39m to 1h54m without being taken" in detail


@pytest.mark.parametrize(
    ("arrived", "usual", "surge"),
    [(14, 12, False), (24, 12, True), (23, 12, False), (6, 0, True), (4, 0, False)],
)
def test_a_surge_is_twice_the_usual_and_five_jobs_more(arrived: float, usual: float, surge: bool) -> None:
    rt = with_signals(QUEUEING, job_arrivals=count(arrived, usual))
    assert [cause for cause, _ in explain(rt)] == (["arrival_surge"] if surge else [])


def test_a_throughput_that_holds_is_no_stall() -> None:
    rt = with_signals(QUEUEING, queue_size=level(14, first=3, last=14), jobs_dequeued=count(18, 21))
    assert explain(rt) == []


def test_idle_runners_without_a_growing_queue_are_no_finding() -> None:
    rt = with_signals(QUEUEING, queue_size=level(14, first=14, last=14), idle_runners=level(3))
    assert explain(rt) == []


@pytest.mark.parametrize(("cpu", "short"), [(89.9, False), (90, True), (100, True)])
def test_a_resource_is_short_from_ninety_percent_used_and_only_its_numbers_are_named(cpu: float, short: bool) -> None:
    rt = with_signals(QUEUEING, cpu_used=level(cpu), memory_used=level(40), disk_used=level(12))
    findings = triage(rt, window=WINDOW, baseline=BASELINE).findings
    assert [(f.cause, f.evidence) for f in findings] == (
        [("short_of_resources", {"cpu_used_percent": cpu})] if short else []
    )
    if short:
        assert findings[0].title == "Runners short of CPU, memory or disk"
        assert findings[0].detail.startswith(f"CPU {cpu:.0f}% used;") and "memory" not in findings[0].detail


def test_what_the_configured_signals_cannot_show_is_listed_as_not_checked() -> None:
    sqs_only = with_signals(QUEUEING, job_arrivals=count(1, 1), jobs_dequeued=count(1, 1))
    not_checked = triage(sqs_only, window=WINDOW, baseline=BASELINE).not_checked
    assert [item.split(":")[0] for item in not_checked] == [
        "Idle runners not taking jobs",
        "At the autoscaler's maximum",
        "Jobs running longer",
        "Runners short of CPU, memory or disk",
        "Saturated",
    ]
    assert "needs max_hit, or max_runners with total_runners" in not_checked[1]
    everything = with_signals(
        sqs_only,
        total_runners=level(1),
        busy_runners=level(1),
        max_hit=count(0, 0),
        job_duration=level(60, mean=60),
        disk_used=level(40),
    )
    assert triage(everything, window=WINDOW, baseline=BASELINE).not_checked == []
