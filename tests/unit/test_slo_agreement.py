"""SLO burn rates, budgets and pages against an independent computation on synthetic histories: a steady
fleet, a fleet with two incidents, a quiet GPU pool beside a busy one, and a history shorter than the window.

The system under test is the live path, replayed tick by tick (backtest/slo_replay.py): the track stage's
contributions, the collector's waiting jobs and windows, the pure evaluator and its state. The expected
figures are computed here from the jobs alone, by the documented conventions, without any of that code."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from job_records import job_record

from queuewatch.alerting.alert_state import PageKind
from queuewatch.alerting.slo_summary import summarize
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import JobRecord
from queuewatch.model.slo import Counts, budget_left
from queuewatch_cli.commands.backtest.slo_replay import SloCounters, replay_slos

DAY0 = datetime(2026, 11, 2, tzinfo=UTC)
HEAD = """version: 1
runner_types:
  - {name: linux-a, team: ci-infra, queue: {name: q-linux-a}}
  - {name: linux-b, team: ci-infra, queue: {name: q-linux-b}}
  - {name: gpu-h100, team: ml-infra, queue: {name: q-gpu-h100}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 6h}}
slos:
"""
LINUX = "  - {name: linux, match: ['linux-*'], objective: 99%, queue_time_under: 2m, team: ci-infra}\n"
T = timedelta(minutes=2)


def job(number: int, runner_type: str, queued: datetime, wait: timedelta | None) -> JobRecord:
    """A job queued at `queued` that starts `wait` later (None: it never starts before the test ends)."""
    started = queued + wait if wait is not None else None
    return job_record(number, runner_type, queued, started_at=started, expires_at=queued + timedelta(days=30))


def steady(per_day: int, runner_types: list[str], start: datetime, end: datetime, seed: int) -> list[JobRecord]:
    """Jobs arriving evenly, most starting within 10-60 s, one in 200 after 5 minutes."""
    draw = random.Random(seed)
    gap = 86400 / per_day
    jobs, at, number = [], start, seed * 10_000_000
    while at < end:
        number += 1
        wait = timedelta(minutes=5) if draw.random() < 0.005 else timedelta(seconds=draw.uniform(10, 60))
        jobs.append(job(number, draw.choice(runner_types), at, wait))
        at += timedelta(seconds=gap)
    return jobs


# The independent computation: the conventions of docs/alerts.md, from the jobs alone.
def floor_minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def expected_counts(jobs: list[JobRecord], now: datetime, seconds: int, threshold: timedelta = T) -> Counts:
    end = floor_minute(now)  # the window: the whole minutes ending at now's minute
    first = end - timedelta(seconds=seconds)
    good = bad = 0
    for j in jobs:
        assert j.queued_at is not None
        if j.queued_at > now:
            continue
        turned_bad = j.queued_at + threshold
        if j.started_at is not None and j.started_at <= now:
            is_good = j.started_at - j.queued_at < threshold
            moment = j.started_at if is_good else turned_bad
        elif now >= turned_bad and now - j.queued_at <= timedelta(hours=24):
            is_good, moment = False, turned_bad  # still waiting past the threshold
        else:
            continue
        if first <= moment < end:
            good, bad = good + is_good, bad + (not is_good)
    return Counts(good, bad)


def expected_oldest_wait(jobs: list[JobRecord], now: datetime) -> timedelta | None:
    """How long the longest-waiting job has waited at `now` (jobs queued over 24 hours ago are lost)."""
    waits = [
        now - j.queued_at
        for j in jobs
        if j.queued_at is not None
        and j.queued_at <= now
        and (j.started_at is None or j.started_at > now)
        and now - j.queued_at <= timedelta(hours=24)
    ]
    return max(waits, default=None)


def expected_firing(
    jobs: list[JobRecord],
    counts: Callable[[datetime, int], Counts],
    now: datetime,
    budget: float,
    min_jobs: int,
    ceiling: timedelta | None,
) -> set[str]:
    """`counts(now, seconds)`: expected_counts over the same jobs."""
    firing = set()
    for name, factor, long, short in (
        ("fast", 14.4, 3600, 300),
        ("slow", 6.0, 21600, 1800),
        ("ticket", 1, 259200, 21600),
    ):
        long_counts, short_counts = counts(now, long), counts(now, short)

        def burn(c: Counts) -> float:
            return c.bad / c.total / budget if c.total else 0.0

        if long_counts.total >= min_jobs and burn(long_counts) >= factor and burn(short_counts) >= factor:
            firing.add(name)
    oldest = expected_oldest_wait(jobs, now)
    if ceiling is not None and oldest is not None and oldest > ceiling:
        firing.add("ceiling")
    return firing


def agree(jobs: list[JobRecord], config_text: str, start: datetime, end: datetime, tick: timedelta) -> list[Any]:
    """Replay, check every window and every pair's state against the independent figures; the pages."""
    config = parse_config(config_text)
    expected: dict[tuple[datetime, int], Counts] = {}

    def counts(now: datetime, seconds: int) -> Counts:
        """Each window's figures once a tick: the windows and the burn rates ask for the same ones."""
        if (now, seconds) not in expected:
            expected[now, seconds] = expected_counts(jobs, now, seconds)
        return expected[now, seconds]

    pages = []
    for now, snapshot, sent, firing in replay_slos(config, jobs, start, end, tick):
        [reading] = snapshot.slos
        for window in reading.windows:
            assert (window.good, window.bad) == tuple(vars(counts(now, window.seconds)).values()), (
                now,
                window,
            )
        got = {key.runner_type for key in firing}
        [slo] = config.resolved_slos
        ceiling = timedelta(seconds=slo.page_when_waiting_over) if slo.page_when_waiting_over else None
        assert got == expected_firing(jobs, counts, now, 0.01, slo.min_jobs, ceiling), now
        pages += sent
    return pages


