"""The tracked jobs' history, minute by minute, as the observations the collector would have made.

Pure: jobs in, Snapshots out, in the shape the CloudWatch replay (history.py) gives the evaluator's plan.
At each tick a job is queued from when it was queued for a runner until a runner took it (or it was
cancelled), as the collector's Query of the queued index finds it; past GitHub's 24-hour limit it no
longer counts (the collector counts it as lost). A runner type's queue size is its jobs queued then, its
queue time the wait of the oldest of them, as collect/jobs.py reads them live.

Memory: each job is kept as three numbers (its runner type's index, when it began and stopped waiting,
in epoch seconds: 20 bytes), whatever its record held; a runner type's snapshot is made again only on a
tick when its figures change.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from queuewatch.collect.queues import WatchedQueue
from queuewatch.config import Config
from queuewatch.model.jobs import QUEUED_LIMIT, JobRecord, github_hosted
from queuewatch.model.runner_names import RunnerTypeNames
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import DiscoveryResult, Reading, RunnerTypeSnapshot, Snapshot

if TYPE_CHECKING:
    from queuewatch_cli.commands.backtest.forecast_feed import ForecastFeed

TICK = 60
NEVER = 2**62  # a job still waiting when its history was read


def queue_span(job: JobRecord) -> tuple[datetime, datetime | None] | None:
    """When the job waited for a runner: (queued, stopped waiting, or None if it still was). None for a job
    that never did: one waiting for an approval, or rejected or cancelled while it waited."""
    if job.status == "waiting" or (job.queued_at is None and job.status == "completed" and job.started_at is None):
        return None
    began = job.queued_since  # from when it was queued for a runner: an approval wait is not queue time
    if job.started_at is not None:
        return began, max(began, job.started_at)
    if job.completed_at is not None:  # cancelled before any runner took it
        return began, max(began, job.completed_at)
    return began, None


@dataclass
class JobSpans:
    """Every job's wait, compactly: runner type index, began, ended (epoch seconds; NEVER if it had not)."""

    runner_types: array[int]
    began: array[int]
    ended: array[int]
    jobs: int = 0  # read, of any runner type
    unmatched: int = 0  # no watched runner type serves them
    hosted: int = 0  # for GitHub's own hosted runners: no runner type of this fleet's should
    first_queued: int | None = None  # epoch seconds: the earliest job of a watched runner type read
    # With a forecast (forecast_feed.py): each job's start and completion, epoch seconds (NEVER: none), else empty.
    started: array[int] = field(default_factory=lambda: array("q"))
    completed: array[int] = field(default_factory=lambda: array("q"))

    def __len__(self) -> int:
        return len(self.began)


def job_spans(jobs: Iterable[JobRecord], targets: list[WatchedQueue], times: bool = False) -> JobSpans:
    """The jobs' waits; with `times`, their starts and completions too (16 bytes a job more), for a forecast."""
    index = {target.runner_type: i for i, target in enumerate(targets)}
    names = RunnerTypeNames(index)  # the live collector's resolver: a discovered name's jobs whatever its case
    spans = JobSpans(array("i"), array("q"), array("q"))
    for job in jobs:
        spans.jobs += 1
        resolved = names.resolve(job.runner_type)
        where = index.get(resolved) if resolved is not None else None
        if where is None:
            if github_hosted(job.labels):
                spans.hosted += 1
            else:
                spans.unmatched += 1
            continue
        span = queue_span(job)
        if span is None:
            continue
        began, ended = span
        at = int(began.timestamp())
        spans.first_queued = at if spans.first_queued is None else min(spans.first_queued, at)
        spans.runner_types.append(where)
        spans.began.append(int(began.timestamp()))
        # Lost past GitHub's limit: the collector stops counting it the moment it is older than that.
        limit = int((began + QUEUED_LIMIT).timestamp()) + 1
        spans.ended.append(min(limit, math.ceil(ended.timestamp()) if ended is not None else NEVER))
        if times:
            spans.started.append(int(job.started_at.timestamp()) if job.started_at else NEVER)
            spans.completed.append(int(job.completed_at.timestamp()) if job.completed_at else NEVER)
    return spans


