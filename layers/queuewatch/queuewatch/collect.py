"""The collect stage: read every watched queue and metric once, consume nothing, return a Snapshot.

Per tick: one ListQueues page per discovery entry, one GetQueueAttributes per
queue (concurrently), then GetMetricData in two rounds, each ceil(M/500) calls per
region for its M distinct metric queries. The first asks what the rules judge:
queue size and time (the AWS/SQS age only for queues holding a job). The second
asks the triage's evidence (every other signal, and the queue-depth history) for
the runner types that breach a rule, and is skipped when none does: a busy fleet's
queues hold jobs on most ticks, and evidence for each would multiply the bill,
which is per metric requested. A failed call degrades only the runner types that
read it. The calls reach back over the triage's baseline, so each signal's history
arrives with its current value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Set
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from queuewatch.adapters.cloudwatch import MetricRequest, MetricSeries, get_metric_data
from queuewatch.adapters.errors import describe
from queuewatch.adapters.sqs import QueueDepth, list_queue_urls, queue_url, read_queue_depth
from queuewatch.config import (
    COUNT_SIGNALS,
    SQS_METRICS,
    SQS_SOURCE,
    Config,
    MetricQuery,
    SignalName,
    SignalSource,
)
from queuewatch.durations import format_duration
from queuewatch.rules import judge
from queuewatch.snapshot import DiscoveryResult, Reading, RunnerTypeSnapshot, Snapshot

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_sqs import SQSClient

MAX_THREADS = 32
QUEUE_DEPTH_METRIC = "ApproximateNumberOfMessagesVisible"
LEVEL_HISTORY_SIGNALS = frozenset({SignalName.QUEUE_SIZE, SignalName.QUEUE_TIME, SignalName.JOB_DURATION})
"""Signals whose level over the triage window (growing, or above its baseline) the triage reads."""
RULE_SIGNALS = frozenset({SignalName.QUEUE_SIZE, SignalName.QUEUE_TIME})
"""What the rules judge (rules.judge); every other signal is the triage's evidence."""


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
    """Where one answered series goes: which runner type, which signal, and how to read it."""

    target: int
    signal: SignalName
    seconds_per_unit: int
    missing_as_zero: bool
    fleet_wide: bool = False
    exception: str | None = None  # ec2_exceptions: the exception name this query reads
    depth_history: bool = False  # the queue-depth series behind an SQS queue size, for the triage


@dataclass(frozen=True)
class _Spans:
    """The tick's time spans: the value must be fresher than lookback; the triage looks back further."""

    now: datetime
    lookback: int
    window: int
    baseline: int

    @property
    def fetched(self) -> int:
        return max(self.lookback, self.window + self.baseline)


class Clients:
    """What the collect stage needs from AWS, per region."""

    def __init__(self, sqs: Callable[[str], SQSClient], cloudwatch: Callable[[str], CloudWatchClient]) -> None:
        self.sqs = sqs
        self.cloudwatch = cloudwatch


def collect(config: Config, clients: Clients, *, now: datetime, account_id: str, snapshot_id: str) -> Snapshot:
    triage = config.defaults.triage
    spans = _Spans(now, config.defaults.metric_lookback, triage.window, triage.baseline)
    with ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="collect") as pool:
        targets, discovery = resolve_targets(config, clients, account_id, pool)
        # A queue whose size comes from a metric (a fork's shared queue) is not read at all.
        depth_futures = {
            index: pool.submit(read_queue_depth, clients.sqs(t.region), t.url)
            for index, t in enumerate(targets)
            if t.signals.get(SignalName.QUEUE_SIZE) == SQS_SOURCE
        }
        depths = {index: _outcome(future) for index, future in depth_futures.items()}
        empty = {index for index, depth in depths.items() if isinstance(depth, QueueDepth) and depth.total == 0}
        judged = _read_metrics(clients, metric_requests(targets, empty), spans, pool)
        runner_types = [
            _assemble(target, depths.get(index), judged.get(index, []), spans) for index, target in enumerate(targets)
        ]
        breaching = {index for index, runner_type in enumerate(runner_types) if _breaches(config, runner_type)}
        if breaching:
            evidence = _read_metrics(clients, metric_requests(targets, evidence_for=breaching), spans, pool)
            for index in breaching:  # only these gained series: the others stand as the first round read them
                series = judged.get(index, []) + evidence.get(index, [])
                runner_types[index] = _assemble(targets[index], depths.get(index), series, spans)
    return Snapshot(
        snapshot_id=snapshot_id,
        collected_at=now,
        runner_types=runner_types,
        discovery=discovery,
        triage_window_seconds=triage.window,
        baseline_seconds=triage.baseline,
    )


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


_RequestKey = tuple[str, str, tuple[tuple[str, str], ...], str, int]


