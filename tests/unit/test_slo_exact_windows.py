"""Burn windows exact to the minute, against an oracle in plain Python over the raw job events.

The oracle knows nothing of minutes, hours or buckets: a job is good at its start if it started under the
threshold after it was queued, bad at queued_at + threshold otherwise (or if cancelled after that moment, or
still waiting then), and a window of W minutes at a tick holds the jobs decided in the W whole minutes ending
at the tick's minute. The real path (the counters' tally with the collector's waiting jobs, then the
evaluator's judge) must agree with it at every minute, and see a blip shorter than 5 minutes."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from job_records import job_record

from queuewatch.alerting.slo_reading import reading_of
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate.slo import judge_slos
from queuewatch.model.jobs import JobRecord
from queuewatch.model.slo import Counts, Tally, outcome_of
from queuewatch.model.snapshot import Snapshot

START = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
THRESHOLD = 120
CONFIG = """
version: 1
defaults: {rule: {team: ci-infra}}
runner_types:
  - {name: linux.2xlarge, queue: {name: q}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 30m}}
slos:
  - name: builds
    objective: 90%
    queue_time_under: 2m
    min_jobs: 1
    burn_alerts:
      - {name: fast, factor: 3.5, long_window: 1h, short_window: 5m}
      - {name: odd, factor: 2, long_window: 97m, short_window: 7m}
      - {name: slow, factor: 1.5, long_window: 6h, short_window: 30m}
      - {name: any-late, factor: 0.9, long_window: 1h, short_window: 5m}
"""


@dataclass(frozen=True)
class Job:
    queued_at: datetime
    started_at: datetime | None
    cancelled_at: datetime | None


def oracle_decided(job: Job, now: datetime) -> tuple[str, datetime] | None:
    """What the job was at `now`, by the SLO's words alone."""
    late_from = job.queued_at + timedelta(seconds=THRESHOLD)
    if job.started_at is not None and job.started_at <= now:
        return (
            ("good", job.started_at)
            if job.started_at - job.queued_at < timedelta(seconds=THRESHOLD)
            else (
                "bad",
                late_from,
            )
        )
    if job.cancelled_at is not None and job.cancelled_at <= now:
        return ("bad", late_from) if job.cancelled_at >= late_from else None
    return ("bad", late_from) if now >= late_from else None


def oracle_window(jobs: list[Job], now: datetime, minutes: int) -> tuple[int, int]:
    """(good, bad) decided in the `minutes` whole minutes ending at now's minute."""
    end = now.replace(second=0, microsecond=0)
    start = end - timedelta(minutes=minutes)
    good = bad = 0
    for job in jobs:
        decided = oracle_decided(job, now)
        if decided is not None and start <= decided[1] < end:
            good, bad = good + (decided[0] == "good"), bad + (decided[0] == "bad")
    return good, bad


def waiting(number: int, job: Job) -> JobRecord:
    """The job as the census holds it while it is queued."""
    return job_record(number, "linux.2xlarge", job.queued_at, expires_at=job.queued_at + timedelta(days=2))


