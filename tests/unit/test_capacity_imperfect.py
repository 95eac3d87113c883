"""`queuewatch capacity` on imperfect histories: names in another case, a table holding fewer days than asked,
lost `completed` events, GitHub-hosted jobs, and a runner type too quiet to have been capped."""

from __future__ import annotations

import argparse
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from job_records import job_record

from queuewatch.model.jobs import JobRecord
from queuewatch.model.runner_names import RunnerTypeNames
from queuewatch_cli.commands.capacity.analysis import analyse
from queuewatch_cli.commands.capacity.history import JobTimes, by_runner_type
from queuewatch_cli.commands.capacity.run import Skipped, job_times, parse_target, run_capacity

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
    return job_record(
        1,
        name,
        at,
        started_at=at + timedelta(minutes=1),
        completed_at=at + timedelta(minutes=9),
        labels=labels,
        run_id=1,
        updated_at=at,
    )


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
    # Ten such jobs: too few to read a start-up from, said so, and still not capped.
    [fewer] = analyse(by_runner_type(jobs[:10], START.timestamp(), END.timestamp()), START.timestamp(),
                      END.timestamp(), parse_target("p90<5m"))  # fmt: skip
    assert any("only 10 job(s) queued below its ceiling: too few" in note for note in fewer.notes), fewer.notes
    assert not any("capped" in note for note in fewer.notes)


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


def test_the_github_apps_burst_binds_when_the_fleet_asks_for_more_than_180_runners_in_a_minute() -> None:
    t = START.timestamp() + 3600
    minute = [JobTimes(f"rt{n % 3}", t + n * 0.2, t + n * 0.2 + 90, t + 700) for n in range(300)]  # 300 in a minute
    code, out = answer_of(minute)
    assert code == 0
    # The 181st ask (at 36 s) waits for the first launch to leave the minute (60 s); each after it waits as long.
    assert "launch rate binds: the GitHub App's burst (180 a minute per App, 1 App(s)) held back 120 runner" in out
    assert "up to 24s (at most 300 asked in a minute)" in out
    code, out = answer_of(minute, "--github-apps", "2")  # 150 asks through each App: none binds
    assert code == 0 and "none binds" in out
    code, out = answer_of(minute[:100])
    assert "asked for at most 100 runner(s) in a minute; no launch ceiling held one back" in out


def test_a_launch_ceilings_wait_is_in_the_models_queue_times_and_named_where_it_binds() -> None:
    t = START.timestamp() + 3600
    minute = [JobTimes("linux.2xlarge", t + n * 0.2, t + n * 0.2 + 60, t + 1200) for n in range(300)]
    code, out = answer_of(minute, "--startup", "60s", "--max", "400", "--target", "p50<2m", "--json")
    assert code == 0
    import json

    [found] = json.loads(out)["runner_types"]
    # The last 120 asks each wait 24 s for the burst: their queue time is that and the start-up, 40% of the jobs.
    waited = found["maximum"]["queue_seconds"]
    assert (waited["p50"], waited["p90"], waited["worst"]) == (60, 84, 84)
    binds = found["maximum"]["binds"]
    assert "the launch rate (the GitHub App's burst (180 a minute per App, 1 App(s))): 120 job(s) (40.0%)" in binds
    assert "the maximum:" not in binds
    # A target under the start-up and the launch wait: no pool size meets it, and the launch ceiling is named.
    code, out = answer_of(minute, "--startup", "60s", "--target", "p90<70s", "--json")
    [found] = json.loads(out)["runner_types"]
    assert found["sized"] is None
    assert any("launches wait for the GitHub App's burst" in note for note in found["thin"]), found["thin"]


def test_ssm_parameter_stores_40_writes_a_second_binds_a_burst_within_one_second() -> None:
    t = START.timestamp() + 3600
    second = [JobTimes("linux.2xlarge", t + n * 0.005, t + 95, t + 700) for n in range(100)]  # 100 in half a second
    code, out = answer_of(second, "--json")
    assert code == 0
    import json

    launched = json.loads(out)["launch_rate"]
    assert launched["binds"] == "SSM Parameter Store" and launched["held_back"] == {"SSM Parameter Store": 60}
    # Asks 41 to 80 are launched a second after the first 40, and 81 to 100 a second after those.
    assert round(launched["longest_wait"]["SSM Parameter Store"], 3) == round(2 - 80 * 0.005, 3)
    assert "SSM Parameter Store's 40 writes a second (per account and region) held back 60" in launched["said"]
    code, out = answer_of(second, "--ssm-rate", "100")  # the higher throughput setting: none binds
    assert "none binds" in out


def test_the_github_apps_sustained_rate_binds_past_10_000_runners_in_an_hour() -> None:
    t = START.timestamp() + 3600
    gap = 60 / 174  # 174 a minute, under the burst's 180, for 70 minutes
    hour = [JobTimes(f"rt{n % 5}", t + n * gap, t + n * gap + 90, t + n * gap + 700) for n in range(174 * 70)]
    code, out = answer_of(hour, "--startup", "90s", "--json")
    assert code == 0
    import json

    launched = json.loads(out)["launch_rate"]
    # The 9,961st ask waits for the first to leave the hour, and each after it for the one 9,960 before it.
    assert launched["binds"] == "GitHub App sustained"
    assert launched["held_back"] == {"GitHub App sustained": 174 * 70 - 9960}
    assert math.isclose(launched["longest_wait"]["GitHub App sustained"], 3600 - 9960 * gap)
    assert "the GitHub App's sustained rate (166 a minute per App, 1 App(s)) held back 2,220" in launched["said"]


def test_the_maximum_is_read_from_the_config_for_each_runner_type(tmp_path: Path) -> None:
    config = tmp_path / "fleet.yaml"
    config.write_text(
        "version: 1\ndefaults: {region: us-east-1}\n"
        "runner_types: [{name: Linux-ARM64, queue: {name: q-arm}, runners_maximum_count: 4}]\n"
        "rules: [{name: r, team: ci-infra, match: ['*'], thresholds: {queue_time: 5m}}]\n"
    )
    t = START.timestamp() + 3600
    burst = [JobTimes(name, t, t + STARTUP, t + STARTUP + RUN) for name in ["linux-arm64"] * 10 + ["gpu"] * 10]
    code, out = answer_of(burst, "--config", str(config), "--startup", "60s")
    assert code == 0 and out.count("with the autoscaler's maximum") == 1  # gpu has none configured
    assert "with the autoscaler's maximum 4:" in out and "the maximum: 6 job(s)" in out
    code, out = answer_of(burst, "--config", str(config), "--max", "10", "--startup", "60s")
    assert out.count("with the autoscaler's maximum 10:") == 2  # --max overrides, for every runner type
    config.write_text("version: 1\nrunner_types: [{name: a, queue: {name: q}, runners_maximum_count: 0}]\n")
    assert answer_of(burst, "--config", str(config))[0] == 2
