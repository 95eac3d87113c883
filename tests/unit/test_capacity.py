"""`queuewatch capacity` on synthetic job histories whose answer is known."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from queueing import batch_estimate, md_c_chain, steady

from queuewatch.model.forecast.model import Target, simulate
from queuewatch_cli.commands.capacity.analysis import analyse
from queuewatch_cli.commands.capacity.history import JobTimes, by_runner_type
from queuewatch_cli.commands.capacity.output import document, table
from queuewatch_cli.commands.capacity.run import parse_target, run_capacity
from queuewatch_cli.main import build_parser

START = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday
END = START + timedelta(days=14)
RUN, STARTUP = 600.0, 60.0
PER_HOUR = 156  # with an 11-minute slot (start-up and run): 28.6 runners busy on average


def uncapped_history(
    name: str, per_hour: float, seed: int, start: datetime = START, end: datetime = END
) -> list[JobTimes]:
    """Poisson arrivals, fixed run times, and an autoscaler never capped: every job waits its runner's start-up."""
    rng = random.Random(seed)
    at, stop = start.timestamp(), end.timestamp()
    jobs: list[JobTimes] = []
    while True:
        at += rng.expovariate(per_hour / 3600)
        if at >= stop:
            return jobs
        jobs.append(JobTimes(name, at, at + STARTUP, at + STARTUP + RUN))


def capped_history(name: str, cap: int, per_hour: float, seed: int) -> list[JobTimes]:
    """The same arrivals served by at most `cap` runners: jobs queue behind the cap the whole fortnight."""
    arrivals = [job.queued_at for job in uncapped_history(name, per_hour, seed)]
    waits = simulate(arrivals, [RUN] * len(arrivals), cap, STARTUP)
    return [JobTimes(name, a, a + w, a + w + RUN) for a, w in zip(arrivals, waits, strict=True)]


def test_a_fortnight_of_m_d_c_history_is_sized_as_the_chain_says() -> None:
    """The independent calculation: the number of runners busy (start-up and run, 660 s a job) is an M/D/c
    system; p90 < 61 s with a 60 s start-up means at most 10% of jobs wait for a slot, P(N >= c) <= 0.1,
    solved from Crommelin's chain. The stated tolerance is one runner, and none where the chain's figures for
    c - 1 and c sit two standard errors or more either side of 0.1, as they do here."""
    slot = STARTUP + RUN
    rate = PER_HOUR / 3600
    delayed = {c: sum(md_c_chain(rate, slot, c, states=200)[c:]) for c in range(34, 41)}
    assert delayed[34] > 0.1 >= delayed[40]  # the answer is in between (fewer runners only wait more)
    expected = next(c for c in sorted(delayed) if delayed[c] <= 0.1)
    history = uncapped_history("linux.2xlarge", PER_HOUR, seed=19)
    jobs = by_runner_type(history, START.timestamp(), END.timestamp())

    [answer] = analyse(jobs, START.timestamp(), END.timestamp(), parse_target("p90<61s"))

    assert answer.startup.source == "history"
    assert answer.startup.seconds == STARTUP  # read back from the history's uncapped queue times
    arrivals = [j.queued_at for j in history]
    delays = {}
    for c in (expected - 1, expected):
        waits = steady(simulate(arrivals, [slot] * len(arrivals), c, 0.0))
        delays[c] = batch_estimate([1.0 if w > 0 else 0.0 for w in waits])
    assert delayed[expected - 1] - 0.1 >= 2 * delays[expected - 1][1]
    assert 0.1 - delayed[expected] >= 2 * delays[expected][1]
    assert answer.sizing.runners == expected
    assert answer.sizing.result is not None and answer.sizing.result.p90 < 61
    assert answer.notes == []  # a fortnight, thousands of jobs, never capped: nothing too thin


