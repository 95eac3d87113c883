"""`queuewatch capacity` on imperfect histories: names in another case, a table holding fewer days than asked,
lost `completed` events, GitHub-hosted jobs, and a runner type too quiet to have been capped."""

from __future__ import annotations

import argparse
import math
import random
from datetime import UTC, datetime, timedelta

from queuewatch.jobs import JobRecord
from queuewatch.runner_names import RunnerTypeNames
from queuewatch_cli.capacity.analysis import analyse
from queuewatch_cli.capacity.history import JobTimes, by_runner_type
from queuewatch_cli.capacity.run import Skipped, job_times, parse_target, run_capacity

START = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday
END = START + timedelta(days=14)
NOW = END + timedelta(minutes=5)
RUN, STARTUP = 600.0, 60.0


def args(*more: str) -> argparse.Namespace:
    from queuewatch_cli.main import build_parser

    return build_parser().parse_args(["capacity", "--table", "jobs", "--from", "14d", "--to", "5m", *more])


def poisson(name: str, per_hour: float, seed: int, start: datetime = START, end: datetime = END) -> list[JobTimes]:
    rng = random.Random(seed)
    at, stop, jobs = start.timestamp(), end.timestamp(), []
    while (at := at + rng.expovariate(per_hour / 3600)) < stop:
        jobs.append(JobTimes(name, at, at + STARTUP, at + STARTUP + RUN))
    return jobs


def answer_of(jobs: list[JobTimes], *more: str) -> tuple[int, str]:
    lines: list[str] = []
    code = run_capacity(args(*more), read=lambda _s, _e: iter(jobs), now=NOW, out=lines.append)
    return code, "\n".join(lines)


def test_a_discovered_name_is_the_jobs_stored_in_lower_case_as_the_collector_resolves_it() -> None:
    jobs = poisson("linux-arm64", 20, seed=3)  # the track stage stores a discovered candidate in lower case
    code, out = answer_of(jobs, "--runner-type", "Linux-ARM64")
    assert code == 0 and "  Linux-ARM64 " in out
    code, out = answer_of(jobs, "--runner-type", "Linux-*")
    assert code == 0 and "linux-arm64" in out
    names = RunnerTypeNames(["Linux-ARM64", "linux.2xlarge"])
    assert names.resolve("linux-arm64") == "Linux-ARM64" and names.resolve("linux.2xlarge") == "linux.2xlarge"
    assert names.resolve("gpu") is None and names.resolve(None) is None


def test_the_range_is_what_the_history_holds_and_the_output_says_so() -> None:
    week = START + timedelta(days=7)
    jobs = poisson("linux.2xlarge", 60, seed=5, start=week)  # tracking turned on a week ago
    code, held = answer_of(jobs, "--json")
    assert code == 0
    import json

    document = json.loads(held)
    assert document["from"].startswith(f"{week:%Y-%m-%d}")
    assert any("the history holds jobs from" in note for note in document["thin"])
    [sized] = document["runner_types"]
    # Every day the range touches is a day the history holds: 7 (or 8 with the minutes past END), never 15.
    assert sized["real_peak_over_sized"]["of_days"] <= 8


def test_lost_completed_events_are_bounded_counted_and_said() -> None:
    jobs = poisson("linux.2xlarge", 12, seed=11)  # about 4,000 jobs
    whole = analyse(
        by_runner_type(jobs, START.timestamp(), END.timestamp()),
        START.timestamp(),
        END.timestamp(),
        parse_target("p90<2m"),
    )[0]
    lossy = list(jobs)
    for index in (10, 20, 30):  # three completed events lost on the first day: "running" for 13 days
        job = lossy[index]
        lossy[index] = JobTimes(job.runner_type, job.queued_at, job.started_at, None)
    lost = by_runner_type(lossy, START.timestamp(), END.timestamp())
    assert lost["linux.2xlarge"].lost == 3 and lost["linux.2xlarge"].lost_bound == RUN
    answer = analyse(lost, START.timestamp(), END.timestamp(), parse_target("p90<2m"))[0]
    assert answer.sizing.runners == whole.sizing.runners
    assert answer.observed.peak_running == whole.observed.peak_running
    assert any("3 job(s) have no end recorded" in note for note in answer.notes)
    # A job started a minute before the end with no end yet is running, not lost.
    running = [*jobs, JobTimes("linux.2xlarge", END.timestamp() - 120, END.timestamp() - 60, None)]
    assert by_runner_type(running, START.timestamp(), END.timestamp())["linux.2xlarge"].lost == 0


