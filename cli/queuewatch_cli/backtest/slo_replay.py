"""SLO alerts replayed over the jobs' history, tick by tick, through the live path: at each tick the
counters hold what the track stage would have counted by then (a job once its start, or its cancellation,
has happened), the collector adds the jobs still waiting (collect/slo.py), and the pure evaluator plans on
that snapshot and the state the earlier ticks left (replay.apply)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.alert_state import InstanceKey, PageKind, Status, StoredState
from queuewatch.collect.slo import reading_of
from queuewatch.config import Config
from queuewatch.evaluate import plan
from queuewatch.evaluate.slo import is_slo_rule
from queuewatch.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.slo import Counts, bucket_start
from queuewatch.snapshot import Snapshot
from queuewatch.track.slo import contributions
from queuewatch_cli.backtest.replay import apply


@dataclass(frozen=True)
class SloPage:
    """One notification an SLO rule sent: when, which group, what kind, and the instances it named."""

    at: datetime
    rule: str
    kind: PageKind
    members: tuple[str, ...]


def _arrival(job: JobRecord) -> datetime | None:
    """When the event that counts the job reaches the track stage: its start, else its cancellation."""
    return job.started_at or job.completed_at


def _waiting(job: JobRecord) -> JobRecord:
    return job.model_copy(update={"status": "queued", "progress": 1, "started_at": None, "completed_at": None})


def replay_slos(
    config: Config, jobs: Iterable[JobRecord], start: datetime, end: datetime, tick: timedelta = timedelta(minutes=1)
) -> Iterator[tuple[datetime, Snapshot, list[SloPage], set[InstanceKey]]]:
    """Each tick's snapshot (its SLO readings), the SLO pages planned on it, and the SLO instances firing
    after it, from start to end."""
    ordered = sorted((j for j in jobs if j.queued_at is not None), key=lambda j: j.queued_at or start)
    counted = {slo.name: dict[datetime, Counts]() for slo in config.resolved_slos}
    pending = sorted(
        ((arrival, index) for index, job in enumerate(ordered) if (arrival := _arrival(job)) is not None),
    )
    next_pending = 0
    queued_times = [job.queued_at for job in ordered if job.queued_at is not None]
    state = StoredState()
    now = start
    while now <= end:
        while next_pending < len(pending) and pending[next_pending][0] <= now:
            job = ordered[pending[next_pending][1]]
            for contribution in contributions(job, config):
                buckets = counted[contribution.slo]
                at = bucket_start(contribution.at)
                outcome = Counts(good=1) if contribution.outcome == "good" else Counts(bad=1)
                buckets[at] = buckets.get(at, Counts()) + outcome
            next_pending += 1
        # Only a day back: a job queued past GitHub's limit is lost, not waiting (collect/jobs.py).
        first, last = bisect_left(queued_times, now - QUEUED_LIMIT), bisect_right(queued_times, now)
        queued = [_waiting(job) for job in ordered[first:last] if (_arrival(job) or end + tick) > now]
        readings = [reading_of(slo, config, counted[slo.name], queued, now) for slo in config.resolved_slos]
        snapshot = Snapshot(snapshot_id=f"replay-{now:%Y%m%dT%H%M}", collected_at=now, runner_types=[], slos=readings)
        planned = plan(config, state, snapshot, now)
        pages = [
            SloPage(now, group.rule.name, group.page, tuple(sorted(group.decision.members)))
            for group in planned.groups
            if group.page is not None and is_slo_rule(group.rule.name)
        ]
        apply(state, planned)
        firing = {k for k, s in state.instances.items() if s.status is Status.FIRING and is_slo_rule(k.rule)}
        yield now, snapshot, pages, firing
        now += tick
