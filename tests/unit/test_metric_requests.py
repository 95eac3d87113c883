"""Which metric queries each GetMetricData round asks: what the rules judge, then the triage's evidence."""

from __future__ import annotations

from typing import Any

from queuewatch.adapters.cloudwatch import MetricRequest
from queuewatch.collect import WatchedQueue
from queuewatch.collect.queries import metric_requests
from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName

CONFIG = """
version: 1
defaults:
  signals:
    job_arrivals: sqs
    creation_failures: {namespace: Fleet, metric: CreateFailures, stat: Sum, missing: zero}
    busy_runners:
      {namespace: GitHub Runners, metric: BusyRunners, dimensions: {RunnerType: "{runner_type}"}, stat: Maximum}
runner_types:
  - {name: a, queue: {name: qa}}
  - {name: b, queue: {name: qb}}
  - {name: c, queue: {name: qc}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m}}
"""


def targets() -> list[WatchedQueue]:
    config = parse_config(CONFIG)
    return [
        WatchedQueue(spec.name, "us-east-1", "123456789012", spec.queue.queue_name, None, config.signals_for({}))
        for spec in config.runner_types
        if spec.queue is not None
    ]


def asked(requests: dict[str, list[tuple[MetricRequest, list[Any]]]]) -> dict[str, list[tuple[str, str]]]:
    """Per query (metric:dimension), the runner type index and signal of each slot it answers."""
    out: dict[str, list[tuple[str, str]]] = {}
    for pairs in requests.values():
        for request, slots in pairs:
            name = f"{request.metric}:{next(iter(dict(request.dimensions).values()), '')}"
            out[name] = [(str(s.runner_index), s.signal.value) for s in slots]
    return out


def test_the_first_round_asks_only_the_ages_of_queues_holding_jobs() -> None:
    first = asked(metric_requests(targets(), empty={2}))
    assert first == {
        "ApproximateAgeOfOldestMessage:qa": [("0", "queue_time")],
        "ApproximateAgeOfOldestMessage:qb": [("1", "queue_time")],
    }


def test_the_second_round_asks_the_evidence_of_the_breaching_runner_types_only() -> None:
    second = asked(metric_requests(targets(), empty={2}, evidence_for={0, 1}))
    assert set(second) == {
        "ApproximateNumberOfMessagesVisible:qa",  # the queue-depth history behind the size
        "ApproximateNumberOfMessagesVisible:qb",
        "NumberOfMessagesSent:qa",
        "NumberOfMessagesSent:qb",
        "BusyRunners:a",
        "BusyRunners:b",
        "CreateFailures:",
    }
    # A fleet-wide query is asked once, and its answer goes to each runner type that needs it.
    failures = SignalName.CREATION_FAILURES.value
    assert second["CreateFailures:"] == [("0", failures), ("1", failures)]
    assert not any(target == "2" for slots in second.values() for target, _ in slots)


def test_no_runner_type_breaching_means_no_second_round() -> None:
    assert metric_requests(targets(), empty=set(), evidence_for=set()) == {}
