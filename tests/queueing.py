"""Queues whose answer is known, solved apart from the code under test; and a second implementation of the
pool model. Used by the capacity tests and the bench."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

BATCHES = 40


def independent_waits(arrivals: Sequence[float], runs: Sequence[float], runners: int, startup: float) -> list[float]:
    """Written apart from simulate(): each runner's own clock, the job taken by the runner free earliest
    (a linear scan, no heap), the wait computed from the start."""
    runner_free = [0.0] * runners
    first = True
    waits = []
    for arrival, run in zip(arrivals, runs, strict=True):
        if first:
            runner_free = [min(arrival, 0.0)] * runners
            first = False
        chosen = min(range(runners), key=lambda i: runner_free[i])
        start = max(arrival, runner_free[chosen]) + startup
        runner_free[chosen] = start + run
        waits.append(start - arrival)
    return waits


def poisson_arrivals(rate: float, count: int, rng: random.Random) -> list[float]:
    now, out = 0.0, []
    for _ in range(count):
        now += rng.expovariate(rate)
        out.append(now)
    return out


def md_c_chain(rate: float, run: float, runners: int, states: int = 400) -> list[float]:
    """The stationary law of the number in an M/D/c system, from Crommelin's chain, by iteration."""
    mean = rate * run
    arrivals = [math.exp(-mean)]
    while len(arrivals) < states and (len(arrivals) < mean or arrivals[-1] > 1e-18):
        arrivals.append(arrivals[-1] * mean / len(arrivals))  # the Poisson law, while it matters
    law = [1.0] + [0.0] * (states - 1)
    for _ in range(20_000):
        after = [0.0] * states
        for n, p in enumerate(law):
            if p < 1e-300:
                continue
            base = max(n - runners, 0)
            for a, chance in enumerate(arrivals[: states - base]):
                after[base + a] += p * chance
        total = sum(after)
        after = [p / total for p in after]
        if max(abs(x - y) for x, y in zip(after, law, strict=True)) < 1e-13:
            return after
        law = after
    raise AssertionError("the chain did not converge")


def batch_estimate(values: Sequence[float]) -> tuple[float, float]:
    """The mean and its standard error by batch means (waits of neighbouring jobs are correlated)."""
    size = len(values) // BATCHES
    means = [sum(values[i * size : (i + 1) * size]) / size for i in range(BATCHES)]
    mean = sum(means) / BATCHES
    spread = math.sqrt(sum((m - mean) ** 2 for m in means) / (BATCHES - 1))
    return mean, spread / math.sqrt(BATCHES)


def steady(waits: Sequence[float]) -> list[float]:
    return list(waits[len(waits) // 50 :])  # the first 2% dropped: the queue starts empty


def erlang_c(runners: int, offered: float) -> float:
    term = 1.0
    total = 1.0
    for k in range(1, runners):
        term *= offered / k
        total += term
    last = term * offered / runners * runners / (runners - offered)
    return last / (total + last)