def test_what_happened_is_counted_from_the_jobs() -> None:
    base = START.timestamp()
    jobs = [
        # Monday 09:00: three jobs, overlapping two at a time at most... then three at 09:10.
        JobTimes("arm", base + 9 * 3600, base + 9 * 3600 + 30, base + 9 * 3600 + 1200),
        JobTimes("arm", base + 9 * 3600 + 60, base + 9 * 3600 + 600, base + 9 * 3600 + 900),
        JobTimes("arm", base + 9 * 3600 + 120, base + 9 * 3600 + 610, base + 9 * 3600 + 700),
        # Tuesday 23:59: cancelled before it started
        JobTimes("arm", base + 86400 + 86340, None, base + 86400 + 86380),
    ]
    [answer] = analyse(by_runner_type(jobs, base, END.timestamp()), base, END.timestamp(), Target(90, 300))
    seen = answer.observed
    assert seen.jobs == 4 and seen.never_started == 1
    assert seen.arrivals_by_hour[9] == 3 and seen.arrivals_by_hour[23] == 1
    assert seen.arrivals_by_weekday[:2] == (3, 1)
    assert seen.queue_worst == 540 and seen.queue_p50 == 490
    assert seen.run_p50 == 300 and seen.run_p90 == 1170
    assert seen.peak_running == 3
    assert any("only 4 job(s)" in note for note in answer.notes)
    assert any("never started" in note for note in answer.notes)


def test_a_runner_type_capped_the_whole_range_is_said_and_keeps_its_own_start_up() -> None:
    history = uncapped_history("linux.2xlarge", 60, seed=1) + capped_history("windows", cap=8, per_hour=60, seed=2)
    jobs = by_runner_type(history, START.timestamp(), END.timestamp())

    linux, windows = analyse(jobs, START.timestamp(), END.timestamp(), Target(90, 300))

    assert windows.name == "windows"
    assert windows.observed.peak_running == 8
    assert windows.observed.queue_p90 > 3600  # 11 busy on average against 8 runners
    # its own few samples (or none), never linux.2xlarge's: asked alone, the answer is the same
    assert windows.startup.source in ("thin history", "none")
    [alone] = analyse({"windows": jobs["windows"]}, START.timestamp(), END.timestamp(), Target(90, 300))
    assert alone.startup == windows.startup
    assert any("capped, or nearly, the whole range" in note for note in windows.notes)
    assert windows.sizing.runners is not None and windows.sizing.runners > 8
    assert windows.days_over == 0  # the real fleet never ran more than its cap
    assert not any("capped" in note for note in linux.notes)


@pytest.mark.parametrize(
    ("name", "history"),
    [
        ("linux.2xlarge", uncapped_history("linux.2xlarge", 60, seed=11)),  # enough samples: its own median
        ("windows", capped_history("windows", cap=8, per_hour=60, seed=12)),  # capped: few or none
        ("arm", uncapped_history("arm", 60, seed=13)[:5]),  # five jobs: thin
    ],
)
def test_a_runner_type_gets_the_same_start_up_alone_and_beside_another(name: str, history: list[JobTimes]) -> None:
    beside = uncapped_history("other", 120, seed=14)  # plenty of its own samples, and a different delay
    beside = [JobTimes(j.runner_type, j.queued_at, j.queued_at + 300, j.queued_at + 300 + RUN) for j in beside]
    start, end = START.timestamp(), END.timestamp()
    [alone] = analyse(by_runner_type(history, start, end), start, end, Target(90, 300))
    both = analyse(by_runner_type(history + beside, start, end), start, end, Target(90, 300))
    [with_other] = [a for a in both if a.name == name]
    assert with_other.startup == alone.startup
    assert with_other.startup.seconds != 300  # never the other runner type's


def test_a_range_under_a_week_is_too_thin() -> None:
    end = START + timedelta(days=3)
    history = uncapped_history("linux", 60, seed=4, end=end)
    [answer] = analyse(
        by_runner_type(history, START.timestamp(), end.timestamp()), START.timestamp(), end.timestamp(), Target(90, 300)
    )
    assert any("under a week" in note for note in answer.notes)


