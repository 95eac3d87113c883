"""The forecast's inputs as the collector builds them: demand from the jobs' history, the autoscaler's count from
its `Current runners` line in both upstream wordings, and a count too old to stand for the slots free now."""

from __future__ import annotations

import json
from datetime import timedelta

from job_records import job_record
from support import T0

from queuewatch.collect.forecast import count_from_log, count_from_metrics, demand_from_history, with_forecast
from queuewatch.model.autoscaler_log import LogRow, RunnerCountLine, latest_counts
from queuewatch.model.forecast.history import STALE_COUNT_SECONDS, PoolCount
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

WINDOW = 900
GROUP = "/aws/lambda/gh-ci-linux-scale-up"


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


def test_demand_counts_the_window_s_arrivals_the_completed_runs_and_the_jobs_running_now() -> None:
    jobs = [
        # completed in the read, queued before the window: a run, not an arrival
        job_record(1, "linux", T0 - minutes(60), started_at=T0 - minutes(59), completed_at=T0 - minutes(19)),
        job_record(2, "linux", T0 - minutes(50), started_at=T0 - minutes(49), completed_at=T0 - minutes(9)),
        job_record(3, "linux", T0 - minutes(40), started_at=T0 - minutes(39), completed_at=T0 - minutes(29)),
        # arrived in the window: running now for 10 and 4 minutes, and one still queued
        job_record(4, "linux", T0 - minutes(11), started_at=T0 - minutes(10)),
        job_record(5, "linux", T0 - minutes(5), started_at=T0 - minutes(4)),
        job_record(6, "linux", T0 - minutes(1)),
        job_record(7, "windows", T0 - minutes(2)),  # another runner type's
    ]
    demand = demand_from_history(jobs, ["linux"], T0, WINDOW)
    assert set(demand) == {"linux"}
    inputs = _inputs(demand["linux"], None)
    assert (inputs.arrived, inputs.run_seconds, inputs.running, inputs.running_seconds) == (3, 2400.0, 2, 420.0)
    assert inputs.maximum is None and inputs.runners_from is None  # no count read: the outlook says why


def test_start_up_is_the_wait_of_jobs_that_found_no_queue_ahead() -> None:
    jobs = [
        job_record(1, "linux", T0 - minutes(30), started_at=T0 - minutes(29)),  # nothing ahead: 60 s
        job_record(2, "linux", T0 - minutes(20), started_at=T0 - minutes(19.5)),  # nothing ahead: 30 s
        # a backlog: 3 waits behind nothing (90 s), 4 and 5 queue while 3 is still waiting: slot waits
        job_record(3, "linux", T0 - minutes(12), started_at=T0 - minutes(10.5)),
        job_record(4, "linux", T0 - minutes(11), started_at=T0 - minutes(1)),
        job_record(5, "linux", T0 - minutes(10.75), started_at=T0 - minutes(0.5)),
        # a job queued while 5 still waited, never started: ahead of 7, so 7 waits for a slot too
        job_record(6, "linux", T0 - minutes(10.6)),
        job_record(7, "linux", T0 - minutes(3), started_at=T0 - minutes(2)),
    ]
    # the waits of 1, 2 and 3 (60, 30 and 90 s): their median
    assert demand_from_history(jobs, ["linux"], T0, WINDOW)["linux"].startup_seconds == 60.0


def test_a_job_cancelled_while_queued_leaves_the_queue_for_those_behind_it() -> None:
    jobs = [
        job_record(1, "linux", T0 - minutes(20), completed_at=T0 - minutes(18), status="completed"),
        job_record(2, "linux", T0 - minutes(10), started_at=T0 - minutes(9)),
    ]
    assert demand_from_history(jobs, ["linux"], T0, WINDOW)["linux"].startup_seconds == 60.0


def _inputs(
    demand: ForecastInputs | None, log_count: PoolCount | None, found: RunnerTypeSnapshot | None = None
) -> ForecastInputs:
    """The inputs the collector gives a runner type: its demand and the count, as collect/stage.py attaches them."""
    found = found or RunnerTypeSnapshot(name="linux", region="us-east-1", queue_name="q")
    inputs = with_forecast(found, {"linux": demand} if demand else {}, log_count, WINDOW).forecast
    assert inputs is not None
    return inputs


