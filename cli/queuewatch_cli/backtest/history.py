"""Recorded history, minute by minute, as the observations the collector would have made.

What is read: every signal the rules judge, with the collector's own metric queries
(queuewatch.collect.queries.metric_requests) for the runner types the collector
would watch (resolve_queues: the config's runner types, and the queues discovery
lists now). A queue size whose source is `sqs` is read live with GetQueueAttributes,
which has no history: the AWS/SQS ApproximateNumberOfMessagesVisible, NotVisible and
Delayed maxima stand in for it, and no datapoint means an idle queue, so zero jobs.

How: GetMetricData at the finest resolution CloudWatch still keeps for the range's
start (1 minute for 15 days, 5 minutes for 63, 1 hour for 455), in time chunks sized so
that each call asks at most 500 queries and 100,800 datapoints. Chunks are read and
replayed one after another, so memory depends on the fleet, not on the range: a chunk
holds at most 100,800 datapoints per 500 queries, kept as 12 bytes each (a series index
and a value, in arrays by timestamp), and only one call's answer is held as Python objects.

Each tick's readings are the collector's (collect.readings.assemble) on the newest
datapoint within the lookback before the tick; a runner type is assembled again only
when one of its series changes value or goes stale (a reading's age, which no rule
judges, then shows the first of a run of equal datapoints). The triage's window and
baseline are not read: a backtest decides pages, and the triage never decides one.
"""

from __future__ import annotations

import math
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from queuewatch.adapters.cloudwatch import MAX_QUERIES_PER_CALL, MetricRequest, MetricSeries, get_metric_data
from queuewatch.adapters.sqs import QueueDepth
from queuewatch.collect.queries import MetricSlot, metric_requests
from queuewatch.collect.queues import WatchedQueue
from queuewatch.collect.readings import Spans, assemble
from queuewatch.config import Config
from queuewatch.errors import QueuewatchError
from queuewatch.signals import SQS_SOURCE, SignalName
from queuewatch.snapshot import DiscoveryResult, RunnerTypeSnapshot, Snapshot

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

MAX_DATAPOINTS_PER_CALL = 100_800
DEPTH_METRICS = (
    "ApproximateNumberOfMessagesVisible",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)
# (how far back CloudWatch keeps it, the period it keeps it at)
RETENTION = ((timedelta(days=15), 60), (timedelta(days=63), 300), (timedelta(days=455), 3600))
TICK = 60


class HistoryError(QueuewatchError):
    """The history cannot be read as asked: a range CloudWatch no longer keeps, or a failed call."""


def resolution(start: datetime, now: datetime) -> int:
    """The period CloudWatch still keeps for datapoints as old as `start`."""
    for kept, period in RETENTION:
        if now - start <= kept:
            return period
    raise HistoryError(f"--from {start:%Y-%m-%d %H:%M} UTC: CloudWatch keeps no datapoints older than 455 days")


@dataclass(frozen=True)
class DepthSlot:
    """One of the three AWS/SQS depth series that stand in for a queue's GetQueueAttributes."""

    runner_index: int
    metric: str


Slot = MetricSlot | DepthSlot
Arrivals = dict[int, tuple["array[int]", "array[float]"]]
"""A chunk's datapoints by epoch second: the index of each one's series, and its value."""


@dataclass(frozen=True)
class ChunkRead:
    """Progress: one chunk of the range read."""

    number: int
    of: int
    start: datetime
    end: datetime
    calls: int
    datapoints: int


@dataclass
class HistoryPlan:
    """Every query of the range, by region, and how the range is cut into chunks that fit one call each."""

    targets: list[WatchedQueue]
    discovery: list[DiscoveryResult]
    by_region: dict[str, list[tuple[MetricRequest, list[Slot]]]]
    period: int
    lookback: int
    chunk_seconds: int
    longest_period: int  # chunks start on its boundaries, as CloudWatch's periods do

    @property
    def queries(self) -> int:
        return sum(len(pairs) for pairs in self.by_region.values())

    def calls_per_chunk(self) -> int:
        return sum(math.ceil(len(pairs) / MAX_QUERIES_PER_CALL) for pairs in self.by_region.values())


