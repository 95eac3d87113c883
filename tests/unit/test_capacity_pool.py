"""`capacity --pool`: the pool_config proposed from a fortnight of office-hours demand, checked against an
independent replay of the same history with that pool: runners and a line of waiting jobs played as events, written
here apart from the slot heap capacity/pool.py replays."""

from __future__ import annotations

import heapq
import json
import math
import random
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from queuewatch_cli.commands.capacity.analysis import analyse
from queuewatch_cli.commands.capacity.history import JobTimes, by_runner_type
from queuewatch_cli.commands.capacity.pool import Window, replay_pool
from queuewatch_cli.commands.capacity.run import parse_target, run_capacity
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


@dataclass
class Runner:
    """One runner of the fleet: a pool runner until a job claims it, then that job's until it ends."""

    started: float  # when it was asked for (its instance-hours start)
    ready: float
    job: int | None = None


def fleet_replay(
    arrivals: list[float], runs: list[float], maximum: int, size: int, window: Window
) -> tuple[list[float], float]:
    """The same history played as events on a fleet of runner objects, written apart from capacity/pool.py: no
    slots, only runners alive and jobs waiting in line. At one instant a job's end comes first (its runner is
    gone), then the schedule's minute, then an arrival. Returns each job's queue time and the pool's idle
    seconds (from a pool runner's start to its job's start, or to its scale-down, or to the first minute after
    the last arrival)."""
    END, MINUTE, ARRIVAL = 0, 1, 2
    events: list[tuple[float, int, int]] = [(a, ARRIVAL, n) for n, a in enumerate(arrivals)]
    first = math.ceil(arrivals[0] / 60) * 60
    events += [(float(m), MINUTE, 0) for m in range(int(first), int(arrivals[-1]) + 1, 60)]
    heapq.heapify(events)
    alive: list[Runner] = []
    waiting: deque[int] = deque()
    waits = [math.nan] * len(arrivals)
    idle_seconds = 0.0

    def begin(job: int, runner: Runner, at: float) -> None:
        runner.job = job
        begins = max(runner.ready, at)
        waits[job] = begins - arrivals[job]
        heapq.heappush(events, (begins + runs[job], END, id(runner)))

    while events:
        at, kind, which = heapq.heappop(events)
        if kind == END:
            alive[:] = [r for r in alive if id(r) != which]
            if waiting:  # the first in line gets a fresh runner in the room the ended one left
                fresh = Runner(at, at + STARTUP)
                alive.append(fresh)
                begin(waiting.popleft(), fresh, at)
        elif kind == MINUTE:
            unclaimed = [r for r in alive if r.job is None]
            day, into = divmod(int(at), 86400)
            if (day + 3) % 7 in window.weekdays and window.first <= into // 3600 <= window.last:
                for _ in range(min(size - len(unclaimed), maximum - len(alive))):
                    alive.append(Runner(at, at + STARTUP))
            else:  # out of hours: every pool runner no job has claimed is scaled down
                idle_seconds += sum(at - r.started for r in unclaimed)
                alive[:] = [r for r in alive if r.job is not None]
        else:
            unclaimed = [r for r in alive if r.job is None]
            if unclaimed:
                runner = min(unclaimed, key=lambda r: r.ready)
                idle_seconds += max(runner.ready, at) - runner.started
                begin(which, runner, at)
            elif len(alive) < maximum and not waiting:
                fresh = Runner(at, at + STARTUP)
                alive.append(fresh)
                begin(which, fresh, at)
            else:
                waiting.append(which)
    after_last = math.floor(arrivals[-1] / 60) * 60 + 60
    idle_seconds += sum(after_last - r.started for r in alive if r.job is None)
    return waits, idle_seconds


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(0.9 * len(ordered))) - 1]


def test_the_pool_proposed_keeps_the_target_in_office_hours_and_none_outside_as_an_independent_replay_confirms() -> (
    None
):
    history = office_hours()
    jobs = by_runner_type(history, START.timestamp(), END.timestamp())
    [answer] = analyse(jobs, START.timestamp(), END.timestamp(), parse_target(TARGET), STARTUP, pool=True)
    [entry] = answer.pool
    assert entry.window.schedule_expression == "cron(* 9-16 ? * MON-FRI *)" and entry.size is not None
    assert entry.config() == {
        "schedule_expression": "cron(* 9-16 ? * MON-FRI *)",
        "schedule_expression_timezone": "UTC",
        "size": entry.size,
    }
    arrivals = list(jobs["linux.2xlarge"].queued)
    runs = [c - s for s, c in zip(jobs["linux.2xlarge"].started, jobs["linux.2xlarge"].completed, strict=True)]
    runners = 2 * answer.sizing.unlimited
    inside = [entry.window.holds(a) for a in arrivals]

    # Every claim of the entry, from the independent replay alone.
    waits, cost = fleet_replay(arrivals, runs, runners, entry.size, entry.window)
    assert p90([w for w, i in zip(waits, inside, strict=True) if i]) == entry.after < 30  # the target, in its hours
    fewer, _ = fleet_replay(arrivals, runs, runners, entry.size - 1, entry.window)
    assert p90([w for w, i in zip(fewer, inside, strict=True) if i]) >= 30  # one runner fewer misses it
    assert all(w == STARTUP for w, i in zip(waits, inside, strict=True) if not i)  # outside them no pool ran
    weeks = 2.0
    assert entry.instance_hours_a_week is not None and math.isclose(entry.instance_hours_a_week, cost / 3600 / weeks)
    without, _ = fleet_replay(arrivals, runs, runners, 0, entry.window)
    assert p90([w for w, i in zip(without, inside, strict=True) if i]) == entry.before
    saved = entry.queue_hours_saved_a_week
    assert saved is not None and math.isclose(saved, (sum(without) - sum(waits)) / 3600 / weeks)


