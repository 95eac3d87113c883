"""`backtest --forecast`'s replay of the jobs: each tick's forecast inputs as the live collector reads them from the
same history (model/forecast/history.py), the pools' maximums and counts, and the score against the plain rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from forecast_histories import slow_build_up

from queuewatch.base.errors import QueuewatchError
from queuewatch.collect.queues import WatchedQueue
from queuewatch.config.load import parse_config
from queuewatch.model.forecast.history import JobTimes, PoolCount, forecast_inputs
from queuewatch_cli.commands.backtest.forecast import score, with_horizon
from queuewatch_cli.commands.backtest.forecast_feed import (
    ForecastFeed,
    forecast_runner_types,
    maximum_of,
    parse_runner_counts,
)
from queuewatch_cli.commands.backtest.jobs import JobObservations, job_spans
from queuewatch_cli.commands.backtest.replay import Episode

T = datetime(2026, 3, 2, 9, tzinfo=UTC)
CONFIG = parse_config(
    """version: 1
defaults: {region: us-east-1}
runner_types:
  - {name: linux, queue: {name: q-linux}, runners_maximum_count: 50}
  - {name: arm, queue: {name: q-arm}}
  - {name: gpu, queue: {name: q-gpu}}
rules:
  - {name: forecast, team: ci, match: [linux, arm], thresholds: {queue_time: 30m}, forecast: 10m}
  - {name: plain, team: ci, match: [gpu], thresholds: {queue_time: 30m}}
