"""The GetMetricData plan of one round: every distinct metric query, grouped by region, each once.

A query several runner types share (a fleet-wide metric, a shared queue) is asked
once and its answer given to each of them, through its slots.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Set
from dataclasses import dataclass

from queuewatch.adapters.cloudwatch import MetricRequest
from queuewatch.collect.queues import WatchedQueue
from queuewatch.config import MetricQuery
from queuewatch.model.signals import COUNT_SIGNALS, RULE_SIGNALS, SQS_METRICS, SignalName

QUEUE_DEPTH_METRIC = "ApproximateNumberOfMessagesVisible"


@dataclass(frozen=True)
class MetricSlot:
    """Where one answered series goes: which runner type, which signal, and how to read it."""

    runner_index: int  # the runner type's place in the tick's list of watched queues
    signal: SignalName
    seconds_per_unit: int
    missing_as_zero: bool
    fleet_wide: bool = False
    exception: str | None = None  # ec2_exceptions: the exception name this query reads
    app: str | None = None  # github_app_rate_limit: the GitHub App id this query reads
    depth_history: bool = False  # the queue-depth series behind an SQS queue size, for the triage


_RequestKey = tuple[str | None, str, str, tuple[tuple[str, str], ...], str, int]


def metric_requests(
    targets: Iterable[WatchedQueue],
    empty: Set[int] = frozenset(),
    evidence_for: Set[int] | None = None,
    path_ages: Mapping[int, list[tuple[SignalName, str]]] | None = None,
) -> dict[str, list[tuple[MetricRequest, list[MetricSlot]]]]:
    """One round's metric queries, grouped by the region that answers them.

    Without `evidence_for`: what the rules judge, for every runner type except the AWS/SQS age
    of a queue in `empty`, and the oldest age of each path queue in `path_ages` (collect/paths.py). With
    it: the triage's evidence, for those runner types only. A query
    that several runner types share (a fleet-wide metric, a shared queue) is asked once and its
    answer given to each of them.
    """
    by_region: dict[str, dict[_RequestKey, tuple[MetricRequest, list[MetricSlot]]]] = defaultdict(dict)
    for index, target in enumerate(targets):
        if evidence_for is not None and index not in evidence_for:
            continue
        ages = (path_ages or {}).get(index, []) if evidence_for is None else []
        for is_evidence, region, query, slot in [
            *_queries(index, target, index in empty),
            *_path_ages(index, target, ages),
        ]:
            if is_evidence != (evidence_for is not None):
                continue
            entries = by_region[region]
            # A queue in another account: its metrics, AWS/SQS and the autoscaler's, live in that account.
            account = target.account_id if target.foreign else None
            dimensions = tuple(sorted(query.dimensions.items()))
            key = (account, query.namespace, query.metric, dimensions, query.stat, query.period)
            if key not in entries:
                request = MetricRequest(
                    query_id=f"q{len(entries) + 1}",
                    namespace=query.namespace,
                    metric=query.metric,
                    dimensions=dimensions,
                    stat=query.stat,
                    period=query.period,
                    account_id=account,
                )
                entries[key] = (request, [])
            entries[key][1].append(slot)
    return {region: list(entries.values()) for region, entries in by_region.items()}


def _path_ages(
    index: int, target: WatchedQueue, ages: list[tuple[SignalName, str]]
) -> Iterator[tuple[bool, str, MetricQuery, MetricSlot]]:
    metric, stat = SQS_METRICS[SignalName.QUEUE_TIME]
    for signal, queue in ages:
        query = MetricQuery(namespace="AWS/SQS", metric=metric, dimensions={"QueueName": queue}, stat=stat)
        yield False, target.region, query, MetricSlot(index, signal, 1, False)


def _queries(index: int, target: WatchedQueue, empty: bool) -> Iterator[tuple[bool, str, MetricQuery, MetricSlot]]:
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
                    slot = MetricSlot(index, signal, 1, zero, fleet, exception=name)
                    yield is_evidence, region, query.for_exception(name), slot
            elif signal == SignalName.GITHUB_APP_RATE_LIMIT:
                for app in query.apps:  # one query per app: each app's limit is its own
                    yield is_evidence, region, query.for_app(app), MetricSlot(index, signal, 1, zero, fleet, app=app)
            else:
                yield is_evidence, region, query, MetricSlot(index, signal, query.seconds_per_unit, zero, fleet)
            continue
        queue_dimensions = {"QueueName": target.queue_name}
        if signal == SignalName.QUEUE_SIZE:
            # The size itself is read from GetQueueAttributes; its recent history from AWS/SQS.
            depth = MetricQuery(
                namespace="AWS/SQS", metric=QUEUE_DEPTH_METRIC, dimensions=queue_dimensions, stat="Maximum"
            )
            yield True, target.region, depth, MetricSlot(index, signal, 1, False, depth_history=True)
            continue
        if empty and signal == SignalName.QUEUE_TIME:
            continue  # no job queued, so no oldest job: queue time 0, and a metric not billed
        metric, stat = SQS_METRICS[signal]
        query = MetricQuery(namespace="AWS/SQS", metric=metric, dimensions=queue_dimensions, stat=stat)
        # AWS/SQS publishes zeros for an active queue and nothing for an idle one: no datapoint is zero.
        yield is_evidence, target.region, query, MetricSlot(index, signal, 1, signal in COUNT_SIGNALS)