def _row(line: str, at_minutes_ago: float, group: str = GROUP) -> LogRow:
    at = T0 - minutes(at_minutes_ago)
    return LogRow(log_group=group, count=1, first_at=at, last_at=at, line=line)


def test_the_count_is_read_from_v7_fields_and_from_v6_text_the_latest_line_winning() -> None:
    v7 = json.dumps({"level": "INFO", "message": "Current runners", "currentRunners": 47, "maximumRunners": 50})
    v7_older = json.dumps({"level": "INFO", "message": "Current runners", "currentRunners": 12, "maximumRunners": 50})
    v6 = json.dumps({"level": "INFO", "message": "Current runners: 9 of 20"})
    v6_older = json.dumps({"level": "INFO", "message": "Current runners: 20 of 20"})
    counts = latest_counts(
        [
            _row(v7_older, 8),
            _row(v7, 2),
            _row(v6, 1, "/aws/lambda/old-scale-up"),
            _row(v6_older, 6, "/aws/lambda/old-scale-up"),
            _row(json.dumps({"message": "Attempting to launch new runners"}), 0, "/aws/lambda/quiet-scale-up"),
        ]
    )
    assert counts[GROUP] == RunnerCountLine(T0 - minutes(2), 47, 50)
    assert counts["/aws/lambda/old-scale-up"] == RunnerCountLine(T0 - minutes(1), 9, 20)
    assert "/aws/lambda/quiet-scale-up" not in counts
    inputs = _inputs(ForecastInputs(window_seconds=WINDOW, arrived=4), count_from_log(counts[GROUP], T0))
    assert (inputs.runners, inputs.maximum, inputs.runners_from, inputs.runners_age_seconds) == (47, 50, "log", 120.0)


def test_no_maximum_upstream_gives_no_maximum_and_no_count() -> None:
    unlimited = RunnerCountLine(T0, 0, -1)  # v7 with runners_maximum_count -1: it counted nothing
    assert count_from_log(unlimited, T0) == PoolCount(runners=None, maximum=None, source="log", age_seconds=0.0)


def test_a_stale_count_keeps_the_maximum_and_drops_the_runners() -> None:
    fresh = PoolCount(runners=48, maximum=50, source="log", age_seconds=STALE_COUNT_SECONDS)
    stale = PoolCount(runners=48, maximum=50, source="log", age_seconds=STALE_COUNT_SECONDS + 1)
    assert _inputs(None, fresh).runners == 48
    old = _inputs(ForecastInputs(window_seconds=WINDOW, arrived=0, running=1, running_seconds=60), stale)
    assert (old.runners, old.maximum, old.runners_age_seconds) == (None, 50, STALE_COUNT_SECONDS + 1)


def test_a_metric_count_is_taken_where_the_config_names_one_and_the_tick_read_it() -> None:
    found = RunnerTypeSnapshot(
        name="linux",
        region="us-east-1",
        queue_name="q",
        signals={
            SignalName.TOTAL_RUNNERS: Reading.of(30, age_seconds=60),
            SignalName.MAX_RUNNERS: Reading.of(40, age_seconds=60),
        },
    )
    assert count_from_metrics(found) == PoolCount(30, 40, "metric", 60.0)
    assert _inputs(None, None, found).runners_from == "metric"  # no log count: the metrics' count stands
    bare = RunnerTypeSnapshot(
        name="linux", region="us-east-1", queue_name="q", signals={SignalName.TOTAL_RUNNERS: Reading.of(30)}
    )
    assert count_from_metrics(bare) is None


def test_the_bounds_the_performance_doc_states_are_the_collectors() -> None:
    from queuewatch.collect.autoscaler_log import MAX_COUNTS_PER_TICK
    from queuewatch_cli.devkit.handlers import REPO_ROOT

    doc = (REPO_ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    section = doc.split("## The forecast a tick", 1)[1].split("\n## ", 1)[0]
    assert f"at most {MAX_COUNTS_PER_TICK} runner types a tick" in section
    assert f"older than {STALE_COUNT_SECONDS // 60} minutes" in section
