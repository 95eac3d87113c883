"""The triage's evidence from the jobs' history (collect/history.py): arrivals and run times per runner type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from job_records import job_record

from queuewatch.alerting.triage import triage
from queuewatch.collect.history import from_history, history_missing, history_readings
from queuewatch.model.jobs import JobRecord
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
WINDOW, BASELINE = 900, 10800
BOTH = {SignalName.JOB_ARRIVALS, SignalName.JOB_DURATION}


def job(job_id: int, queued_ago: timedelta, run: timedelta | None, runner_type: str | None = "rt") -> JobRecord:
    queued = NOW - queued_ago
    started = queued + timedelta(seconds=30)
    done = run is not None and started + run <= NOW
    return job_record(
        job_id,
        runner_type,
        queued,
        started_at=started,
        completed_at=started + run if done and run is not None else None,
        labels=("x",),
        created_at=queued - timedelta(minutes=30),
        updated_at=NOW,
        expires_at=NOW + timedelta(days=14),
    )  # created 30 minutes before a deployment's approval


def test_arrivals_count_by_when_jobs_were_queued_against_the_usual_per_window() -> None:
    jobs = [job(n, timedelta(minutes=20 + 10 * n), timedelta(minutes=5)) for n in range(17)]  # 1 per 10m before
    jobs += [job(100 + n, timedelta(minutes=n, seconds=30), None) for n in range(12)]  # 12 in the window
    jobs += [job(200, timedelta(minutes=1), None, runner_type="other"), job(201, timedelta(minutes=2), None, None)]
    readings = history_readings(jobs, {"rt": BOTH}, NOW, WINDOW, BASELINE)["rt"]
    arrivals = readings[SignalName.JOB_ARRIVALS]
    assert (arrivals.window_sum, arrivals.baseline_sum) == (12, 1.42)  # 17 over 3h: 1.42 per 15m
    found = triage_of(readings)
    assert "arrival_surge" in found


def triage_of(readings: dict[SignalName, Reading]) -> list[str]:
    signals = dict(readings)
    signals[SignalName.QUEUE_SIZE] = Reading.of(5)
    runner_type = RunnerTypeSnapshot(name="rt", region="us-east-1", queue_name="q", signals=signals)
    return [f.cause for f in triage(runner_type, window=WINDOW, baseline=BASELINE).findings]


def test_run_times_of_the_jobs_that_finished_in_the_window_against_those_before() -> None:
    jobs = [job(n, timedelta(minutes=40 + 10 * n), timedelta(minutes=10)) for n in range(10)]  # done before
    jobs += [job(100 + n, timedelta(minutes=40 + n), timedelta(minutes=30)) for n in range(3)]  # done in the window
    reading = history_readings(jobs, {"rt": BOTH}, NOW, WINDOW, BASELINE)["rt"][SignalName.JOB_DURATION]
    assert (reading.value, reading.baseline_mean) == (1800, 600)
    assert "jobs_longer" in triage_of({SignalName.JOB_DURATION: reading})


def test_with_no_job_done_in_the_window_the_running_jobs_give_a_lower_bound() -> None:
    jobs = [job(n, timedelta(minutes=40 + 10 * n), timedelta(minutes=10)) for n in range(10)]
    jobs += [job(100, timedelta(minutes=45, seconds=30), None)]  # running for 45 minutes so far
    reading = history_readings(jobs, {"rt": BOTH}, NOW, WINDOW, BASELINE)["rt"][SignalName.JOB_DURATION]
    assert (reading.value, reading.baseline_mean) == (2700, 600)


def test_a_runner_type_with_no_jobs_reads_no_arrivals_and_no_duration() -> None:
    readings = history_readings([], {"rt": BOTH}, NOW, WINDOW, BASELINE)["rt"]
    assert readings[SignalName.JOB_ARRIVALS].window_sum == 0 and SignalName.JOB_DURATION not in readings


def test_a_signal_the_config_names_keeps_its_source_and_a_failed_read_says_why() -> None:
    assert from_history({SignalName.JOB_ARRIVALS, SignalName.QUEUE_SIZE}) == {SignalName.JOB_DURATION}
    missing = history_missing({"rt": {SignalName.JOB_ARRIVALS}}, "throttled")["rt"][SignalName.JOB_ARRIVALS]
    assert missing.value is None and missing.error == "jobs table: throttled"