def plan_history(
    config: Config, targets: list[WatchedQueue], discovery: list[DiscoveryResult], period: int
) -> HistoryPlan:
    by_region: dict[str, list[tuple[MetricRequest, list[Slot]]]] = {
        region: [(replace(r, period=max(r.period, period)), list(slots)) for r, slots in pairs]
        for region, pairs in metric_requests(targets).items()
    }
    for index, target in enumerate(targets):
        if target.signals.get(SignalName.QUEUE_SIZE) != SQS_SOURCE:
            continue
        entries = by_region.setdefault(target.region, [])
        for metric in DEPTH_METRICS:
            request = MetricRequest(
                query_id=f"d{len(entries) + 1}",
                namespace="AWS/SQS",
                metric=metric,
                dimensions=(("QueueName", target.queue_name),),
                stat="Maximum",
                period=period,
                account_id=target.account_id if target.foreign else None,
            )
            entries.append((request, [DepthSlot(index, metric)]))
    widest = max((min(len(pairs), MAX_QUERIES_PER_CALL) for pairs in by_region.values()), default=1)
    longest = max((r.period for pairs in by_region.values() for r, _ in pairs), default=period)
    points = MAX_DATAPOINTS_PER_CALL // widest  # per query and call: queries x points <= 100,800
    # A chunk's span is a whole number of the longest period, so no period straddles two chunks.
    chunk = max(longest, points * period // longest * longest)
    # The lookback must reach the previous datapoint at the resolution read.
    lookback = max(config.defaults.metric_lookback, longest)
    return HistoryPlan(targets, discovery, by_region, period, lookback, chunk, longest)


class Observations:
    """The ticks of a range as Snapshots, read chunk by chunk from CloudWatch."""

    def __init__(
        self,
        config: Config,
        history: HistoryPlan,
        clients: Callable[[str], CloudWatchClient],
        progress: Callable[[ChunkRead], None] = lambda _: None,
    ) -> None:
        self.config = config
        self.history = history
        self.clients = clients
        self.progress = progress
        triage = config.defaults.triage
        self._triage = triage
        # A series is (region, query id); each has an index, its position in this list.
        series = [(region, request.query_id) for region, pairs in history.by_region.items() for request, _ in pairs]
        self._index = {key: index for index, key in enumerate(series)}
        self._slots = [slots for pairs in history.by_region.values() for _, slots in pairs]
        self._latest: dict[int, tuple[int, float]] = {}  # series index -> its newest datapoint (epoch, value)
        self._queries_of: dict[int, list[tuple[int, Slot]]] = defaultdict(list)
        for key, slots in enumerate(self._slots):
            for slot in slots:
                self._queries_of[slot.runner_index].append((key, slot))
        self._current: list[RunnerTypeSnapshot] = []
        self._stale_at: dict[int, list[tuple[int, int]]] = defaultdict(list)

    def ticks(self, start: datetime, end: datetime) -> Iterator[Snapshot]:
        """A Snapshot for every minute from start to end (both whole minutes), in order."""
        history = self.history
        first, last = _epoch(start), _epoch(end)
        # Aligned, so each call's span holds whole periods: no call answers more datapoints than planned.
        read_from = (first - history.lookback) // history.longest_period * history.longest_period
        chunks = max(1, math.ceil((last - read_from) / history.chunk_seconds))
        dirty = set(range(len(history.targets)))
        tick = first
        for number in range(chunks):
            chunk_start = read_from + number * history.chunk_seconds
            chunk_end = min(chunk_start + history.chunk_seconds, last)
            arrivals = self._read_chunk(number, chunks, chunk_start, chunk_end)
            while tick <= chunk_end and tick <= last:
                for stamp in sorted(s for s in arrivals if s < tick):
                    keys, values = arrivals.pop(stamp)
                    for key, value in zip(keys, values, strict=True):
                        before = self._latest.get(key)
                        self._latest[key] = (stamp, value)
                        # Stale on the first tick past stamp + lookback; checked again then.
                        due = stamp + history.lookback + TICK - (stamp + history.lookback) % TICK
                        self._stale_at[due].append((key, stamp))
                        # The same value again, still fresh, judges the same: an idle queue's zeros
                        # every minute cost no assembly (only the reading's age would differ).
                        if before is None or before[1] != value or tick - before[0] > history.lookback:
                            dirty.update(s.runner_index for s in self._slots[key])
                for key, stamp in self._stale_at.pop(tick, []):
                    if self._latest.get(key, (None,))[0] == stamp:
                        dirty.update(s.runner_index for s in self._slots[key])
                yield self._snapshot(tick, dirty)
                dirty = set()
                tick += TICK

    def _read_chunk(self, number: int, of: int, start: int, end: int) -> Arrivals:
        """One chunk's datapoints, read one call's worth of queries at a time."""
        arrivals: Arrivals = {}
        calls = points = 0
        begin, finish = _at(start), _at(end)
        for region, pairs in self.history.by_region.items():
            client = self.clients(region)
            for offset in range(0, len(pairs), MAX_QUERIES_PER_CALL):
                batch = [request for request, _ in pairs[offset : offset + MAX_QUERIES_PER_CALL]]
                calls += 1
                for query_id, answer in get_metric_data(client, batch, begin, finish).items():
                    if answer.error:
                        raise HistoryError(
                            f"GetMetricData in {region} for {begin:%Y-%m-%d %H:%M}..{finish:%H:%M} UTC: {answer.error}"
                        )
                    key = self._index[(region, query_id)]
                    for stamp, value in answer.points:
                        found = arrivals.get(epoch := _epoch(stamp))
                        if found is None:
                            found = arrivals[epoch] = (array("i"), array("d"))
                        found[0].append(key)
                        found[1].append(value)
                    points += len(answer.points)
        self.progress(ChunkRead(number + 1, of, begin, finish, calls, points))
        return arrivals

    def _snapshot(self, tick: int, dirty: set[int]) -> Snapshot:
        now = _at(tick)
        if not self._current:
            self._current = [self._assemble(index, tick, now) for index in range(len(self.history.targets))]
        else:
            for index in dirty:
                self._current[index] = self._assemble(index, tick, now)
        return Snapshot.model_construct(
            snapshot_id=f"backtest-{now:%Y%m%dT%H%M}",
            collected_at=now,
            runner_types=list(self._current),
            discovery=self.history.discovery,
            triage_window_seconds=self._triage.window,
            baseline_seconds=self._triage.baseline,
        )

    def _assemble(self, index: int, tick: int, now: datetime) -> RunnerTypeSnapshot:
        target = self.history.targets[index]
        depth: dict[str, float] = {}
        series: list[tuple[MetricSeries, MetricSlot]] = []
        for key, slot in self._queries_of[index]:
            found = self._latest.get(key)
            fresh = found is not None and tick - found[0] <= self.history.lookback
            if isinstance(slot, DepthSlot):
                depth[slot.metric] = found[1] if found is not None and fresh else 0.0  # idle: nothing published
            else:
                points = [(_at(found[0]), found[1])] if found is not None and fresh else []
                series.append((MetricSeries(points=points), slot))
        queue_depth = None
        if target.signals.get(SignalName.QUEUE_SIZE) == SQS_SOURCE:
            visible, in_flight, delayed = (int(depth.get(metric, 0.0)) for metric in DEPTH_METRICS)
            queue_depth = QueueDepth(visible=visible, in_flight=in_flight, delayed=delayed)
        spans = Spans(now, self.history.lookback, self._triage.window, self._triage.baseline)
        return assemble(target, queue_depth, series, spans)


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def _at(epoch: int) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
