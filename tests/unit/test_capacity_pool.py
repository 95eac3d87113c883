"""`capacity --pool`: the pool_config proposed from a fortnight of office-hours demand, checked against a second,
simple replay written here of the same history with that pool."""

from __future__ import annotations

import bisect
import json
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

from queuewatch_cli.capacity.analysis import analyse
from queuewatch_cli.capacity.history import JobTimes, by_runner_type
from queuewatch_cli.capacity.pool import Window, replay_pool
from queuewatch_cli.capacity.run import parse_target, run_capacity
from queuewatch_cli.main import build_parser

START = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday
END = START + timedelta(days=14)
STARTUP, RUN = 90.0, 420.0
TARGET = "p90<30s"  # the start-up alone breaks it: only a warm pool meets it


def office_hours(seed: int = 7) -> list[JobTimes]:
    """Weekdays 09:00 to 17:00 UTC, a job every 2 minutes on average; and, at any hour, one every 5 hours."""
    rng = random.Random(seed)
    arrivals = [START.timestamp() + 1800 + 5 * 3600 * n for n in range(14 * 24 // 5)]
    for day in range(14):
        if (START + timedelta(days=day)).weekday() >= 5:
            continue
        at, closes = (START + timedelta(days=day, hours=9)).timestamp(), (START + timedelta(days=day, hours=17))
        while (at := at + rng.expovariate(1 / 120)) < closes.timestamp():
            arrivals.append(at)
    return [JobTimes("linux.2xlarge", a, a + STARTUP, a + STARTUP + RUN) for a in sorted(arrivals)]


def second_replay(
    arrivals: list[float], runs: list[float], runners: int, size: int, window: Window
) -> tuple[list[float], float]:
    """The pool written again, plainly: a sorted list of when each free slot frees, a list of idle pool runners;
    every minute of the window tops the idle ones up to `size` from slots free then, and outside it they go."""
    free = [-math.inf] * runners  # kept sorted
    idle: list[tuple[float, float]] = []  # (ready, started)
    waits, cost = [], 0.0
    minute = math.ceil(arrivals[0] / 60) * 60
    for arrival, run in zip(arrivals, runs, strict=True):
        while minute <= arrival:
            day, into = divmod(int(minute), 86400)
            inside = (day + 3) % 7 in window.weekdays and window.first <= into // 3600 <= window.last
            if inside:
                while len(idle) < size and free and free[0] <= minute:
                    free.pop(0)
                    idle.append((minute + STARTUP, minute))
                    idle.sort()
            else:
                cost += sum(minute - started for _, started in idle)
                for _ in idle:
                    bisect.insort(free, minute)
                idle = []
            minute += 60
        if idle:
            ready, started = idle.pop(0)
            begins = max(ready, arrival)
            cost += begins - started
        else:
            begins = max(arrival, free.pop(0)) + STARTUP
        bisect.insort(free, begins + run)
        waits.append(begins - arrival)
    cost += sum(max(0.0, minute - started) for _, started in idle)
    return waits, cost


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(0.9 * len(ordered))) - 1]


def test_the_pool_proposed_keeps_the_target_in_office_hours_and_none_outside_as_a_second_replay_confirms() -> None:
    history = office_hours()
    jobs = by_runner_type(history, START.timestamp(), END.timestamp())
    [answer] = analyse(jobs, START.timestamp(), END.timestamp(), parse_target(TARGET), STARTUP, pool=True)
    [entry] = answer.pool
    assert entry.window.schedule_expression == "cron(* 9-16 ? * MON-FRI *)" and entry.size is not None
    arrivals = list(jobs["linux.2xlarge"].queued)
    runs = [c - s for s, c in zip(jobs["linux.2xlarge"].started, jobs["linux.2xlarge"].completed, strict=True)]
    runners = 2 * answer.sizing.unlimited
    inside = [entry.window.holds(a) for a in arrivals]

    waits, cost = second_replay(arrivals, runs, runners, entry.size, entry.window)
    replayed = replay_pool(arrivals, runs, STARTUP, runners, entry.size, entry.window.holds)
    assert replayed.waits == waits and math.isclose(replayed.pool_seconds, cost)
    # The target holds for the jobs in its hours; one runner fewer misses it; outside them no pool ran.
    assert p90([w for w, i in zip(waits, inside, strict=True) if i]) < 30
    fewer, _ = second_replay(arrivals, runs, runners, entry.size - 1, entry.window)
    assert p90([w for w, i in zip(fewer, inside, strict=True) if i]) >= 30
    assert all(w == STARTUP for w, i in zip(waits, inside, strict=True) if not i)
    weeks = 2.0
    assert math.isclose(entry.instance_hours_a_week, cost / 3600 / weeks)
    without, _ = second_replay(arrivals, runs, runners, 0, entry.window)
    assert math.isclose(entry.queue_hours_saved_a_week, (sum(without) - sum(waits)) / 3600 / weeks)


def test_pool_and_pool_size_on_the_command_line() -> None:
    history = office_hours()
    now = END + timedelta(minutes=5)
    argv = ["capacity", "--table", "t", "--from", START.isoformat(), "--to", END.isoformat(), "--target", TARGET]
    printed: list[str] = []
    code = run_capacity(
        build_parser().parse_args([*argv, "--startup", "90s", "--pool", "--pool-size", "2", "--json"]),
        read=lambda _s, _e: iter(history),
        now=now,
        out=printed.append,
    )
    assert code == 0
    [found] = json.loads(printed[0])["runner_types"]
    [proposed] = found["pool_config"]
    assert proposed["schedule_expression"] == "cron(* 9-16 ? * MON-FRI *)"
    assert proposed["schedule_expression_timezone"] == "UTC" and proposed["size"] >= 1
    assert found["pool_what_if"]["size"] == 2
    [what_if] = found["pool_what_if"]["entries"]
    assert what_if["schedule_expression"] == proposed["schedule_expression"]
    printed.clear()
    assert run_capacity(build_parser().parse_args([*argv, "--pool"]), read=lambda _s, _e: iter(history), now=now,
                        out=printed.append) == 0  # fmt: skip
    assert "pool_config: cron(* 9-16 ? * MON-FRI *) UTC, size" in printed[0]


def test_pool_plot_draws_each_schedules_cost_against_the_queue_time_it_buys(tmp_path: Path) -> None:
    history = office_hours()
    jobs = by_runner_type(history, START.timestamp(), END.timestamp())
    [answer] = analyse(
        jobs, START.timestamp(), END.timestamp(), parse_target(TARGET), STARTUP, ["linux.2xlarge"], pool=True
    )
    [entry], [curve] = answer.pool, answer.pool_curves
    assert entry.size is not None and [p.size for p in curve] == list(range(2 * entry.size + 1))
    assert curve[0].instance_hours_a_week == 0 and curve[0].after == curve[0].before  # no pool: no cost, no gain
    assert curve[entry.size].after < 30 <= curve[entry.size - 1].after  # the proposed size is the first to meet it
    costs = [p.instance_hours_a_week for p in curve]
    assert costs == sorted(costs)  # a larger pool idles more
    plot = tmp_path / "pool.png"
    argv = ["capacity", "--table", "t", "--from", START.isoformat(), "--to", END.isoformat(), "--target", TARGET]
    args = build_parser().parse_args([*argv, "--pool", "--runner-type", "linux.2xlarge", "--plot", str(plot)])
    printed: list[str] = []
    now = END + timedelta(minutes=5)
    assert run_capacity(args, read=lambda _s, _e: iter(history), now=now, out=printed.append) == 0
    assert plot.stat().st_size > 10_000 and "cost against its queue time written to" in printed[-1]
