"""Recorded history, minute by minute, as the observations the collector would have made.

What is read: every signal the rules judge, with the collector's own metric queries
(queuewatch.collect.queries.metric_requests) for the runner types the collector
would watch (resolve_queues: the config's runner types, and the queues discovery
lists now). A queue size whose source is `sqs` is read live with GetQueueAttributes,
which has no history: the AWS/SQS ApproximateNumberOfMessagesVisible, NotVisible and
Delayed maxima stand in for it, and no datapoint means an idle queue, so zero jobs. The same
stands in for the count of each job-retry and dead-letter queue beside a build queue (collect/paths.py),
whose oldest age is read as the collector reads it, so the `job-retry` and `dead-letter` rules replay too.

How: GetMetricData at the finest resolution CloudWatch still keeps for each part of
the range (1 minute for 15 days, 5 minutes for 63, 1 hour for 455): a range reaching past
15 days is read in parts, its older part coarser, and every call starts within the retention
of the period it asks for (CloudWatch answers nothing at all for a start older than that).
A coarse datapoint (the maximum over its period) is applied when its period ends, when
the collector could first have seen all of it, never before. Each part is read in time
chunks sized so that each call asks at most 500 queries and 100,800 datapoints. Chunks are read and
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
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.wording import moment
from queuewatch.collect.paths import PathDepths, path_queues, with_paths
from queuewatch.collect.queries import MetricSlot, metric_requests
from queuewatch.collect.queues import WatchedQueue
from queuewatch.collect.readings import Spans, assemble
from queuewatch.config import Config
from queuewatch.model.signals import SQS_SOURCE, SignalName
from queuewatch.model.snapshot import DiscoveryResult, RunnerTypeSnapshot, Snapshot

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
# Calls come after `now` (the older parts are read first): a period's data is asked for only from this far
# inside its retention, so it is still there when the call is made.
RETENTION_MARGIN = 600
TICK = 60


class HistoryError(QueuewatchError):
    """The history cannot be read as asked: a range CloudWatch no longer keeps, or a failed call."""


@dataclass(frozen=True)
class DepthSlot:
    """One of the three AWS/SQS depth series that stand in for a queue's GetQueueAttributes."""

    runner_index: int
    metric: str


@dataclass(frozen=True)
class PathDepthSlot:
    """One of the three AWS/SQS depth series that stand in for a path queue's GetQueueAttributes: its count."""

    runner_index: int
    count: SignalName
    metric: str


Slot = MetricSlot | DepthSlot | PathDepthSlot
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


@dataclass(frozen=True)
class ReadPart:
    """A span of the range read at one resolution: [start, end) in epoch seconds."""

    start: int
    end: int
    plan: HistoryPlan

    @property
    def period(self) -> int:
        return self.plan.period


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
    # Per series, in by_region's order: how much later than its stamp a datapoint is whole (its period read
    # minus the period it is published at), so the collector could have seen it.
    delays: list[int]

    @property
    def queries(self) -> int:
        return sum(len(pairs) for pairs in self.by_region.values())

    def calls_per_chunk(self) -> int:
        return sum(math.ceil(len(pairs) / MAX_QUERIES_PER_CALL) for pairs in self.by_region.values())