def test_the_two_replays_agree_job_by_job_where_the_maximum_binds_and_jobs_wait_in_line() -> None:
    jobs = by_runner_type(office_hours(seed=11), START.timestamp(), END.timestamp())
    arrivals = list(jobs["linux.2xlarge"].queued)
    runs = [c - s for s, c in zip(jobs["linux.2xlarge"].started, jobs["linux.2xlarge"].completed, strict=True)]
    window = Window("MON-FRI", frozenset(range(5)), 9, 16)
    for maximum, size in ((4, 2), (4, 4), (6, 3), (3, 0)):
        waits, cost = fleet_replay(arrivals, runs, maximum, size, window)
        replayed = replay_pool(arrivals, runs, STARTUP, maximum, size, window.holds)
        assert max(waits) > STARTUP  # some job waited for a free runner: the line was used
        assert replayed.waits == waits and math.isclose(replayed.pool_seconds, cost), (maximum, size)


def test_pool_size_and_max_replay_the_history_as_the_independent_replay_does() -> None:
    history = office_hours()
    argv = ["capacity", "--table", "t", "--from", START.isoformat(), "--to", END.isoformat(), "--target", TARGET]
    argv += ["--startup", "90s", "--pool-size", "2", "--max", "4", "--json"]
    printed: list[str] = []
    now = END + timedelta(minutes=5)
    assert (
        run_capacity(build_parser().parse_args(argv), read=lambda _s, _e: iter(history), now=now, out=printed.append)
        == 0
    )
    [found] = json.loads(printed[0])["runner_types"]
    [what_if] = found["pool_what_if"]["entries"]
    jobs = by_runner_type(history, START.timestamp(), END.timestamp())["linux.2xlarge"]
    arrivals, runs = list(jobs.queued), [c - s for s, c in zip(jobs.started, jobs.completed, strict=True)]
    window = Window("MON-FRI", frozenset(range(5)), 9, 16)
    inside = [window.holds(a) for a in arrivals]
    waits, cost = fleet_replay(arrivals, runs, 4, 2, window)  # at most 4 runners, 2 of them the pool's
    without, _ = fleet_replay(arrivals, runs, 4, 0, window)
    assert what_if["target_value_seconds"]["with"] == round(
        p90([w for w, i in zip(waits, inside, strict=True) if i]), 1
    )
    assert what_if["target_value_seconds"]["without"] == round(
        p90([w for w, i in zip(without, inside, strict=True) if i]), 1
    )
    assert what_if["idle_instance_hours_a_week"] == round(cost / 3600 / 2, 2)


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
    costs = [p.idle_instance_hours for p in curve]
    assert costs == sorted(costs)  # a larger pool idles more
    plot = tmp_path / "pool.png"
    argv = ["capacity", "--table", "t", "--from", START.isoformat(), "--to", END.isoformat(), "--target", TARGET]
    args = build_parser().parse_args([*argv, "--pool", "--runner-type", "linux.2xlarge", "--plot", str(plot)])
    printed: list[str] = []
    now = END + timedelta(minutes=5)
    assert run_capacity(args, read=lambda _s, _e: iter(history), now=now, out=printed.append) == 0
    assert plot.stat().st_size > 10_000 and "cost against its queue time written to" in printed[-1]


def test_a_history_under_a_week_gives_its_own_totals_never_scaled_up_to_a_week() -> None:
    """Two days of office hours: the pool's cost and gain are the two days' totals, said as such (a week's rate
    would be 3.5 times what the history holds, a pattern of weekdays it has never seen)."""
    end = START + timedelta(days=2)
    history = [job for job in office_hours() if job.queued_at < end.timestamp()]
    argv = ["capacity", "--table", "t", "--from", START.isoformat(), "--to", end.isoformat(), "--target", TARGET]
    argv += ["--startup", "90s", "--pool-size", "2", "--max", "4"]
    printed: list[str] = []
    now = end + timedelta(minutes=5)
    parse = build_parser().parse_args
    assert run_capacity(parse([*argv, "--json"]), read=lambda _s, _e: iter(history), now=now, out=printed.append) == 0
    [found] = json.loads(printed[0])["runner_types"]
    [what_if] = found["pool_what_if"]["entries"]
    jobs = by_runner_type(history, START.timestamp(), end.timestamp())["linux.2xlarge"]
    arrivals, runs = list(jobs.queued), [c - s for s, c in zip(jobs.started, jobs.completed, strict=True)]
    _, cost = fleet_replay(arrivals, runs, 4, 2, Window("MON-FRI", frozenset(range(5)), 9, 16))
    assert what_if["idle_instance_hours"] == round(cost / 3600, 2) and what_if["history_seconds"] == 2 * 86400
    assert what_if["idle_instance_hours_a_week"] is None and what_if["queue_hours_saved_a_week"] is None
    printed.clear()
    assert run_capacity(parse(argv), read=lambda _s, _e: iter(history), now=now, out=printed.append) == 0
    [line] = [line for line in printed[0].splitlines() if "with a pool of 2:" in line]
    assert f"costs {cost / 3600:.1f} idle instance-hours over the 2d of history" in line
    assert "(under a week: totals, not a weekly rate)" in line and "a week" not in line.split("(under")[0]
