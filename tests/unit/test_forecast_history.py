"""A runner type's forecast inputs from its jobs' history (model/forecast/history.py): the one definition the live
collector and the backtest share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from queuewatch.model.forecast.history import JobTimes, PoolCount, forecast_inputs
from queuewatch.model.jobs import JobRecord

NOW = 100_000.0
WINDOW, HISTORY = 600, 3600


def test_arrivals_count_the_window_and_runs_startups_and_running_jobs_the_history() -> None:
    jobs = [
        JobTimes(NOW - 30, None, None),  # waiting: arrived, nothing else
        JobTimes(NOW - 300, NOW - 240, None),  # running 4 min; nothing ahead of it still queued: start-up 1 min
        JobTimes(NOW - 900, NOW - 840, NOW - 600),  # ran 4 min; queued while the one below still waited
        JobTimes(NOW - 1200, NOW - 1100, NOW - 500),  # ran 10 min; queued while the one below still waited
        JobTimes(NOW - 1500, NOW - 500, NOW - 200),  # first in line, waited 1000 s: counted; ran 5 min
        JobTimes(NOW - HISTORY - 1, NOW - 3000, None),  # queued before the history read: not read
        JobTimes(NOW + 1, None, None),  # after now: not read
        JobTimes(NOW, None, None),  # at now: not in [now - window, now)
    ]
    inputs = forecast_inputs(jobs, NOW, window=WINDOW, history=HISTORY, pool=PoolCount(7, 50, "log", 42.0))
    assert inputs.arrived == 2
    assert inputs.run_seconds == 300  # median of 240, 600, 300
    assert inputs.startup_seconds == 530  # median of 1000 and 60: those with no job ahead still queued
    assert (inputs.running, inputs.running_seconds) == (1, 240)
    assert (inputs.runners, inputs.maximum, inputs.runners_from, inputs.runners_age_seconds) == (7, 50, "log", 42.0)


def test_a_stale_log_count_keeps_its_maximum_but_not_its_runners() -> None:
    stale = forecast_inputs([], NOW, window=WINDOW, history=HISTORY, pool=PoolCount(7, 50, "log", 301.0))
    assert (stale.runners, stale.maximum, stale.runners_age_seconds) == (None, 50, 301.0)


def test_a_job_that_completes_or_starts_after_now_is_seen_as_it_was_at_now() -> None:
    """A backtest holds the whole history: a job's later start or completion is not known at an earlier tick."""
    jobs = [JobTimes(NOW - 100, NOW - 50, NOW + 500), JobTimes(NOW - 20, NOW + 10, NOW + 20)]
    inputs = forecast_inputs(jobs, NOW, window=WINDOW, history=HISTORY)
    assert (inputs.running, inputs.running_seconds, inputs.run_seconds) == (1, 50, None)
    assert inputs.arrived == 2 and inputs.maximum is None


def test_a_tracked_jobs_times_start_when_it_was_queued_for_a_runner_not_when_it_waited_for_approval() -> None:
    created = datetime(2026, 3, 2, 9, tzinfo=UTC)
    record = {
        "job_id": 1, "run_id": 1, "progress": 3, "runner_type": "linux", "labels": ("linux",), "label_set": "linux",
        "org": "o", "repo": "o/r", "html_url": None, "created_at": created, "updated_at": created,
        "expires_at": created + timedelta(days=30),
    }  # fmt: skip
    approved = created + timedelta(hours=1)
    job = JobRecord.model_validate(
        {**record, "status": "completed", "queued_at": approved, "started_at": approved + timedelta(minutes=1),
         "completed_at": approved + timedelta(minutes=9)}
    )  # fmt: skip
    assert JobTimes.of(job) == JobTimes(approved.timestamp(), approved.timestamp() + 60, approved.timestamp() + 540)
    assert JobTimes.of(JobRecord.model_validate({**record, "status": "waiting", "progress": 0})) is None