def record(name: str | None, labels: tuple[str, ...]) -> JobRecord:
    at = START + timedelta(hours=1)
    return JobRecord(
        job_id=1, run_id=1, status="completed", progress=3, runner_type=name, labels=labels, label_set=",".join(labels),
        org="o", repo="o/r", html_url=None, created_at=at, queued_at=at, started_at=at + timedelta(minutes=1),
        completed_at=at + timedelta(minutes=9), updated_at=at, expires_at=at + timedelta(days=14),
    )  # fmt: skip


def test_github_hosted_jobs_are_no_pool_and_are_counted() -> None:
    skipped = Skipped()
    records = [
        record("ubuntu-latest", ("ubuntu-latest",)),
        record("windows-2022", ("windows-2022",)),
        record("linux.2xlarge", ("self-hosted", "linux.2xlarge")),
    ]
    assert [j.runner_type for j in job_times(records, skipped)] == ["linux.2xlarge"]
    assert skipped.hosted == 2


def test_a_quiet_runner_type_whose_jobs_never_overlap_is_not_called_capped() -> None:
    jobs = [
        JobTimes("gpu", t, t + 90, t + 90 + RUN)
        for t in (START.timestamp() + 3600 * 12 * n for n in range(20))  # one job every 12 hours
    ]
    [answer] = analyse(by_runner_type(jobs, START.timestamp(), END.timestamp()), START.timestamp(),
                       END.timestamp(), parse_target("p90<5m"))  # fmt: skip
    assert not any("capped" in note for note in answer.notes), answer.notes
    assert answer.startup.source == "history" and answer.startup.seconds == 90
    assert answer.sizing.runners == 1
    assert math.isclose(answer.observed.startup_median, 90)


def test_the_autoscalers_maximum_is_replayed_and_the_output_names_what_binds() -> None:
    # Ten jobs at once, 10-minute runs, a 60 s start-up; at most 4 runners: six wait for a free one.
    t = START.timestamp() + 3600
    burst = [JobTimes("linux.2xlarge", t, t + STARTUP, t + STARTUP + RUN) for _ in range(10)]
    code, out = answer_of(burst, "--max", "4", "--startup", "60s")
    assert code == 0
    assert "with the autoscaler's maximum 4:" in out and "what binds: the maximum: 6 job(s) (60.0%)" in out
    # Slots free every 11 minutes (start-up and run): the third wave waits 22 minutes, then its 1-minute start-up.
    assert "worst 23m" in out
    code, out = answer_of(burst, "--max", "10", "--startup", "60s")
    assert "what binds: the start-up delay: the maximum is never reached" in out
    assert answer_of(burst, "--max", "0")[0] == 2


def test_the_launch_rate_binds_when_the_fleet_asks_for_more_runners_a_minute_than_one_app_launches() -> None:
    t = START.timestamp() + 3600
    minute = [JobTimes(f"rt{n % 3}", t + n * 0.2, t + n * 0.2 + 90, t + 700) for n in range(300)]  # 300 in a minute
    code, out = answer_of(minute)
    assert code == 0
    # The 300th ask (at 59.8 s) is launched 299 spacings of 60/166 s after the first: about 48 s late.
    late = 299 * 60 / 166 - 59.8
    assert f"in 1 minute(s) (at most 300); a runner ask waited up to {round(late)}s" in out
    code, out = answer_of(minute[:100])
    assert "asked for at most 100 runner(s) in a minute, under the 166 a minute" in out