def test_a_steady_fleet_burns_under_every_factor_and_never_pages() -> None:
    jobs = steady(5000, ["linux-a", "linux-b"], DAY0, DAY0 + timedelta(days=1), seed=1)
    pages = agree(jobs, HEAD + LINUX, DAY0 + timedelta(hours=6), DAY0 + timedelta(hours=23), timedelta(minutes=20))
    assert pages == []


def test_two_incidents_page_fast_then_slow_and_resolve() -> None:
    end = DAY0 + timedelta(days=1)
    jobs = steady(5000, ["linux-a", "linux-b"], DAY0, end, seed=2)
    outage = (DAY0 + timedelta(hours=8), DAY0 + timedelta(hours=8, minutes=40))
    degraded = (DAY0 + timedelta(hours=14), DAY0 + timedelta(hours=19))
    shaped = []
    for original in jobs:
        queued = original.queued_at
        assert queued is not None
        shape = original
        if outage[0] <= queued < outage[1]:  # nothing starts until the outage ends
            shape = original.model_copy(update={"started_at": outage[1] + timedelta(seconds=30)})
        elif degraded[0] <= queued < degraded[1] and original.job_id % 10 == 0:  # one in ten waits 15 minutes
            shape = original.model_copy(update={"started_at": queued + timedelta(minutes=15)})
        shaped.append(shape)
    pages = agree(shaped, HEAD + LINUX, DAY0 + timedelta(hours=7), end, timedelta(minutes=10))
    fired = [(p.at, p.kind, p.members) for p in pages if p.rule == "slo:linux"]
    firing_pages = [(at, members) for at, kind, members in fired if kind in (PageKind.NEW, PageKind.UPDATE)]
    # The outage pages fast while it lasts (waiting jobs burn), not after it ends; the degradation pages slow.
    assert firing_pages and outage[0] < firing_pages[0][0] < outage[1] and "fast" in firing_pages[0][1]
    assert any(degraded[0] < at <= degraded[1] + timedelta(hours=1) and "slow" in m for at, m in firing_pages)
    assert not any(degraded[0] < at <= degraded[1] and "fast" in m for at, m in firing_pages)
    assert fired[-1][1] is PageKind.RESOLVED


def test_a_quiet_gpu_pool_pages_for_one_job_waiting_3h_and_a_busy_pool_not_for_one_slow_job() -> None:
    gpu = (
        "  - {name: gpu, match: ['gpu-*'], objective: 99%, queue_time_under: 2m, team: ml-infra, min_jobs: 10, "
        "page_when_waiting_over: 1h}\n"
    )
    # Five jobs a day for three days; on the third day one waits 3 hours.
    jobs = [
        job(100 + d * 5 + k, "gpu-h100", DAY0 + timedelta(days=d, hours=2 + 4 * k), timedelta(seconds=40))
        for d in range(3)
        for k in range(5)
    ]
    slow_one = jobs[-3].model_copy(update={"started_at": jobs[-3].queued_at + timedelta(hours=3)})  # type: ignore[operator]
    jobs[-3] = slow_one
    pages = agree(jobs, HEAD + gpu, DAY0 + timedelta(days=2), DAY0 + timedelta(days=3), timedelta(minutes=5))
    firing_at: dict[str, datetime] = {}
    for page in pages:
        for member in page.members:
            firing_at.setdefault(f"{page.rule}/{member}", page.at)
    assert slow_one.queued_at is not None
    ceiling = firing_at["slo:gpu/ceiling"]
    assert slow_one.queued_at + timedelta(hours=1) < ceiling <= slow_one.queued_at + timedelta(hours=1, minutes=5)
    assert "slo:gpu/fast" not in firing_at and "slo:gpu/slow" not in firing_at  # too few jobs to judge a rate
    assert "slo:gpu:ticket/ticket" in firing_at  # the longer window still holds 15 jobs, one of them bad

    # 5,000 jobs a day, every one quick but one that waits 30 minutes: nothing pages.
    busy = [j for j in steady(5000, ["linux-a"], DAY0, DAY0 + timedelta(hours=12), seed=3)]
    busy = [j.model_copy(update={"started_at": j.queued_at + timedelta(seconds=30)}) for j in busy]  # type: ignore[operator]
    busy[1000] = busy[1000].model_copy(update={"started_at": busy[1000].queued_at + timedelta(minutes=30)})  # type: ignore[operator]
    pages = agree(busy, HEAD + LINUX, DAY0 + timedelta(hours=3), DAY0 + timedelta(hours=8), timedelta(minutes=5))
    assert pages == []


