"""The bench's own arithmetic and verdicts: the latency floor, the time-to-page models, steady-tick checks."""

from __future__ import annotations

import pytest

from bench.capacity import LAPTOP_CPU_SECONDS, laptop_days, verdict
from bench.fleet import Fleet
from bench.floor import Rounds, TickShape, rounds
from bench.latency_proxy import operation_of, parse_api_latencies
from bench.report import missed
from bench.run import steady_failures
from bench.time_to_page import alarm_fires_at, cron_fires_at, first_breaching_sample, within_a_tick


def test_the_floor_counts_rounds_that_cannot_overlap() -> None:
    shape = TickShape(
        queues={"us-east-1": 500, "us-west-2": 500},
        judged_metrics={"us-east-1": 50, "us-west-2": 50},
        evidence_metrics={"us-east-1": 5, "us-west-2": 5},
    )
    got = rounds(shape, concurrency=32)
    # one ListQueues page per region side by side, ceil(1000/32) reads, one call per GetMetricData round,
    # the evaluator's one Query
    assert got == Rounds(listing=1, queue_reads=32, judged_metrics=1, evidence_metrics=1, evaluate=1)
    assert got.floor_s(0.015) == pytest.approx(36 * 0.015)


def test_large_fleets_page_their_listing_and_chunk_their_metrics_per_region() -> None:
    shape = TickShape(
        queues={"us-east-1": 2500, "us-west-2": 10},
        judged_metrics={"us-east-1": 1001, "us-west-2": 0},
        evidence_metrics={"us-east-1": 0, "us-west-2": 0},
    )
    got = rounds(shape, concurrency=32)
    assert (got.listing, got.queue_reads, got.judged_metrics, got.evidence_metrics) == (3, 79, 3, 0)


def test_a_tick_with_nothing_breaching_skips_the_evidence_round() -> None:
    quiet = TickShape(queues={"us-east-1": 10}, judged_metrics={"us-east-1": 1}, evidence_metrics={"us-east-1": 0})
    assert rounds(quiet, 32).evidence_metrics == 0
    fleet = Fleet(1000).tick_shape()  # 10 firing, 5 in each region: one call each, side by side
    assert fleet.evidence_metrics == {"us-east-1": 5, "us-west-2": 5}
    assert rounds(fleet, 32).evidence_metrics == 1


def test_concurrency_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        rounds(Fleet(10).tick_shape(), 0)


def test_the_alarm_needs_its_three_datapoints_readable() -> None:
    # first breaching sample at 120 s, lag 60 s: the third sample (240 s) is readable at 300 s
    assert alarm_fires_at(120, 60) == 300
    assert alarm_fires_at(120, 90) == 360  # evaluated on the minute after it is readable


def test_the_cron_pages_at_its_first_run_after_the_breach_is_readable() -> None:
    assert cron_fires_at(301) == 600
    assert cron_fires_at(300) == 300


def test_the_first_breaching_sample_is_the_first_minute_the_age_exceeds_the_threshold() -> None:
    assert first_breaching_sample(enqueued_s=25, threshold_s=60) == 120  # age 95 s at 120 s
    assert first_breaching_sample(enqueued_s=0, threshold_s=60) == 120  # age exactly 60 at 60 s is not over


def test_a_page_more_than_a_tick_after_visible_plus_pending_misses() -> None:
    assert within_a_tick(page_s=160, visible_s=100, pending_s=0)
    assert within_a_tick(page_s=400, visible_s=100, pending_s=240)
    assert not within_a_tick(page_s=161, visible_s=100, pending_s=0)


def test_a_steady_tick_must_be_unchanged_and_write_nothing() -> None:
    assert steady_failures("tick 1", "unchanged", 0, 0) == []
    assert steady_failures("tick 2", "stale", 0, 0) == ["tick 2: outcome stale"]
    assert steady_failures("tick 3", "applied", 2, 1) == ["tick 3: outcome applied, 2 writes, 1 publishes"]


def test_only_judged_verdicts_can_fail_the_run() -> None:
    verdicts = {"a": {"met": True}, "b": {"met": False}, "imports": {"met": None}}
    assert missed(verdicts) == ["b"]


def test_the_proxy_names_the_operation_of_each_protocol() -> None:
    assert operation_of({"X-Amz-Target": "AmazonSQS.GetQueueAttributes"}, "/", b"{}") == "GetQueueAttributes"
    assert operation_of({}, "/service/GraniteServiceVersion20100801/operation/GetMetricData", b"") == "GetMetricData"
    assert operation_of({}, "/", b"Action=Publish&Version=2010-03-31") == "Publish"
    assert operation_of({}, "/", b"") == "unknown"


def test_api_latencies_are_checked() -> None:
    assert parse_api_latencies(["GetMetricData=25", "Query=8.5"]) == {"GetMetricData": 25.0, "Query": 8.5}
    for bad in ("GetMetricData", "=5", "Query=fast", "Query=-1"):
        with pytest.raises(ValueError, match="Operation=milliseconds"):
            parse_api_latencies([bad])


def test_capacity_says_where_a_command_stops_fitting_a_laptop() -> None:
    # 90 days took a fifth of the laptop's CPU and 512 MiB beside 100: the CPU binds first, at 450 days.
    figures = {"cpu_seconds": LAPTOP_CPU_SECONDS / 5, "peak_rss_mib": 612.0, "before_mib": 100.0}
    assert verdict(figures) == "fits a laptop"
    assert round(laptop_days(figures, 90)) == 450
    # Memory binds first where each day adds more of it: 3,996 MiB of room at 40 MiB a day.
    figures = {"cpu_seconds": 60.0, "peak_rss_mib": 3700.0, "before_mib": 100.0}
    assert verdict(figures) == "fits a laptop" and round(laptop_days(figures, 90)) == 100