class Live:
    """The live path: the track stage counts a job once it started or was cancelled (its minute and hour), the
    collector adds the jobs still waiting, the evaluator judges."""

    def __init__(self, config: Config, jobs: list[Job]) -> None:
        self.config, self.jobs = config, jobs
        [self.slo] = config.resolved_slos
        self.records = [waiting(number, job) for number, job in enumerate(jobs)]

    def tally_and_queued(self, now: datetime) -> tuple[Tally, list[JobRecord]]:
        tally, queued = Tally(), []
        for job, record in zip(self.jobs, self.records, strict=True):
            started = job.started_at if job.started_at is not None and job.started_at <= now else None
            cancelled = job.cancelled_at if job.cancelled_at is not None and job.cancelled_at <= now else None
            if started is None and cancelled is None:
                if job.queued_at <= now:
                    queued.append(record)
                continue
            decided = outcome_of(job.queued_at, started, cancelled, self.slo.queue_time_under)
            if decided is None:
                continue
            tally.add(decided[1], Counts(good=1) if decided[0] == "good" else Counts(bad=1))
        return tally, queued

    def windows(self, now: datetime) -> dict[int, tuple[int, int]]:
        tally, queued = self.tally_and_queued(now)
        reading = reading_of(self.slo, self.config, tally, queued, now)
        return {w.seconds // 60: (w.good, w.bad) for w in reading.windows}

    def firing(self, now: datetime) -> set[str]:
        tally, queued = self.tally_and_queued(now)
        reading = reading_of(self.slo, self.config, tally, queued, now)
        snapshot = Snapshot(snapshot_id="t", collected_at=now, runner_types=[], slos=[reading])
        judged, _ = judge_slos(self.config, snapshot)
        return {j.instance for j in judged if j.verdict.breached}


def history(seed: int, hours: int) -> list[Job]:
    """Jobs queued at random seconds over `hours`: most start in seconds, some late, some cancelled, a few
    still waiting at the end; two outages in which nothing starts."""
    rng = random.Random(seed)
    jobs = []
    outages = [
        (START + timedelta(minutes=95), timedelta(minutes=3)),
        (START + timedelta(hours=4), timedelta(minutes=25)),
    ]
    for _ in range(hours * 40):
        queued = START + timedelta(seconds=rng.randrange(hours * 3600))
        wait = timedelta(seconds=rng.choice([5, 30, 90, 119, 120, 121, 200, 600]))
        for begins, lasts in outages:
            if begins <= queued < begins + lasts:
                wait = begins + lasts - queued + timedelta(seconds=rng.randrange(60))
        if rng.random() < 0.1:
            jobs.append(Job(queued, None, queued + wait))
        elif rng.random() < 0.02:
            jobs.append(Job(queued, None, None))
        else:
            jobs.append(Job(queued, queued + wait, None))
    return jobs


def test_every_window_agrees_with_the_oracle_minute_by_minute() -> None:
    jobs = history(1, hours=8)
    live = Live(parse_config(CONFIG), jobs)
    for minute in range(60, 8 * 60, 1):
        now = START + timedelta(minutes=minute, seconds=(minute * 7) % 60)
        found = live.windows(now)
        assert found == {m: oracle_window(jobs, now, m) for m in found}, now
        assert set(found) == {5, 7, 30, 60, 97, 360}


def steady_with(bad_minutes: set[int], minutes: int) -> list[Job]:
    """Ten jobs a minute, each decided at second 30 of its minute: good, or late in the minutes listed."""
    jobs = []
    for minute in range(minutes):
        for n in range(10):
            decided = START + timedelta(minutes=minute, seconds=30)
            if minute in bad_minutes:
                jobs.append(Job(decided - timedelta(seconds=THRESHOLD), decided + timedelta(seconds=n), None))
            else:
                jobs.append(Job(decided - timedelta(seconds=10), decided, None))
    return jobs


def ticks(first: int, last: int) -> list[datetime]:
    return [START + timedelta(minutes=m) for m in range(first, last + 1)]


def test_a_blip_shorter_than_the_short_window_is_seen() -> None:
    """A degradation (25 late minutes), a recovery, then two late minutes (02:04, 02:05): the 5-minute window
    holds 2 late minutes of 5 (burn 4, over the pair's 3.5) for the 4 ticks that hold both, and fires."""
    degradation = set(range(80, 105))
    blip = {124, 125}
    jobs = steady_with(degradation | blip, 150)
    live = Live(parse_config(CONFIG), jobs)
    around = ticks(118, 135)
    assert "fast" not in live.firing(START + timedelta(minutes=124))  # recovered before the blip
    fired = [t for t in around if "fast" in live.firing(t)]
    assert fired == ticks(126, 129)
    assert [oracle_window(jobs, t, 5) for t in fired] == [(30, 20)] * 4  # what the oracle says, 40% late


def test_a_resolve_comes_when_the_short_window_clears_not_minutes_later() -> None:
    """Late minutes from 01:00 to 01:40, then good ones. A pair at 0.9 (9% late, under one late minute of the
    5-minute window's 50 jobs) clears once the window holds no late minute: at 01:46, as the oracle says."""
    jobs = steady_with(set(range(60, 101)), 130)
    live = Live(parse_config(CONFIG), jobs)
    share = 0.09  # 0.9 times a 10% budget

    def oracle_fires(now: datetime) -> bool:
        return all(
            (late := oracle_window(jobs, now, m)[1]) > 0 and late / sum(oracle_window(jobs, now, m)) >= share
            for m in (5, 60)
        )

    after = ticks(100, 115)
    assert "any-late" in live.firing(after[0]) and oracle_fires(after[0])
    cleared = next(t for t in after if "any-late" not in live.firing(t))
    assert cleared == next(t for t in after if not oracle_fires(t)) == START + timedelta(minutes=106)
