"""How long a measured tick would run in Lambda, for the cost model and the memory size.

Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB. A tick's
client CPU, measured here on a full core, takes (1,769 / MemorySize) times as long there;
each sequential round of AWS calls adds AWS's latency. Counted without overlap, so high.
"""

from __future__ import annotations

import math
from typing import Any

VCPU_MB = 1769
AWS_LATENCY_S = 0.020  # per sequential round of calls, an assumption: in-region SQS/CloudWatch/DynamoDB
COLLECT_THREADS = 32  # queuewatch.collect.MAX_THREADS


def rounds(calls: dict[str, int]) -> int:
    """Sequential rounds of calls in a tick: concurrent GetQueueAttributes count 32 to a round."""
    sqs_reads = calls.get("sqs.GetQueueAttributes", 0)
    other = sum(n for name, n in calls.items() if name != "sqs.GetQueueAttributes")
    return math.ceil(sqs_reads / COLLECT_THREADS) + other


def lambda_seconds(stage: dict[str, Any], memory_mb: int) -> float:
    return float(stage["cpu_s"]) * max(1.0, VCPU_MB / memory_mb) + rounds(stage["calls"]) * AWS_LATENCY_S
