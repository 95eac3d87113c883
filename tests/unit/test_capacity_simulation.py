"""The pool model checked against queues whose answer is known, and against a second implementation.

Known answers used (each solved here, independently of the code under test):
- M/D/c (Poisson arrivals, fixed run time D, c runners): the number in the system at multiples of D is a
  Markov chain, N' = max(N - c, 0) + Poisson(lambda D) (Crommelin). Its stationary law, solved numerically, is
  the law at any moment; Poisson arrivals see it (PASTA), so P(wait > 0) = P(N >= c) and, by Little's law,
  the mean wait is E[(N - c)+] / lambda.
- M/D/1: the whole waiting-time distribution (Erlang's formula).
- M/M/c (exponential run times): Erlang C, P(wait > t) = C exp(-(c mu - lambda) t).

Tolerance: a simulation of n jobs estimates each figure with a sampling error; it is measured here by batch
means (40 batches), and each check allows 4 standard errors. The test also holds that error small (so the
checks have teeth): under 0.006 on a probability, under 4% on a mean.
"""

from __future__ import annotations

import math
import random

import pytest
from queueing import batch_estimate, erlang_c, independent_waits, md_c_chain, poisson_arrivals, steady

from queuewatch.model.forecast.model import Target, percentile, simulate, smallest_pool


def test_the_simulation_and_an_independent_one_agree_job_for_job() -> None:
    rng = random.Random(7)
    arrivals = sorted(rng.uniform(0, 50_000) for _ in range(3000))
    runs = [rng.choice([30.0, 600.0, rng.expovariate(1 / 400)]) for _ in arrivals]
    for runners, startup in ((1, 0.0), (3, 45.0), (7, 90.0), (40, 10.0)):
        ours = simulate(arrivals, runs, runners, startup)
        theirs = independent_waits(arrivals, runs, runners, startup)
        assert list(ours) == pytest.approx(theirs, abs=1e-6)


@pytest.mark.parametrize(("runners", "load"), [(4, 0.8), (10, 0.9)])
def test_m_d_c_wait_probability_and_mean_wait_match_the_chain(runners: int, load: float) -> None:
    run = 600.0
    rate = load * runners / run
    law = md_c_chain(rate, run, runners)
    exact_delayed = sum(law[runners:])
    exact_mean = sum((n - runners) * p for n, p in enumerate(law) if n > runners) / rate
    arrivals = poisson_arrivals(rate, 300_000, random.Random(runners))
    waits = steady(simulate(arrivals, [run] * len(arrivals), runners, 0.0))
    delayed, delayed_error = batch_estimate([1.0 if w > 0 else 0.0 for w in waits])
    mean, mean_error = batch_estimate(waits)
    assert delayed_error < 0.006
    assert mean_error < 0.04 * exact_mean
    assert abs(delayed - exact_delayed) < 4 * delayed_error, (delayed, exact_delayed, delayed_error)
    assert abs(mean - exact_mean) < 4 * mean_error, (mean, exact_mean, mean_error)
    # Erlang C (exponential run times) bounds the fixed run times' delay probability from above.
    assert exact_delayed < erlang_c(runners, rate * run)


def test_m_d_1_waiting_time_distribution_has_erlangs_shape() -> None:
    run, load = 100.0, 0.7
    rate = load / run

    def exact_at_most(t: float) -> float:
        return (1 - load) * sum(
            (rate * (k * run - t)) ** k / math.factorial(k) * math.exp(-rate * (k * run - t))
            for k in range(int(t // run) + 1)
        )

    arrivals = poisson_arrivals(rate, 300_000, random.Random(1))
    waits = steady(simulate(arrivals, [run] * len(arrivals), 1, 0.0))
    for t in (0.0, 50.0, 100.0, 200.0, 300.0):
        found, error = batch_estimate([1.0 if w <= t else 0.0 for w in waits])
        assert error < 0.006
        assert abs(found - exact_at_most(t)) < 4 * error, (t, found, exact_at_most(t), error)


def test_m_m_c_wait_tail_is_erlang_c() -> None:
    runners, mean_run, load = 5, 300.0, 0.85
    rate = load * runners / mean_run
    rng = random.Random(3)
    arrivals = poisson_arrivals(rate, 300_000, rng)
    runs = [rng.expovariate(1 / mean_run) for _ in arrivals]
    waits = steady(simulate(arrivals, runs, runners, 0.0))
    c = erlang_c(runners, rate * mean_run)
    for t in (0.0, 60.0, 300.0, 900.0):
        found, error = batch_estimate([1.0 if w > t else 0.0 for w in waits])
        exact = c * math.exp(-(runners / mean_run - rate) * t)
        assert abs(found - exact) < 4 * error, (t, found, exact, error)


def test_a_start_up_delay_is_added_to_every_wait_and_holds_the_slot() -> None:
    # Two jobs, one runner, 60 s start-up: the second waits for the first's start-up and run, then its own.
    waits = simulate([0.0, 10.0], [100.0, 100.0], 1, 60.0)
    assert list(waits) == [60.0, 60.0 + 100.0 + 60.0 - 10.0]


def test_the_smallest_pool_is_the_first_n_that_meets_the_target_counting_up() -> None:
    rng = random.Random(11)
    arrivals = sorted(rng.uniform(0, 20 * 86400) for _ in range(6000))
    runs = [rng.lognormvariate(6.0, 1.0) for _ in arrivals]
    for target in (Target(90, 300), Target(50, 61), Target(99, 1800, strict=False)):
        sizing = smallest_pool(arrivals, runs, 60.0, target)
        counted = next(
            n
            for n in range(1, 500)
            if target.met_by(percentile(sorted(independent_waits(arrivals, runs, n, 60.0)), target.percentile))
        )
        assert sizing.runners == counted


def test_no_pool_meets_a_target_under_the_start_up_delay() -> None:
    sizing = smallest_pool([0.0, 5.0, 9.0], [10.0, 10.0, 10.0], 120.0, Target(90, 60))
    assert sizing.runners is None
    assert sizing.unlimited == 3