class JobObservations:
    """The ticks of a range as Snapshots, rebuilt from the jobs' waits."""

    def __init__(
        self,
        config: Config,
        targets: list[WatchedQueue],
        discovery: list[DiscoveryResult],
        spans: JobSpans,
        forecast: ForecastFeed | None = None,
    ) -> None:
        self.config = config
        self.targets = targets
        self.discovery = discovery
        self.spans = spans
        self.forecast = forecast  # each forecast runner type's inputs at each tick, as the collector reads them

    def ticks(self, start: datetime, end: datetime) -> Iterator[Snapshot]:
        """A Snapshot for every minute from start to end (whole minutes), in order: at each tick, the jobs
        queued at or before it and not yet taken (a job taken at the tick itself no longer counts)."""
        spans, triage = self.spans, self.config.defaults.triage
        by_start = sorted(range(len(spans)), key=spans.began.__getitem__)
        by_end = sorted(range(len(spans)), key=spans.ended.__getitem__)
        waiting: list[deque[int]] = [deque() for _ in self.targets]  # jobs by when they began, oldest first
        busy: set[int] = set()  # runner types with jobs waiting: their queue time grows each tick
        counted = bytearray(len(spans))
        count = [0] * len(self.targets)
        current = [self._observed(index, 0, None) for index in range(len(self.targets))]
        shown: list[tuple[int, int | None]] = [(0, None)] * len(self.targets)
        next_start = next_end = 0
        first, last = int(start.timestamp()), int(end.timestamp())
        for tick in range(first, last + 1, TICK):
            touched: set[int] = set()
            while next_start < len(by_start) and spans.began[job := by_start[next_start]] <= tick:
                next_start += 1
                if spans.ended[job] > tick:
                    where = spans.runner_types[job]
                    waiting[where].append(job)
                    counted[job] = 1
                    count[where] += 1
                    busy.add(where)
            while next_end < len(by_end) and spans.ended[job := by_end[next_end]] <= tick:
                next_end += 1
                if counted[job]:
                    count[spans.runner_types[job]] -= 1
                    touched.add(spans.runner_types[job])
            for where in touched | busy:
                queue = waiting[where]
                while queue and spans.ended[queue[0]] <= tick:
                    queue.popleft()
                if not queue:
                    busy.discard(where)
                oldest = spans.began[queue[0]] if queue else None
                figures = (count[where], oldest)
                if figures != shown[where] or oldest is not None:
                    shown[where] = figures
                    current[where] = self._observed(where, count[where], None if oldest is None else tick - oldest)
            now = datetime.fromtimestamp(tick, UTC)
            observed = list(current)
            if self.forecast is not None:
                for where, inputs in self.forecast.inputs_at(tick).items():
                    observed[where] = observed[where].model_copy(update={"forecast": inputs})
            yield Snapshot.model_construct(
                snapshot_id=f"backtest-{now:%Y%m%dT%H%M}",
                collected_at=now,
                runner_types=observed,
                discovery=self.discovery,
                triage_window_seconds=triage.window,
                baseline_seconds=triage.baseline,
                unmatched_jobs=[],
                expired_jobs=0,
            )

    def _observed(self, index: int, queued: int, oldest_wait: float | None) -> RunnerTypeSnapshot:
        target = self.targets[index]
        signals = {
            SignalName.QUEUE_SIZE: Reading.of(queued),
            SignalName.QUEUE_TIME: Reading.of(max(0.0, oldest_wait or 0.0)),
        }
        return RunnerTypeSnapshot.model_construct(
            name=target.runner_type,
            region=target.region,
            queue_name=target.queue_name,
            team=target.team,
            signals=signals,
            oldest_jobs=[],
        )
