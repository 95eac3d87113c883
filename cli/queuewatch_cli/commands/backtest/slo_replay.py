"""SLO alerts replayed over the jobs' history, tick by tick, through the live path: at each tick the
counters hold what the track stage would have counted by then (a job once its start, or its cancellation,
has happened), the collector adds the jobs still waiting (alerting/slo_reading.py), and the pure evaluator plans on
that snapshot and the state the earlier ticks left (replay.apply)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from queuewatch.alerting.alert_state import InstanceKey, PageKind, Status, StoredState
from queuewatch.alerting.slo_reading import reading_of
from queuewatch.config import Config
from queuewatch.evaluate import plan
from queuewatch.evaluate.slo import is_slo_rule
from queuewatch.model.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.model.slo import Counts, Tally
from queuewatch.model.snapshot import SloReading, Snapshot
from queuewatch.track.slo import contributions
from queuewatch_cli.commands.backtest.replay import apply


@dataclass(frozen=True)
class SloPage:
    """One notification an SLO rule sent: when, which group, what kind, and the instances it named."""

    at: datetime
    rule: str
    kind: PageKind
    members: tuple[str, ...]


_EPOCH = datetime.fromtimestamp(0, UTC)
_NEVER = datetime.max.replace(tzinfo=UTC)


def _arrival(job: JobRecord) -> datetime | None:
    """When the event that counts the job reaches the track stage: its start, else its cancellation."""
    return job.started_at or job.completed_at


def _waiting(job: JobRecord) -> JobRecord:
    return job.model_copy(update={"status": "queued", "progress": 1, "started_at": None, "completed_at": None})


class SloCounters:
    """Each SLO's readings at successive ticks over a jobs' history, as the live collector would have read them:
    the counters hold a job once its start (or cancellation) has happened, the waiting jobs are added."""

    def __init__(self, config: Config, jobs: Iterable[JobRecord]) -> None:
        self.config = config
        self.ordered = sorted((j for j in jobs if j.queued_at is not None), key=lambda j: j.queued_at or _EPOCH)
        self.queued_times = [job.queued_at or _EPOCH for job in self.ordered]
        self.counted = {slo.name: Tally() for slo in config.resolved_slos}
        self.pending = sorted(
            (arrival, index) for index, job in enumerate(self.ordered) if (arrival := _arrival(job)) is not None
        )
        self.next_pending = 0

    def readings_at(self, now: datetime) -> list[SloReading]:
        """The readings at `now`; ticks must come in order."""
        while self.next_pending < len(self.pending) and self.pending[self.next_pending][0] <= now:
            job = self.ordered[self.pending[self.next_pending][1]]
            for contribution in contributions(job, self.config):
                outcome = Counts(good=1) if contribution.outcome == "good" else Counts(bad=1)
                self.counted[contribution.slo].add(contribution.at, outcome)
            self.next_pending += 1
        # Only a day back: a job queued past GitHub's limit is lost, not waiting (collect/jobs.py).
        first, last = bisect_left(self.queued_times, now - QUEUED_LIMIT), bisect_right(self.queued_times, now)
        queued = [_waiting(job) for job in self.ordered[first:last] if (_arrival(job) or _NEVER) > now]
        return [reading_of(slo, self.config, self.counted[slo.name], queued, now) for slo in self.config.resolved_slos]


def replay_slos(
    config: Config, jobs: Iterable[JobRecord], start: datetime, end: datetime, tick: timedelta = timedelta(minutes=1)
) -> Iterator[tuple[datetime, Snapshot, list[SloPage], set[InstanceKey]]]:
    """Each tick's snapshot (its SLO readings), the SLO pages planned on it, and the SLO instances firing
    after it, from start to end."""
    counters = SloCounters(config, jobs)
    state = StoredState()
    now = start
    while now <= end:
        readings = counters.readings_at(now)
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