def test_a_target_under_the_start_up_delay_has_no_pool() -> None:
    history = uncapped_history("linux", 60, seed=5)
    [answer] = analyse(
        by_runner_type(history, START.timestamp(), END.timestamp()), START.timestamp(), END.timestamp(), Target(90, 30)
    )
    assert answer.sizing.runners is None
    assert any("start-up delay alone" in note for note in answer.notes)


def test_the_real_peak_over_the_sized_pool_is_counted_in_days() -> None:
    # A fleet that really ran 30 at once one day in the fortnight, sized for far fewer.
    base = START.timestamp()
    history = uncapped_history("gpu", 2, seed=6)
    burst = base + 3 * 86400 + 3600
    history += [JobTimes("gpu", burst + i, burst + i + STARTUP, burst + i + STARTUP + RUN) for i in range(30)]
    [answer] = analyse(by_runner_type(history, base, END.timestamp()), base, END.timestamp(), Target(50, 61))
    sized = answer.sizing.runners
    assert sized is not None and sized < 30

    def running_at(moment: float) -> int:
        return sum(
            1
            for job in history
            if job.started_at is not None
            and job.completed_at is not None
            and job.started_at <= moment < job.completed_at
        )

    peaks: dict[int, int] = {}
    for job in history:
        assert job.started_at is not None
        day = int((job.started_at - base) // 86400)
        peaks[day] = max(peaks.get(day, 0), running_at(job.started_at))
    over = {day for day, peak in peaks.items() if peak > sized}
    assert 3 in over  # the burst's day
    assert answer.days_over == len(over)
    assert 0 < answer.share_above < 1


@pytest.mark.parametrize(
    ("text", "problem"),
    [("90<5m", "expected a queue time percentile"), ("p100<5m", "above 0 and under 100"), ("p90<5x", "5x")],
)
def test_a_bad_target_is_refused_naming_it(text: str, problem: str, capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["capacity", "--table", "jobs", "--target", text])
    assert run_capacity(args, read=lambda s, e: [], now=END) == 2
    assert problem in capsys.readouterr().err


def test_the_command_prints_a_table_and_json() -> None:
    history = uncapped_history("linux.2xlarge", 60, seed=8)
    lines: list[str] = []
    args = build_parser().parse_args(["capacity", "--table", "jobs", "--from", "14d", "--target", "p90<5m"])
    assert run_capacity(args, read=lambda s, e: history, now=END, out=lines.append) == 0
    text = lines[0]
    assert "linux.2xlarge" in text and "queue time p90<5m" in text and "the model assumes" in text
    args = build_parser().parse_args(["capacity", "--table", "jobs", "--from", "14d", "--json"])
    lines.clear()
    assert run_capacity(args, read=lambda s, e: history, now=END, out=lines.append) == 0
    found = json.loads(lines[0])
    [linux] = found["runner_types"]
    assert linux["jobs"] == len(history)
    assert sum(linux["arrivals_by_hour"]) == len(history)
    assert linux["startup"] == {"seconds": 60.0, "source": "history", "samples": linux["startup"]["samples"]}
    assert linux["sized"]["runners"] >= 1
    assert not math.isnan(linux["queue_seconds"]["p90"])
    # the output functions also stand alone
    answers = analyse(
        by_runner_type(history, START.timestamp(), END.timestamp()), START.timestamp(), END.timestamp(), Target(90, 300)
    )
    assert document(answers, START.timestamp(), END.timestamp(), Target(90, 300))["target"]["text"] == "p90<5m"
    assert table(answers, START.timestamp(), END.timestamp(), Target(90, 300))[0].startswith("capacity from")


def test_the_model_and_the_analysis_reach_no_aws() -> None:
    """The simulation is pure: importing it, and what it imports, loads neither boto3 nor an adapter."""
    code = (
        "import sys; import queuewatch_cli.commands.capacity.analysis, queuewatch_cli.commands.capacity.output; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'yaml') "
        "or m.startswith('queuewatch.adapters')))"
    )
    found = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert found.strip() == "[]"