def metric_requests(
    targets: Iterable[WatchTarget], empty: Set[int] = frozenset(), evidence_for: Set[int] | None = None
) -> dict[str, list[tuple[MetricRequest, list[_MetricSlot]]]]:
    """One round's metric queries, grouped by the region that answers them.

    Without `evidence_for`: what the rules judge, for every runner type except the AWS/SQS age
    of a queue in `empty`. With it: the triage's evidence, for those runner types only. A query
    that several runner types share (a fleet-wide metric, a shared queue) is asked once and its
    answer given to each of them.
    """
    by_region: dict[str, dict[_RequestKey, tuple[MetricRequest, list[_MetricSlot]]]] = defaultdict(dict)
    for index, target in enumerate(targets):
        if evidence_for is not None and index not in evidence_for:
            continue
        for is_evidence, region, query, slot in _queries(index, target, index in empty):
            if is_evidence != (evidence_for is not None):
                continue
            entries = by_region[region]
            key = (query.namespace, query.metric, tuple(sorted(query.dimensions.items())), query.stat, query.period)
            if key not in entries:
                request = MetricRequest(
                    query_id=f"q{len(entries) + 1}",
                    namespace=query.namespace,
                    metric=query.metric,
                    dimensions=key[2],
                    stat=query.stat,
                    period=query.period,
                )
                entries[key] = (request, [])
            entries[key][1].append(slot)
    return {region: list(entries.values()) for region, entries in by_region.items()}


def _queries(index: int, target: WatchTarget, empty: bool) -> Iterator[tuple[bool, str, MetricQuery, _MetricSlot]]:
    """Every metric query one runner type can need: (is the triage's evidence, region, query, slot)."""
    for signal, source in target.signals.items():
        is_evidence = signal not in RULE_SIGNALS
        if isinstance(source, MetricQuery):
            query = source.for_runner_type(target.runner_type)
            region = query.region or target.region
            zero = query.missing == "zero"
            fleet = not source.per_runner_type
            if signal == SignalName.EC2_EXCEPTIONS:
                for name in query.exceptions:
                    slot = _MetricSlot(index, signal, 1, zero, fleet, exception=name)
                    yield is_evidence, region, query.for_exception(name), slot
            else:
                yield is_evidence, region, query, _MetricSlot(index, signal, query.seconds_per_unit, zero, fleet)
            continue
        queue_dimensions = {"QueueName": target.queue_name}
        if signal == SignalName.QUEUE_SIZE:
            # The size itself is read from GetQueueAttributes; its recent history from AWS/SQS.
            depth = MetricQuery(
                namespace="AWS/SQS", metric=QUEUE_DEPTH_METRIC, dimensions=queue_dimensions, stat="Maximum"
            )
            yield True, target.region, depth, _MetricSlot(index, signal, 1, False, depth_history=True)
            continue
        if empty and signal == SignalName.QUEUE_TIME:
            continue  # no job queued, so no oldest job: queue time 0, and a metric not billed
        metric, stat = SQS_METRICS[signal]
        query = MetricQuery(namespace="AWS/SQS", metric=metric, dimensions=queue_dimensions, stat=stat)
        # AWS/SQS publishes zeros for an active queue and nothing for an idle one: no datapoint is zero.
        yield is_evidence, target.region, query, _MetricSlot(index, signal, 1, signal in COUNT_SIGNALS)


def _breaches(config: Config, runner_type: RunnerTypeSnapshot) -> bool:
    """Whether a rule breaches now on what the first round read: the pages that need the triage."""
    return any(judge(rule, runner_type).breached for rule in config.rules_for(runner_type.name))


def _read_metrics(
    clients: Clients,
    by_region: dict[str, list[tuple[MetricRequest, list[_MetricSlot]]]],
    spans: _Spans,
    pool: ThreadPoolExecutor,
) -> dict[int, list[tuple[MetricSeries, _MetricSlot]]]:
    # One time range for the whole call: long enough for the triage's baseline, which costs
    # datapoints in the answer but no extra calls.
    start = spans.now - timedelta(seconds=spans.fetched)
    futures = {
        region: pool.submit(get_metric_data, clients.cloudwatch(region), [r for r, _ in pairs], start, spans.now)
        for region, pairs in by_region.items()
    }
    out: dict[int, list[tuple[MetricSeries, _MetricSlot]]] = defaultdict(list)
    for region, pairs in by_region.items():
        answered = futures[region].result()  # get_metric_data reports failures in the series
        for request, slots in pairs:
            for slot in slots:
                out[slot.target].append((answered[request.query_id], slot))
    return out


def _outcome(future: Future[QueueDepth]) -> QueueDepth | str:
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - a failed queue read degrades its runner type only
        return describe(error)


