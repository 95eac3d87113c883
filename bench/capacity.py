"""`queuewatch capacity` and `queuewatch backtest --suggest` at 14 (or 90) days x 50,000 jobs a day: time and peak
memory, each with its verdict: whether it fits a laptop (LAPTOP_CPU_SECONDS of one core, LAPTOP_MIB resident).

Run: .venv/bin/python -m bench.capacity [jobs a day, default 50000] [days, default 14] [runner types, default 10]
(`make bench` runs 14 days and 90 days, the longest `JobHistoryDays` the docs price.)

The history: jobs spread over the runner types (the first few take most, as in real fleets), arriving by a
daily and weekly pattern, each run a log-normal time (median 12 minutes) after a start-up of 40-90 s; two
runner types queue for an hour three times in the range (their oldest job aging past 20 minutes), and one
spikes for a few minutes twice a day, noise.

- capacity: the command's own path from the job records on (run_capacity, with the table's read replaced by
  the generated jobs, fed lazily as read_history yields them); the time to generate them, measured apart, is
  taken out. The DynamoDB read is not in the figure: at 50,000 jobs a day it is about 2,000 jobs a Query page,
  350 pages for the fortnight.
- suggest: queuewatch_cli.commands.backtest.suggest over the same fortnight, one tick a minute. Each pass rebuilds the
  ticks from the jobs (each runner type's queue size and oldest wait, as the jobs replay does) rather than
  holding them, so memory is the jobs and the candidates' state; the rebuild is part of the time.

Each command runs in its own process, so each peak resident set size is its own; the process's size before
the command ran is printed beside it.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot, Snapshot
from queuewatch_cli.commands.capacity.history import JobTimes

START = datetime(2026, 11, 2, tzinfo=UTC)  # a Monday
DAY = 86400
INCIDENTS = ((0, 2 * DAY + 10 * 3600), (1, 6 * DAY + 15 * 3600), (0, 11 * DAY + 3 * 3600))  # (runner type, at)
NOISY = 2  # the runner type that spikes twice a day


LAPTOP_CPU_SECONDS = 600.0  # ten minutes of one core: past it, a user waits for an answer at the desk no longer
LAPTOP_MIB = 4096.0  # what one command may take on a 16 GB laptop beside a browser and an IDE


def verdict(figures: dict[str, float]) -> str:
    """Whether one command's run fits a laptop, and if not, which of the two it passes."""
    past = []
    if figures["cpu_seconds"] > LAPTOP_CPU_SECONDS:
        past.append(f"CPU over {LAPTOP_CPU_SECONDS / 60:.0f} minutes")
    if figures["peak_rss_mib"] > LAPTOP_MIB:
        past.append(f"memory over {LAPTOP_MIB / 1024:.0f} GiB")
    return "fits a laptop" if not past else "past a laptop: " + " and ".join(past)


def laptop_days(figures: dict[str, float], days: int) -> float:
    """Where a command stops fitting a laptop, in days of the same jobs a day: its CPU time and the memory it
    adds to the process grow with the history's length (every job read, every minute replayed), so each is
    scaled linearly from the run measured, and the first to reach its limit says where."""
    by_cpu = days * LAPTOP_CPU_SECONDS / max(figures["cpu_seconds"], 1e-9)
    grown = max(figures["peak_rss_mib"] - figures["before_mib"], 1e-9)
    by_memory = days * max(LAPTOP_MIB - figures["before_mib"], 0.0) / grown
    return min(by_cpu, by_memory)


def shares(runner_types: int) -> list[float]:
    weights = [1 / (n + 1) for n in range(runner_types)]
    return [w / sum(weights) for w in weights]


def rate_factor(at: float) -> float:
    """Busier in working hours, quieter at weekends."""
    moment = datetime.fromtimestamp(at, UTC)
    daily = 0.4 + 1.2 * math.exp(-(((moment.hour + moment.minute / 60) - 14) ** 2) / 18)
    return daily * (0.35 if moment.weekday() >= 5 else 1.0)


PEAK_FACTOR = 1.6
MEAN_FACTOR = sum(rate_factor(START.timestamp() + minute * 60) for minute in range(7 * 1440)) / (7 * 1440)


