"""The backtest's reads: each GetMetricData call within 500 queries and 100,800 datapoints; the resolution kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from queuewatch.collect.queues import WatchedQueue
from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName
from queuewatch_cli.commands.backtest.history import HistoryError, Observations, plan_history, read_parts

NOW = datetime(2026, 6, 1, tzinfo=UTC)
CONFIG = parse_config(
    "version: 1\ndefaults: {region: us-east-1}\nrunner_types: [{name: rt0, queue: {name: q0}}]\n"
    "rules: [{name: r, team: ci-infra, match: ['*'], thresholds: {queue_time: 1m}}]\n",
    source="t.yaml",
)


class CountingCloudWatch:
    """Answers every query with one datapoint per period, and checks each call against the API's limits."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        queries = kwargs["MetricDataQueries"]
        period = queries[0]["MetricStat"]["Period"]
        start, end = kwargs["StartTime"], kwargs["EndTime"]
        points = int((end - start).total_seconds() // period)
        self.calls.append((len(queries), points))
        stamps = [start + timedelta(seconds=period * i) for i in range(points)]
        return {"MetricDataResults": [{"Id": q["Id"], "Timestamps": stamps, "Values": [0.0] * points} for q in queries]}


def targets(count: int) -> list[WatchedQueue]:
    return [WatchedQueue(f"rt{i}", "us-east-1", "1", f"q{i}", None, CONFIG.signals_for({})) for i in range(count)]


@pytest.mark.parametrize(("count", "hours"), [(1, 30), (140, 6), (1000, 2)])
def test_every_call_fits_500_queries_and_100800_datapoints(count: int, hours: int) -> None:
    cloudwatch = CountingCloudWatch()
    history = plan_history(CONFIG, targets(count), [], 60)
    assert history.queries == count * 4  # queue time, and the three depth series standing in for queue size
    start = NOW - timedelta(hours=hours)
    ticks = list(Observations(CONFIG, history, lambda _: cloudwatch).ticks(start, NOW))  # type: ignore[arg-type,return-value]
    assert len(ticks) == hours * 60 + 1 and len(ticks[-1].runner_types) == count
    assert all(queries <= 500 and queries * points <= 100_800 for queries, points in cloudwatch.calls)
    assert ticks[-1].runner_types[0].value(SignalName.QUEUE_SIZE) == 0


def test_each_part_is_read_at_the_finest_period_cloudwatch_keeps_for_all_of_it() -> None:
    plans = {period: plan_history(CONFIG, targets(1), [], period) for period in (60, 300, 3600)}

    def parts(days_ago: float, to_days_ago: float = 0) -> list[tuple[float, float, int]]:
        first = int((NOW - timedelta(days=days_ago)).timestamp())
        last = int((NOW - timedelta(days=to_days_ago)).timestamp())
        now = NOW.timestamp()
        return [
            ((now - p.start) / 86400, (now - p.end) / 86400, p.period)
            for p in read_parts(first, last, NOW, plans.__getitem__)
        ]

    assert [period for _, _, period in parts(14)] == [60]
    assert [period for _, _, period in parts(100)] == [3600, 300, 60]
    assert [period for _, _, period in parts(30, 20)] == [300]  # ends before 1-minute data begins
    # Every part starts inside what its period keeps, however close to the edge the range begins.
    for days, (kept, period) in ((15, (15, 60)), (63, (63, 300))):
        [(began, _, coarse), (fine_began, _, fine), *_] = parts(days - 1 / 1440)  # a minute inside the edge
        assert (coarse, fine) == (300 if period == 60 else 3600, period) and began > kept - 1
        assert fine_began < kept
    with pytest.raises(HistoryError, match="455 days"):
        parts(500)


class RecordedCloudWatch:
    """Answers from a fixed history: {metric name: {epoch minute: value}}, the same for every queue."""

    def __init__(self, history: dict[str, dict[int, float]]) -> None:
        self.history = history

    def get_metric_data(self, **kwargs: Any) -> dict[str, Any]:
        start, end = kwargs["StartTime"], kwargs["EndTime"]
        results = []
        for query in kwargs["MetricDataQueries"]:
            points = self.history.get(query["MetricStat"]["Metric"]["MetricName"], {})
            stamps = [NOW + timedelta(minutes=m) for m in sorted(points) if start <= NOW + timedelta(minutes=m) < end]
            values = [points[int((s - NOW).total_seconds() // 60)] for s in stamps]
            results.append({"Id": query["Id"], "Timestamps": stamps[::-1], "Values": values[::-1]})
        return {"MetricDataResults": results}


def test_a_repeated_value_holds_and_a_silent_series_goes_stale_after_the_lookback() -> None:
    lookback = CONFIG.defaults.metric_lookback // 60
    history = {
        "ApproximateAgeOfOldestMessage": {m: 120.0 for m in range(10)} | {10: 180.0},
        "ApproximateNumberOfMessagesVisible": {m: 3.0 for m in range(11)},
    }
    cloudwatch = RecordedCloudWatch(history)
    plan = plan_history(CONFIG, targets(1), [], 60)
    ticks = list(Observations(CONFIG, plan, lambda _: cloudwatch).ticks(NOW, NOW + timedelta(minutes=30)))  # type: ignore[arg-type,return-value]

    def figures(minute: int) -> tuple[float | None, float | None]:
        [observed] = ticks[minute].runner_types
        return observed.value(SignalName.QUEUE_SIZE), observed.value(SignalName.QUEUE_TIME)

    assert figures(0) == (0, 0)  # nothing before the first datapoint: an idle queue
    assert [figures(m) for m in (1, 5, 10)] == [(3, 120), (3, 120), (3, 120)]  # each tick reads the minute before
    assert figures(11) == (3, 180)
    # The last datapoints are of minute 10: fresh through minute 10 + lookback, then the queue reads as idle.
    assert figures(10 + lookback) == (3, 180)
    assert figures(11 + lookback) == (0, 0)
