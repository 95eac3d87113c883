"""The backtest at CloudWatch's retention edges: each part of the range read at the finest period CloudWatch
still holds, and the output says where it had to be coarser.

moto keeps every datapoint at any period forever; CloudWatch does not. RetainingCloudWatch answers as
CloudWatch does: 1-minute datapoints for 15 days, 5-minute maxima for 63 days, hourly for 455, and nothing at
all for a call whose StartTime is older than its period is kept (GetMetricData's documented rule)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch_cli.commands.backtest.run import backtest, run_backtest

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
QUEUES = {"linux.2xlarge": "gh-ci-linux-2xlarge-queued-builds"}
CONFIG = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types: [{name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}]
rules:
  - {name: queueing, match: ["*"], thresholds: {queue_time: 30m, queue_size: 5}, breach_when: all, for: 5m}
"""
Figures = dict[tuple[str, str], dict[datetime, float]]  # per (queue, metric): per minute
KEPT = ((timedelta(days=15), 60), (timedelta(days=63), 300), (timedelta(days=455), 3600))


def config() -> Config:
    return parse_config(CONFIG, source="test.yaml")


class RetainingCloudWatch:
    """Per-minute figures of each (queue, metric), answered at the period asked as CloudWatch would."""

    def __init__(self, minutes: Figures) -> None:
        self.minutes = minutes
        self.calls: list[tuple[datetime, int]] = []

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        start, end = kwargs["StartTime"], kwargs["EndTime"]
        results = []
        for query in kwargs["MetricDataQueries"]:
            stat = query["MetricStat"]
            period = stat["Period"]
            self.calls.append((start, period))
            queue = stat["Metric"]["Dimensions"][0]["Value"]
            figures = self.minutes.get((queue, stat["Metric"]["MetricName"]), {})
            held = max((kept for kept, finest in KEPT if period % finest == 0), default=timedelta(0))
            buckets: dict[datetime, float] = {}
            if start >= NOW - held:  # an older StartTime at this period: no datapoints at all
                for stamp, value in figures.items():
                    if start <= stamp < end and stamp >= NOW - held:
                        bucket = datetime.fromtimestamp(int(stamp.timestamp()) // period * period, UTC)
                        buckets[bucket] = max(buckets.get(bucket, value), value)
            stamps = sorted(buckets, reverse=True)
            results.append({"Id": query["Id"], "Timestamps": stamps, "Values": [buckets[s] for s in stamps]})
        return {"MetricDataResults": results}


class Clients(AwsClients):
    def __init__(self, cloudwatch: RetainingCloudWatch) -> None:
        super().__init__()
        self.fake = cloudwatch

    def cloudwatch(self, region: str) -> Any:
        return self.fake


def incident(
    begin: datetime, minutes: int, size: float, age_minutes: float
) -> dict[tuple[str, str], dict[datetime, float]]:
    """linux.2xlarge queueing for `minutes` from `begin`, with zeros for a quarter of an hour after."""
    queue = QUEUES["linux.2xlarge"]
    visible: dict[datetime, float] = {}
    age: dict[datetime, float] = {}
    for minute in range(minutes + 15):
        stamp = begin + timedelta(minutes=minute)
        queued = minute < minutes
        visible[stamp] = size if queued else 0.0
        age[stamp] = (age_minutes + minute) * 60.0 if queued else 0.0
    return {(queue, "ApproximateNumberOfMessagesVisible"): visible, (queue, "ApproximateAgeOfOldestMessage"): age}


def test_a_range_starting_just_under_15_days_ago_still_reads_its_first_day(aws: None) -> None:
    """The first read used to start metric_lookback before --from, past 15 days, at 1 minute: CloudWatch then
    answered nothing for the whole first chunk, replayed as idle queues."""
    start = NOW - timedelta(days=15) + timedelta(minutes=5)
    fake = RetainingCloudWatch(incident(start + timedelta(hours=3), 60, 20, 25))
    outcome = backtest(config(), Clients(fake), start, start + timedelta(days=2), now=NOW)
    [page] = outcome.replay.episodes
    assert page.started_at == start + timedelta(hours=3, minutes=6 + 1 + 5)  # past 30m, seen, then 5m pending
    assert all(when >= NOW - timedelta(days=15) or period % 300 == 0 for when, period in fake.calls)
    # The first minutes, and the lookback before them, were only held as 5-minute maxima: said.
    [note] = outcome.notes
    assert note.startswith(f"{start:%Y-%m-%d %H:%M} UTC to ") and "5-minute maxima" in note


def test_a_range_from_16_days_ago_reads_its_last_15_days_at_1_minute(aws: None) -> None:
    """A 3-minute spike 14.5 days ago never pages live (for: 5m): it must not page in the replay either, as it
    did when the whole range was read as 5-minute maxima (its first breach placed before the spike began)."""
    spike = NOW - timedelta(days=14, hours=12) + timedelta(minutes=3)  # across two 5-minute periods
    fake = RetainingCloudWatch(incident(spike, 3, 20, 40))
    outcome = backtest(config(), Clients(fake), NOW - timedelta(days=16), NOW - timedelta(days=14), now=NOW)
    assert outcome.replay.episodes == []
    assert {period for when, period in fake.calls if when >= NOW - timedelta(days=15)} == {60}
    [note] = outcome.notes
    assert note.startswith(f"{NOW - timedelta(days=16):%Y-%m-%d %H:%M} UTC to ")


def test_a_coarse_maximum_is_applied_when_its_period_ends_never_before_the_spike(aws: None) -> None:
    """30 days ago only 5-minute maxima are left: a long incident still pages, and its first breach is never
    placed before the jobs began to wait."""
    begin = NOW - timedelta(days=30) + timedelta(minutes=2)
    fake = RetainingCloudWatch(incident(begin, 60, 20, 31))
    outcome = backtest(config(), Clients(fake), NOW - timedelta(days=31), NOW - timedelta(days=29), now=NOW)
    [page] = outcome.replay.episodes
    assert page.first_breach_at >= begin


def test_the_output_says_which_source_and_where_it_was_coarser(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(CONFIG)
    fake = RetainingCloudWatch({})
    args = argparse.Namespace(
        config=str(path),
        compare=None,
        start="16d",
        end="13d",
        plot=None,
        region=None,
        quiet=True,
        jobs_table=None,
        source=None,
    )
    lines: list[str] = []
    assert run_backtest(args, Clients(fake), now=NOW, out=lines.append) == 0
    out = "\n".join(lines)
    assert out.startswith("replayed: CloudWatch")
    assert "note: 2026-05-16 12:00 UTC to " in out and "5-minute maxima" in out
    assert "pages per week" not in out  # 3 days: a rate per week would be a guess
    args.start, args.end = "8d", "1h"
    lines.clear()
    assert run_backtest(args, Clients(fake), now=NOW, out=lines.append) == 0
    out = "\n".join(lines)
    assert "pages per week 0.0" in out and "note:" not in out
