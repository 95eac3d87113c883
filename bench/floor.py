"""The least wall time a tick can take when each AWS call costs a round trip: the rounds that cannot overlap.

A tick's calls depend on each other in a fixed order: ListQueues (pages one after another)
before GetQueueAttributes, which the collector runs `concurrency` at a time; then the
GetMetricData round for what the rules judge, then the triage's evidence round for the
runner types that breach (skipped if none does), each as ceil(M/500) calls one after another
per region, the regions side by side; then the evaluator's state Query and its publishes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

QUEUES_PER_LIST_PAGE = 1000
METRICS_PER_CALL = 500


@dataclass(frozen=True)
class TickShape:
    """Per region: queues listed, age metrics the rules judge, evidence metrics; and the evaluator's calls."""

    queues: Mapping[str, int]
    judged_metrics: Mapping[str, int]
    evidence_metrics: Mapping[str, int]
    state_query_pages: int = 1
    publishes: int = 0


@dataclass(frozen=True)
class Rounds:
    listing: int
    queue_reads: int
    judged_metrics: int
    evidence_metrics: int
    evaluate: int

    @property
    def total(self) -> int:
        return self.listing + self.queue_reads + self.judged_metrics + self.evidence_metrics + self.evaluate

    def floor_s(self, latency_s: float) -> float:
        return self.total * latency_s


def _per_region(counts: Mapping[str, int], per_call: int) -> int:
    return max((math.ceil(n / per_call) for n in counts.values()), default=0)


def rounds(shape: TickShape, concurrency: int) -> Rounds:
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    queue_reads = sum(shape.queues.values())
    return Rounds(
        listing=max(1, _per_region(shape.queues, QUEUES_PER_LIST_PAGE)) if shape.queues else 0,
        queue_reads=math.ceil(queue_reads / concurrency),
        judged_metrics=_per_region(shape.judged_metrics, METRICS_PER_CALL),
        evidence_metrics=_per_region(shape.evidence_metrics, METRICS_PER_CALL),
        evaluate=shape.state_query_pages + shape.publishes,
    )