def test_a_history_shorter_than_the_window_budgets_the_jobs_it_holds() -> None:
    # Two days of counters under a 28-day window: the budget is 1% of the jobs counted, not of 28 days' worth.
    jobs = steady(2000, ["linux-a"], DAY0, DAY0 + timedelta(days=2), seed=4)
    end = DAY0 + timedelta(days=2)
    counted = expected_counts(jobs, end, 28 * 86400)
    config = parse_config(HEAD + LINUX)
    [slo] = config.resolved_slos
    left_jobs, left_fraction = budget_left(counted, slo)
    assert left_jobs == pytest.approx(0.01 * counted.total - counted.bad)
    assert left_fraction == pytest.approx((0.01 * counted.total - counted.bad) / (0.01 * counted.total))
    assert budget_left(Counts(), slo) == (0.0, 1.0)
    # The report's summary over the counters the live path filled agrees: the jobs counted, not 28 days' worth.
    counters = SloCounters(config, jobs)
    counters.readings_at(end)
    summary = summarize(slo, config, counters.counted[slo.name], [], end)
    assert (summary.jobs, summary.bad) == (counted.total, counted.bad)
    assert summary.budget_left_jobs == pytest.approx(0.01 * counted.total - counted.bad)
    assert summary.history_from == DAY0.isoformat()  # said: the window holds two days, not 28
    # From the first tick of the history, every window (each longer than what exists) holds what exists.
    assert (
        agree(jobs, HEAD + LINUX, DAY0 + timedelta(minutes=10), DAY0 + timedelta(hours=3), timedelta(minutes=10)) == []
    )


@pytest.mark.parametrize("offset", [timedelta(0), timedelta(minutes=2, seconds=30)])
def test_the_window_edges_are_the_whole_minutes_ending_at_the_ticks_minute(offset: timedelta) -> None:
    # A tick on a minute's turn (10:00:00) and one inside a minute (10:02:30), with jobs decided on the edges.
    now = DAY0 + timedelta(hours=10) + offset
    end = floor_minute(now)  # the window ends where the tick's minute starts
    start = end - timedelta(hours=1)
    second = timedelta(seconds=1)
    jobs = [
        job(1, "linux-a", start - timedelta(seconds=30), timedelta(seconds=30)),  # good at the first second: in
        job(2, "linux-a", start - timedelta(seconds=31), timedelta(seconds=30)),  # good a second sooner: out
        job(3, "linux-a", end - timedelta(seconds=11), timedelta(seconds=10)),  # good at the last second: in
        job(4, "linux-a", end - timedelta(seconds=10), timedelta(seconds=10)),  # good in the tick's minute: next tick
        job(5, "linux-a", end - second - T, None),  # waiting, bad at the last second: in
        job(6, "linux-a", now - T, None),  # waiting, bad in the tick's minute: next tick
        job(7, "linux-a", now + second, second),  # after the tick: nowhere
    ]
    assert expected_counts(jobs, now, 3600) == Counts(good=2, bad=1)
    assert expected_counts(jobs, now, 300) == Counts(good=1, bad=1)
    assert agree(jobs, HEAD + LINUX, now, now, timedelta(minutes=1)) == []


def test_a_job_that_waited_past_the_threshold_then_started_counts_bad_once() -> None:
    # Waiting, it is the collector's; started, the track stage's counter holds it: one bad job either way,
    # in the minute it turned bad, from the tick after that minute, at every tick across its start.
    queued = DAY0 + timedelta(hours=10, minutes=1)
    jobs = [job(1, "linux-a", queued, timedelta(minutes=9))]
    config = parse_config(HEAD + LINUX)
    for now, snapshot, _, _ in replay_slos(config, jobs, queued, queued + timedelta(minutes=20), timedelta(minutes=1)):
        [reading] = snapshot.slos
        hour = reading.window(3600)
        assert hour is not None
        assert (hour.good, hour.bad) == ((0, 1) if now >= queued + T + timedelta(minutes=1) else (0, 0)), now