def _assemble(
    target: WatchTarget,
    depth: QueueDepth | str | None,
    series: list[tuple[MetricSeries, _MetricSlot]],
    spans: _Spans,
) -> RunnerTypeSnapshot:
    signals: dict[SignalName, Reading] = {}
    if depth is not None:
        signals[SignalName.QUEUE_SIZE] = (
            Reading.of(depth.total)
            if isinstance(depth, QueueDepth)
            else Reading.missing(f"GetQueueAttributes failed: {depth}")
        )
    grouped: dict[SignalName, list[tuple[MetricSeries, _MetricSlot]]] = defaultdict(list)
    for metric, slot in series:
        grouped[slot.signal].append((metric, slot))
    for signal, answers in grouped.items():
        history = [(m, s) for m, s in answers if s.depth_history]
        own = [(m, s) for m, s in answers if not s.depth_history]
        if signal == SignalName.EC2_EXCEPTIONS:
            signals[signal] = _exceptions_reading(own, spans)
        elif own:
            metric, slot = own[0]
            signals[signal] = _reading(metric, slot, spans)
        if history and signal in signals:
            signals[signal] = _with_level_history(signals[signal], history[0][0], 1, spans)
    # An empty queue has no oldest message: CloudWatch may publish nothing, which is not a fault.
    # Its AWS/SQS age is not even asked for (see metric_requests).
    queue_time = signals.get(SignalName.QUEUE_TIME)
    age_unknown = SignalName.QUEUE_TIME in target.signals and (queue_time is None or queue_time.value is None)
    age_failed = any(m.error for m, _ in grouped.get(SignalName.QUEUE_TIME, []))
    empty = signals.get(SignalName.QUEUE_SIZE, Reading()).value == 0
    if age_unknown and empty and not age_failed:
        signals[SignalName.QUEUE_TIME] = Reading.of(0)
    return RunnerTypeSnapshot(
        name=target.runner_type, region=target.region, queue_name=target.queue_name, team=target.team, signals=signals
    )


def _fresh_value(metric: MetricSeries, slot: _MetricSlot, spans: _Spans) -> Reading:
    """The newest datapoint if it is fresh enough, else why there is none."""
    if metric.error:
        return Reading.missing(metric.error)
    if metric.points:
        stamp, value = metric.points[0]  # newest first
        age = (spans.now - stamp).total_seconds()
        if age <= spans.lookback:
            return Reading.of(value * slot.seconds_per_unit, max(0.0, age))
    if slot.missing_as_zero:
        return Reading.of(0)
    if metric.points:
        age = (spans.now - metric.points[0][0]).total_seconds()
        return Reading.missing(
            f"stale: the last datapoint is {format_duration(age)} old, "
            f"beyond metric_lookback {format_duration(spans.lookback)}"
        )
    return Reading.missing(f"no datapoints in the last {format_duration(spans.fetched)}")


def _reading(metric: MetricSeries, slot: _MetricSlot, spans: _Spans) -> Reading:
    reading = _fresh_value(metric, slot, spans)
    if reading.value is None:
        return reading
    if slot.fleet_wide:
        reading = reading.model_copy(update={"fleet_wide": True})
    if slot.signal in COUNT_SIGNALS:
        window, baseline = _sums(metric, spans)
        return reading.model_copy(
            update={
                "window_sum": _round(window * slot.seconds_per_unit),
                "baseline_sum": _round(baseline * slot.seconds_per_unit),
            }
        )
    if slot.signal in LEVEL_HISTORY_SIGNALS:
        return _with_level_history(reading, metric, slot.seconds_per_unit, spans)
    return reading


def _with_level_history(reading: Reading, metric: MetricSeries, per_unit: int, spans: _Spans) -> Reading:
    if reading.value is None or metric.error:
        return reading
    cutoff = spans.now - timedelta(seconds=spans.window)
    recent = [value for stamp, value in metric.points if stamp >= cutoff]  # newest first
    earlier = [value for stamp, value in metric.points if stamp < cutoff]
    update: dict[str, float] = {}
    if recent:
        update["window_first"] = _round(recent[-1] * per_unit)
        update["window_last"] = _round(recent[0] * per_unit)
    if earlier:
        update["baseline_mean"] = _round(sum(earlier) / len(earlier) * per_unit)
    return reading.model_copy(update=update)


def _sums(metric: MetricSeries, spans: _Spans) -> tuple[float, float]:
    """The total over the window, and the usual total per window over the baseline before it."""
    cutoff = spans.now - timedelta(seconds=spans.window)
    start = cutoff - timedelta(seconds=spans.baseline)
    window = sum(value for stamp, value in metric.points if stamp >= cutoff)
    before = sum(value for stamp, value in metric.points if start <= stamp < cutoff)
    return window, before * spans.window / spans.baseline


def _exceptions_reading(answers: list[tuple[MetricSeries, _MetricSlot]], spans: _Spans) -> Reading:
    """RunInstances exceptions by name: the window's total per name, read from one query per name."""
    errors = [m.error for m, _ in answers if m.error]
    if errors and len(errors) == len(answers):
        return Reading.missing(errors[0])
    by_name: dict[str, float] = {}
    baseline = 0.0
    seen_any = False
    for metric, slot in answers:
        if metric.error or slot.exception is None:
            continue
        seen_any = seen_any or bool(metric.points)
        window, before = _sums(metric, spans)
        baseline += before
        if window:
            by_name[slot.exception] = _round(window)
    if not seen_any and not answers[0][1].missing_as_zero:
        return Reading.missing(f"no datapoints in the last {format_duration(spans.fetched)}")
    total = sum(by_name.values())
    return Reading(
        value=total,
        age_seconds=0.0,
        window_sum=_round(total),
        baseline_sum=_round(baseline),
        by_name=by_name,
        fleet_wide=True if answers[0][1].fleet_wide else None,
    )


def _round(value: float) -> float:
    return round(value, 2)
