"""The collect stage: read every watched queue and metric once, consume nothing, return a Snapshot.

Per tick: one GetQueueAttributes per queue (concurrently), ceil(M/500)
GetMetricData calls per region for M metric queries, and one ListQueues page
per 1,000 queues per discovery entry. A failed call degrades only the runner
types that read it.

The queue depth is read first: a queue that holds no job has no oldest job, so
its AWS/SQS age is not requested (GetMetricData bills per metric requested, and
in a healthy fleet most queues are empty most of the time).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from queuewatch.adapters.cloudwatch import MetricRequest, MetricSeries, get_metric_data
from queuewatch.adapters.errors import describe
from queuewatch.adapters.sqs import QueueDepth, list_queue_urls, queue_url, read_queue_depth
from queuewatch.config import SQS_METRICS, SQS_SOURCE, Config, MetricQuery, SignalName, SignalSource
from queuewatch.snapshot import DiscoveryResult, Reading, RunnerTypeSnapshot, Snapshot

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_sqs import SQSClient

MAX_THREADS = 32


@dataclass(frozen=True)
class WatchTarget:
    """A runner type bound to its queue and to the source of each of its signals."""

    runner_type: str
    region: str
    account_id: str
    queue_name: str
    team: str | None
    signals: dict[SignalName, SignalSource]

    @property
    def url(self) -> str:
        return queue_url(self.region, self.account_id, self.queue_name)


@dataclass(frozen=True)
class _MetricSlot:
    target: int
    signal: SignalName
    seconds_per_unit: int


class Clients:
    """What the collect stage needs from AWS, per region."""

    def __init__(self, sqs: Callable[[str], SQSClient], cloudwatch: Callable[[str], CloudWatchClient]) -> None:
        self.sqs = sqs
        self.cloudwatch = cloudwatch


def collect(config: Config, clients: Clients, *, now: datetime, account_id: str, snapshot_id: str) -> Snapshot:
    with ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="collect") as pool:
        targets, discovery = resolve_targets(config, clients, account_id, pool)
        depth_futures = [pool.submit(read_queue_depth, clients.sqs(t.region), t.url) for t in targets]
        depths = [_outcome(future) for future in depth_futures]
        empty = {index for index, depth in enumerate(depths) if isinstance(depth, QueueDepth) and depth.total == 0}
        series = _read_metrics(config, clients, targets, empty, now, pool)
    runner_types = [
        _assemble(target, depths[index], series.get(index, {}), now, config.defaults.metric_lookback)
        for index, target in enumerate(targets)
    ]
    return Snapshot(snapshot_id=snapshot_id, collected_at=now, runner_types=runner_types, discovery=discovery)


def resolve_targets(
    config: Config, clients: Clients, account_id: str, pool: ThreadPoolExecutor
) -> tuple[list[WatchTarget], list[DiscoveryResult]]:
    """Configured runner types first; discovered ones add what the config does not name."""
    default_account = config.defaults.account_id or account_id
    targets = [
        WatchTarget(
            runner_type=spec.name,
            region=spec.queue.region_or(config.defaults.region),
            account_id=spec.queue.account_id or _url_account(spec.queue.url) or default_account,
            queue_name=spec.queue.queue_name,
            team=spec.team,
            signals=config.signals_for(spec.signals),
        )
        for spec in config.runner_types
    ]
    known = {t.runner_type for t in targets}
    bound_queues = {(t.region, t.queue_name) for t in targets}  # a named runner type owns its queue
    listings = [
        (spec, region, pool.submit(list_queue_urls, clients.sqs(region), spec.name_prefix))
        for spec in config.discovery
        for region in [spec.region or config.defaults.region]
    ]
    results: list[DiscoveryResult] = []
    for spec, region, future in listings:
        try:
            urls = future.result()
        except Exception as error:  # noqa: BLE001 - a failed listing is reported, not raised
            results.append(DiscoveryResult(region=region, pattern=spec.queue_name_pattern, error=describe(error)))
            continue
        found = 0
        for url in sorted(urls):
            name = url.rsplit("/", 1)[-1]
            runner_type = spec.runner_type_of(name)
            if runner_type is None or runner_type in known or (region, name) in bound_queues:
                continue
            known.add(runner_type)
            found += 1
            targets.append(
                WatchTarget(
                    runner_type=runner_type,
                    region=region,
                    account_id=_url_account(url) or spec.account_id or default_account,
                    queue_name=name,
                    team=spec.team,
                    signals=config.signals_for(spec.signals),
                )
            )
        results.append(DiscoveryResult(region=region, pattern=spec.queue_name_pattern, found=found))
    return targets, results


def _url_account(url: str | None) -> str | None:
    if not url:
        return None
    parts = url.rstrip("/").split("/")
    return parts[-2] if len(parts) >= 2 and parts[-2].isdigit() else None


def metric_requests(
    targets: Iterable[WatchTarget], empty: Collection[int] = ()
) -> dict[str, list[tuple[MetricRequest, _MetricSlot]]]:
    """Every metric query of the tick, grouped by the region that answers it.

    `empty` holds the indexes of targets whose queue GetQueueAttributes found empty:
    their AWS/SQS age is known to be 0 and is not requested.
    """
    by_region: dict[str, list[tuple[MetricRequest, _MetricSlot]]] = defaultdict(list)
    counter = 0
    for index, target in enumerate(targets):
        for signal, source in target.signals.items():
            if source == SQS_SOURCE and signal == SignalName.QUEUE_SIZE:
                continue  # read from GetQueueAttributes
            if source == SQS_SOURCE and signal == SignalName.QUEUE_TIME and index in empty:
                continue  # no job queued, so no oldest job: queue time 0
            counter += 1
            query_id = f"q{counter}"
            if isinstance(source, MetricQuery):
                query = source.for_runner_type(target.runner_type)
                request = MetricRequest(
                    query_id=query_id,
                    namespace=query.namespace,
                    metric=query.metric,
                    dimensions=tuple(sorted(query.dimensions.items())),
                    stat=query.stat,
                    period=query.period,
                )
                slot = _MetricSlot(index, signal, query.seconds_per_unit)
                by_region[query.region or target.region].append((request, slot))
            else:
                metric, stat = SQS_METRICS[signal]
                request = MetricRequest(
                    query_id=query_id,
                    namespace="AWS/SQS",
                    metric=metric,
                    dimensions=(("QueueName", target.queue_name),),
                    stat=stat,
                    period=60,
                )
                by_region[target.region].append((request, _MetricSlot(index, signal, 1)))
    return by_region


def _read_metrics(
    config: Config,
    clients: Clients,
    targets: list[WatchTarget],
    empty: Collection[int],
    now: datetime,
    pool: ThreadPoolExecutor,
) -> dict[int, dict[SignalName, tuple[MetricSeries, int]]]:
    start = now - timedelta(seconds=config.defaults.metric_lookback)
    by_region = metric_requests(targets, empty)
    futures = {
        region: pool.submit(get_metric_data, clients.cloudwatch(region), [r for r, _ in pairs], start, now)
        for region, pairs in by_region.items()
    }
    out: dict[int, dict[SignalName, tuple[MetricSeries, int]]] = defaultdict(dict)
    for region, pairs in by_region.items():
        answered = futures[region].result()  # get_metric_data reports failures in the series
        for request, slot in pairs:
            out[slot.target][slot.signal] = (answered[request.query_id], slot.seconds_per_unit)
    return out


def _outcome(future: Future[QueueDepth]) -> QueueDepth | str:
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - a failed queue read degrades its runner type only
        return describe(error)


def _assemble(
    target: WatchTarget,
    depth: QueueDepth | str,
    series: dict[SignalName, tuple[MetricSeries, int]],
    now: datetime,
    lookback: int,
) -> RunnerTypeSnapshot:
    signals: dict[SignalName, Reading] = {}
    if target.signals.get(SignalName.QUEUE_SIZE) == SQS_SOURCE:
        signals[SignalName.QUEUE_SIZE] = (
            Reading.of(depth.total)
            if isinstance(depth, QueueDepth)
            else Reading.missing(f"GetQueueAttributes failed: {depth}")
        )
    for signal, (metric, seconds_per_unit) in series.items():
        if metric.error:
            signals[signal] = Reading.missing(metric.error)
        elif not metric.points:
            signals[signal] = Reading.missing(f"no datapoints in the last {lookback // 60}m")
        else:
            stamp, value = metric.points[0]
            signals[signal] = Reading.of(value * seconds_per_unit, max(0.0, (now - stamp).total_seconds()))
    # An empty queue has no oldest job: its queue time is 0 whether its AWS/SQS age was not requested
    # or CloudWatch published nothing for it. A failed age read stays a failure.
    empty = isinstance(depth, QueueDepth) and depth.total == 0
    queue_time = signals.get(SignalName.QUEUE_TIME)
    age_unknown = SignalName.QUEUE_TIME in target.signals and (queue_time is None or queue_time.value is None)
    age_failed = SignalName.QUEUE_TIME in series and series[SignalName.QUEUE_TIME][0].error is not None
    if empty and age_unknown and not age_failed:
        signals[SignalName.QUEUE_TIME] = Reading.of(0)
    return RunnerTypeSnapshot(
        name=target.runner_type, region=target.region, queue_name=target.queue_name, team=target.team, signals=signals
    )