def plan_history(
    config: Config, targets: list[WatchedQueue], discovery: list[DiscoveryResult], period: int
) -> HistoryPlan:
    # Every path queue's oldest age, where the collector asks it only of one holding messages: an empty one's
    # age is 0 whatever CloudWatch holds (with_paths), so asking it of all changes no reading.
    ages = {index: [(path.age, path.queue_name) for path in path_queues(t)] for index, t in enumerate(targets)}
    native = metric_requests(targets, path_ages=ages)
    by_region: dict[str, list[tuple[MetricRequest, list[Slot]]]] = {
        region: [(replace(r, period=max(r.period, period)), list(slots)) for r, slots in pairs]
        for region, pairs in native.items()
    }
    delays = {
        (region, r.query_id): max(r.period, period) - r.period for region, pairs in native.items() for r, _ in pairs
    }
    for index, target in enumerate(targets):
        depths: list[tuple[str, DepthSlot | PathDepthSlot]] = []
        if target.signals.get(SignalName.QUEUE_SIZE) == SQS_SOURCE:
            depths += [(target.queue_name, DepthSlot(index, metric)) for metric in DEPTH_METRICS]
        for path in path_queues(target):
            depths += [(path.queue_name, PathDepthSlot(index, path.count, metric)) for metric in DEPTH_METRICS]
        entries = by_region.setdefault(target.region, []) if depths else []
        for queue_name, slot in depths:
            request = MetricRequest(
                query_id=f"d{len(entries) + 1}",
                namespace="AWS/SQS",
                metric=slot.metric,
                dimensions=(("QueueName", queue_name),),
                stat="Maximum",
                period=period,
                account_id=target.account_id if target.foreign else None,
            )
            slots: list[Slot] = [slot]
            entries.append((request, slots))
    widest = max((min(len(pairs), MAX_QUERIES_PER_CALL) for pairs in by_region.values()), default=1)
    longest = max((r.period for pairs in by_region.values() for r, _ in pairs), default=period)
    points = MAX_DATAPOINTS_PER_CALL // widest  # per query and call: queries x points <= 100,800
    # A chunk's span is a whole number of the longest period, so no period straddles two chunks.
    chunk = max(longest, points * period // longest * longest)
    # The lookback must reach the previous datapoint at the resolution read.
    lookback = max(config.defaults.metric_lookback, longest)
    ordered = [delays.get((region, r.query_id), period - TICK) for region, pairs in by_region.items() for r, _ in pairs]
    return HistoryPlan(targets, discovery, by_region, period, lookback, chunk, longest, ordered)


def read_parts(first: int, last: int, now: datetime, plan_for: Callable[[int], HistoryPlan]) -> list[ReadPart]:
    """The range's reads, oldest first: each part at the finest period CloudWatch still holds for all of it.
    The first part starts the lookback before the first tick, so that tick has its datapoints too."""
    kept_from = {period: _ceil(_epoch(now - kept) + RETENTION_MARGIN, TICK) for kept, period in RETENTION}
    periods = [period for _, period in RETENTION]

    def start_of(period: int) -> int:
        plan = plan_for(period)
        return (first - plan.lookback) // plan.longest_period * plan.longest_period

    index = next((i for i, period in enumerate(periods) if start_of(period) >= kept_from[period]), None)
    if index is None:
        raise HistoryError(f"--from {moment(_at(first))}: CloudWatch keeps no datapoints older than 455 days")
    plan, cursor = plan_for(periods[index]), start_of(periods[index])
    parts: list[ReadPart] = []
    while True:
        if index == 0:
            end = last
        else:
            end = min(
                last, max(_ceil(kept_from[periods[index - 1]], plan.longest_period), cursor + plan.longest_period)
            )
        parts.append(ReadPart(cursor, end, plan))
        if end >= last:
            return parts
        index -= 1
        cursor, plan = end, plan_for(periods[index])


def coarser_parts(parts: list[ReadPart], first: int, last: int) -> list[tuple[datetime, datetime, int]]:
    """The spans of ticks (from, to, period) replayed from datapoints coarser than a minute."""
    spans = []
    for part in parts:
        begin, end = max(part.start, first), min(part.end, last)
        if part.period > TICK and begin <= end:
            spans.append((_at(begin), _at(end), part.period))
    return spans


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
        self._plans = {history.period: history}
        self.parts: list[ReadPart] = []  # what the last ticks() read, at which resolution

    def plan_for(self, period: int) -> HistoryPlan:
        """The same queries at another period (their ids, so the series' indexes, are the same)."""
        if period not in self._plans:
            base = self.history
            self._plans[period] = plan_history(self.config, base.targets, base.discovery, period)
        return self._plans[period]

    def ticks(self, start: datetime, end: datetime, now: datetime | None = None) -> Iterator[Snapshot]:
        """A Snapshot for every minute from start to end (both whole minutes), in order. With `now`, each part
        of the range is read at the finest resolution CloudWatch holds then; without, all at the plan's."""
        first, last = _epoch(start), _epoch(end)
        if now is None:
            plan = self.history
            read_from = (first - plan.lookback) // plan.longest_period * plan.longest_period
            self.parts = [ReadPart(read_from, last, plan)]
        else:
            self.parts = read_parts(first, last, now, self.plan_for)
        reads = [
            (part, chunk_start, min(chunk_start + part.plan.chunk_seconds, part.end))
            for part in self.parts
            for chunk_start in range(part.start, max(part.end, part.start + 1), part.plan.chunk_seconds)
        ]
        dirty = set(range(len(self.history.targets)))
        pending: Arrivals = {}  # read, and not yet whole at the ticks so far (a coarse period's last minutes)
        tick = first
        for number, (part, chunk_start, chunk_end) in enumerate(reads):
            if part.plan is not self.history:
                dirty.update(range(len(self.history.targets)))  # freshness is judged with this part's lookback
            self.history = part.plan
            lookback = part.plan.lookback
            _merge(pending, self._read_chunk(number, len(reads), chunk_start, chunk_end))
            while tick <= chunk_end and tick <= last:
                for stamp in sorted(s for s in pending if s < tick):
                    keys, values = pending.pop(stamp)
                    for key, value in zip(keys, values, strict=True):
                        before = self._latest.get(key)
                        self._latest[key] = (stamp, value)
                        # Stale on the first tick past stamp + lookback; checked again then.
                        due = stamp + lookback + TICK - (stamp + lookback) % TICK
                        self._stale_at[due].append((key, stamp))
                        # The same value again, still fresh, judges the same: an idle queue's zeros
                        # every minute cost no assembly (only the reading's age would differ).
                        if before is None or before[1] != value or tick - before[0] > lookback:
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
                            f"GetMetricData in {region} for {moment(begin)}..{moment(finish)}: {answer.error}"
                        )
                    key = self._index[(region, query_id)]
                    delay = self.history.delays[key]
                    for stamp, value in answer.points:
                        found = arrivals.get(epoch := _epoch(stamp) + delay)
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
        path_depth: dict[SignalName, dict[str, float]] = {count: {} for count in (p.count for p in path_queues(target))}
        series: list[tuple[MetricSeries, MetricSlot]] = []
        for key, slot in self._queries_of[index]:
            found = self._latest.get(key)
            fresh = found is not None and tick - found[0] <= self.history.lookback
            if isinstance(slot, DepthSlot):
                depth[slot.metric] = found[1] if found is not None and fresh else 0.0  # idle: nothing published
            elif isinstance(slot, PathDepthSlot):
                path_depth[slot.count][slot.metric] = found[1] if found is not None and fresh else 0.0
            else:
                points = [(_at(found[0]), found[1])] if found is not None and fresh else []
                series.append((MetricSeries(points=points), slot))
        queue_depth = None
        if target.signals.get(SignalName.QUEUE_SIZE) == SQS_SOURCE:
            visible, in_flight, delayed = (int(depth.get(metric, 0.0)) for metric in DEPTH_METRICS)
            queue_depth = QueueDepth(visible=visible, in_flight=in_flight, delayed=delayed)
        spans = Spans(now, self.history.lookback, self._triage.window, self._triage.baseline)
        paths: PathDepths = {(index, count): _depth(metrics) for count, metrics in path_depth.items()}
        return with_paths(assemble(target, queue_depth, series, spans), target, index, paths)


def _depth(metrics: dict[str, float]) -> QueueDepth:
    visible, in_flight, delayed = (int(metrics.get(metric, 0.0)) for metric in DEPTH_METRICS)
    return QueueDepth(visible=visible, in_flight=in_flight, delayed=delayed)


def _merge(into: Arrivals, more: Arrivals) -> None:
    for stamp, (keys, values) in more.items():
        found = into.get(stamp)
        if found is None:
            into[stamp] = (keys, values)
        else:
            found[0].extend(keys)
            found[1].extend(values)


def _ceil(epoch: int, step: int) -> int:
    return -(-epoch // step) * step


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def _at(epoch: int) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)