def jobs(per_day: int, days: int, runner_types: int, seed: int = 22) -> Iterator[JobTimes]:
    """The fortnight's jobs, generated as they are read: nothing held. `per_day` on average over a week."""
    rng = random.Random(seed)
    base = START.timestamp()
    for index, share in enumerate(shares(runner_types)):
        rate = per_day * share / DAY / MEAN_FACTOR
        at = base
        while True:
            at += rng.expovariate(rate * PEAK_FACTOR)
            if at >= base + days * DAY:
                break
            if rng.random() > rate_factor(at) / PEAK_FACTOR:
                continue  # thinning: arrivals follow the daily and weekly pattern
            wait = rng.uniform(40, 90)
            for who, when in INCIDENTS:
                if who == index and base + when <= at < base + when + 3600:
                    wait += 1200 + (at - base - when)  # stuck for the hour: every job waits past 20 minutes
            if index == NOISY and (at - base) % (DAY / 2) < 300:
                wait += 420  # a few minutes of queueing twice a day
            started = at + wait
            yield JobTimes(f"rt{index}", at, started, started + rng.lognormvariate(math.log(720), 0.8))


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_capacity_bench(per_day: int, days: int, runner_types: int) -> dict[str, float]:
    from queuewatch_cli.commands.capacity.run import run_capacity
    from queuewatch_cli.main import build_parser

    began, cpu = time.perf_counter(), time.process_time()
    generated = sum(1 for _ in jobs(per_day, days, runner_types))  # the harness's own time, taken out below
    generating, generating_cpu = time.perf_counter() - began, time.process_time() - cpu
    before = peak_rss_mib()
    began, cpu = time.perf_counter(), time.process_time()
    end = START + timedelta(days=days)
    args = build_parser().parse_args(
        ["capacity", "--table", "bench", "--from", START.isoformat(), "--to", end.isoformat(), "--json"]
    )
    printed: list[str] = []
    code = run_capacity(args, read=lambda s, e: jobs(per_day, days, runner_types), now=end, out=printed.append)
    elapsed = time.perf_counter() - began - generating
    cpu_seconds = time.process_time() - cpu - generating_cpu
    found = json.loads(printed[0])["runner_types"]
    assert sum(r["jobs"] for r in found) == generated
    return {
        "code": code,
        "jobs": generated,
        "seconds": elapsed,
        "cpu_seconds": round(cpu_seconds, 1),
        "generating_jobs_cpu_seconds": round(generating_cpu, 1),
        "peak_rss_mib": peak_rss_mib(),
        "before_mib": before,
        "largest_sized": max(r["sized"]["runners"] for r in found if r["sized"]),
    }


def ticks(history: list[list[tuple[float, float]]], days: int) -> Iterator[Snapshot]:
    """Each minute, each runner type's queued jobs and the oldest one's wait, rebuilt from (queued, started)."""
    waiting: list[list[tuple[float, float]]] = [[] for _ in history]  # (queued, started), lazily cleared
    starts = [sorted(started for _, started in jobs_of) for jobs_of in history]
    arrived = [0] * len(history)
    began = [0] * len(history)
    current: list[RunnerTypeSnapshot] = [_reading(f"rt{i}", 0, 0.0) for i in range(len(history))]
    shown: list[tuple[int, int]] = [(0, 0)] * len(history)
    for minute in range(days * 1440 + 1):
        now = START.timestamp() + minute * 60
        for index, jobs_of in enumerate(history):
            heap = waiting[index]
            while arrived[index] < len(jobs_of) and jobs_of[arrived[index]][0] <= now:
                heapq.heappush(heap, jobs_of[arrived[index]])
                arrived[index] += 1
            while began[index] < len(starts[index]) and starts[index][began[index]] <= now:
                began[index] += 1
            while heap and heap[0][1] <= now:
                heapq.heappop(heap)
            figures = (arrived[index] - began[index], int(now - heap[0][0]) if heap else 0)
            if figures != shown[index]:
                shown[index] = figures
                current[index] = _reading(f"rt{index}", *figures)
        yield Snapshot.model_construct(
            snapshot_id=f"bench-{minute}",
            collected_at=datetime.fromtimestamp(now, UTC),
            runner_types=list(current),
            discovery=[],
            triage_window_seconds=900,
            baseline_seconds=10800,
            unmatched_jobs=[],
            expired_jobs=0,
        )