""",
    source="t.yaml",
)
NAMES = ["linux", "arm", "gpu"]
TRIAGE = CONFIG.defaults.triage
WINDOW, HISTORY = TRIAGE.window, TRIAGE.window + TRIAGE.baseline  # what the collector reads
TARGETS = [WatchedQueue(n, "us-east-1", "1", f"q-{n}", None, CONFIG.signals_for({})) for n in NAMES]


def test_each_tick_carries_the_inputs_the_collector_would_read_from_the_same_history() -> None:
    jobs = slow_build_up(T, "linux") + slow_build_up(T, "gpu")
    spans = job_spans(jobs, TARGETS, times=True)
    chosen = forecast_runner_types(CONFIG, NAMES)
    assert chosen == [0, 1]  # the runner types a rule with `forecast:` selects; gpu's rule has none
    feed = ForecastFeed(spans, NAMES, chosen, maximum_of(CONFIG, None), window=WINDOW, history=HISTORY)
    times = [t for t in map(JobTimes.of, (j for j in jobs if j.runner_type == "linux")) if t is not None]
    checked, busiest = 0, 0
    for snapshot in JobObservations(CONFIG, TARGETS, [], spans, feed).ticks(T, T + timedelta(hours=4)):
        linux, arm, gpu = snapshot.runner_types
        now = snapshot.collected_at.timestamp()
        # The whole history, read as of the tick: what the collector reads live, job for job.
        assert linux.forecast == forecast_inputs(times, now, pool=PoolCount(None, 50), window=WINDOW, history=HISTORY)
        assert arm.forecast is not None and arm.forecast.arrived == 0 and arm.forecast.maximum is None
        assert gpu.forecast is None
        checked += 1
        busiest = max(busiest, linux.forecast.running)
    assert checked == 4 * 60 + 1
    assert busiest > 45  # the build-up filled the pool


def test_the_jobs_read_are_those_queued_within_the_history_and_seen_as_of_each_tick() -> None:
    jobs = slow_build_up(T, "linux")
    spans = job_spans(jobs, TARGETS, times=True)
    feed = ForecastFeed(spans, NAMES, [0], maximum_of(CONFIG, None), window=WINDOW, history=HISTORY)
    at = T + timedelta(hours=2)
    inputs = next(s for s in JobObservations(CONFIG, TARGETS, [], spans, feed).ticks(at, at)).runner_types[0].forecast
    assert inputs is not None
    read = [j for j in jobs if j.queued_at is not None and at - timedelta(seconds=HISTORY) <= j.queued_at <= at]
    running = [j for j in read if j.started_at and j.started_at <= at and j.completed_at and j.completed_at > at]
    assert inputs.running == len(running) > 0
    assert inputs.run_seconds == 40 * 60 and inputs.maximum == 50


def test_the_maximum_is_the_configs_else_the_one_given_and_counts_come_from_the_scale_ups_log() -> None:
    assert maximum_of(CONFIG, 20)("linux") == 50 and maximum_of(CONFIG, 20)("arm") == 20
    assert maximum_of(CONFIG, None)("arm") is None
    counts = parse_runner_counts(
        "time,runner_type,runners,maximum,extra\n2026-03-02T09:05:00Z,arm,12,30,x\n2026-03-02T09:01:00,arm,3,30,y\n",
        "counts.csv",
    )
    spans = job_spans(slow_build_up(T, "arm"), TARGETS, times=True)
    feed = ForecastFeed(spans, NAMES, [1], maximum_of(CONFIG, None), counts, window=WINDOW, history=HISTORY)
    seen = [feed.inputs_at(int((T + timedelta(minutes=m)).timestamp()))[1] for m in (0, 2, 7)]
    assert [(i.runners, i.maximum, i.runners_from, i.runners_age_seconds) for i in seen] == [
        (None, None, None, None),  # before the first count: no maximum read
        (3, 30, "log", 60.0),  # the latest at or before the tick, however the file is ordered
        (12, 30, "log", 120.0),
    ]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("when,runner_type,runners\n", "line 1: found columns when, runner_type, runners, expected a header"),
        ("time,runner_type,runners,maximum\n2026-03-02T09:00Z,arm,many,30\n", "line 2: found"),
        ("time,runner_type,runners,maximum\n2026-03-02T09:00Z,arm,3,0\n", "line 2: runners 3 and maximum 0"),
    ],
)
def test_a_bad_runner_counts_file_names_its_line(text: str, said: str) -> None:
    with pytest.raises(QueuewatchError, match=said):
        parse_runner_counts(text, "counts.csv")


def test_the_plain_rule_is_the_same_rule_without_its_forecast_and_a_horizon_tries_one_on_every_rule() -> None:
    assert [r.forecast_horizon for r in with_horizon(CONFIG, None).resolved_rules] == [None, None]
    assert [r.forecast_horizon for r in with_horizon(CONFIG, 300).resolved_rules] == [300, 300]
    plain = with_horizon(CONFIG, None).resolved_rules[0]
    assert (plain.queue_time_threshold, plain.name) == (1800, "forecast")


def episode(minute: int, until: int | None, *names: str, rule: str = "forecast") -> Episode:
    at = T + timedelta(minutes=minute)
    resolved = None if until is None else T + timedelta(minutes=until)
    return Episode(rule, "all", "P2", at, at, resolved, set(names))


def test_each_incident_scores_the_forecast_page_open_when_it_paged_and_the_rest_did_not_happen() -> None:
    plain = [episode(100, 160, "linux"), episode(300, 330, "arm"), episode(500, 520, "linux", rule="other")]
    forecast = [
        episode(70, 160, "linux"),  # the same incident, paged 30 minutes earlier
        episode(200, 210, "linux"),  # fell back: did not happen
        episode(300, 330, "arm"),  # the queue came first: no warning
        episode(400, None, "gpu"),  # still open at the end, no incident: did not happen
    ]
    result = score("forecast", 600, forecast, plain, T + timedelta(minutes=600))
    assert [(w.incident.started_at, w.gained_seconds) for w in result.warned] == [
        (T + timedelta(minutes=100), 1800.0),
        (T + timedelta(minutes=300), 0.0),
    ]
    assert [e.started_at for e in result.did_not_happen] == [T + timedelta(minutes=200), T + timedelta(minutes=400)]
    assert result.forecast_pages == 4