def _reading(name: str, size: int, age: float) -> RunnerTypeSnapshot:
    return RunnerTypeSnapshot.model_construct(
        name=name,
        region="us-east-1",
        queue_name=f"q-{name}",
        team=None,
        signals={SignalName.QUEUE_SIZE: Reading.of(size), SignalName.QUEUE_TIME: Reading.of(age)},
        oldest_jobs=[],
    )


def suggest_config(runner_types: int) -> str:
    return (
        "version: 1\ndefaults:\n  region: us-east-1\n  rule: {team: ci-infra, keep_firing_for: 5m}\nrunner_types:\n"
        + "".join(f"  - {{name: rt{n}, queue: {{name: q-rt{n}}}}}\n" for n in range(runner_types))
        + "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 5m, queue_size: 0}, breach_when: all,"
        " for: 0s, priority: P2, group_by: runner_type}\n"
    )


def run_suggest_bench(per_day: int, days: int, runner_types: int) -> dict[str, float]:
    from queuewatch_cli.commands.backtest.suggest import Incident, parse_budget, suggest

    before = peak_rss_mib()
    began, cpu = time.perf_counter(), time.process_time()
    history: list[list[tuple[float, float]]] = [[] for _ in range(runner_types)]
    for job in jobs(per_day, days, runner_types):
        assert job.started_at is not None
        history[int(job.runner_type.removeprefix("rt"))].append((job.queued_at, job.started_at))
    for jobs_of in history:
        jobs_of.sort()
    config = parse_config(suggest_config(runner_types), source="bench.yaml")
    incidents = [
        Incident(
            datetime.fromtimestamp(START.timestamp() + at, UTC),
            datetime.fromtimestamp(START.timestamp() + at + 3600, UTC),
            frozenset({f"rt{who}"}),
            line,
        )
        for line, (who, at) in enumerate(INCIDENTS, start=1)
    ]
    passes = 0

    def source() -> Iterator[Snapshot]:
        nonlocal passes
        passes += 1
        return ticks(history, days)

    end = START + timedelta(days=days)
    [answer] = suggest(config, source, START, end, parse_budget("1/week"), incidents)
    elapsed = time.perf_counter() - began
    chosen = answer.chosen
    return {
        "candidates": len(answer.tried),
        "passes": passes,
        "seconds": elapsed,
        "cpu_seconds": round(time.process_time() - cpu, 1),
        "peak_rss_mib": peak_rss_mib(),
        "before_mib": before,
        "chosen": chosen.setting.describe() if chosen else "none",  # type: ignore[dict-item]
        "chosen_pages": len(chosen.episodes) if chosen else -1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__)
    parser.add_argument("per_day", nargs="?", type=int, default=50_000)
    parser.add_argument("days", nargs="?", type=int, default=14)
    parser.add_argument("runner_types", nargs="?", type=int, default=10)
    parser.add_argument("--only", choices=("capacity", "suggest"), help="one command, in this process")
    args = parser.parse_args()
    if args.only:
        run = run_capacity_bench if args.only == "capacity" else run_suggest_bench
        print(json.dumps(run(args.per_day, args.days, args.runner_types)))
        return
    shape = f"{args.days} days x {args.per_day:,} jobs a day, {args.runner_types} runner types"
    for command in ("capacity", "suggest"):
        shape_args = map(str, (args.per_day, args.days, args.runner_types))
        answer = subprocess.run(
            [sys.executable, "-m", "bench.capacity", *shape_args, "--only", command],
            check=True,
            capture_output=True,
            text=True,
        )
        figures = json.loads(answer.stdout.strip().splitlines()[-1])
        rest = ", ".join(
            f"{k} {v}" for k, v in figures.items() if k not in {"seconds", "cpu_seconds", "peak_rss_mib", "before_mib"}
        )
        print(
            f"{command} over {shape}: {figures['seconds']:.1f} s ({figures['cpu_seconds']:.1f} s of CPU), "
            f"peak RSS {figures['peak_rss_mib']:.0f} MiB "
            f"(before it ran {figures['before_mib']:.0f} MiB); {rest}; verdict: {verdict(figures)}; "
            f"past a laptop from about {laptop_days(figures, args.days):,.0f} days of {args.per_day:,} jobs a day"
        )


if __name__ == "__main__":
    main()
