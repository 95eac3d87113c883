"""How long a measured tick would run in Lambda, for the cost model and the memory size.

Lambda gives a function CPU in proportion to its memory: one vCPU at 1,769 MB. A tick's
client CPU, measured here on a full core, takes (1,769 / MemorySize) times as long there;
each sequential round of AWS calls adds AWS's latency. Counted without overlap, so high.
"""

from __future__ import annotations

import math
from typing import Any

from queuewatch.collect import MAX_THREADS

VCPU_MB = 1769
AWS_LATENCY_S = 0.020  # per sequential round of calls, an assumption: in-region SQS/CloudWatch/DynamoDB
COLLECT_THREADS = MAX_THREADS


def rounds(calls: dict[str, int]) -> int:
    """Sequential rounds of calls in a tick: concurrent GetQueueAttributes count MAX_THREADS to a round."""
    sqs_reads = calls.get("sqs.GetQueueAttributes", 0)
    other = sum(n for name, n in calls.items() if name != "sqs.GetQueueAttributes")
    return math.ceil(sqs_reads / COLLECT_THREADS) + other


def cpu_scale(memory_mb: int) -> float:
    """How much longer a CPU-second measured on a full core takes in Lambda at `memory_mb`. One Python
    process uses one vCPU at most (threads share it), so more memory than 1,769 MB buys it nothing."""
    return max(1.0, VCPU_MB / memory_mb)


def lambda_seconds(stage: dict[str, Any], memory_mb: int) -> float:
    return float(stage["cpu_s"]) * cpu_scale(memory_mb) + rounds(stage["calls"]) * AWS_LATENCY_S


MODES = ("tracking off", "tracking on")


def lambda_estimates(figures: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each stage's estimated Lambda time per steady tick (bench/lambda_model.py), tracking off and on.

    From the handlers' own CPU in the ticks through the latency proxy: their connections stay open as
    AWS's do, where moto's server closes each one and every call pays a new TCP connection. The 0 ms
    ticks' figure is given beside it. Neither depends on the machine's load, as wall time does.
    """
    memory = {stage: int(figures["memory_mb"][stage]) for stage in ("collect", "evaluate")}
    out: dict[str, dict[str, float]] = {}
    sources = {"tracking off": (figures["ours"], figures["latency"]["ours"]), "tracking on": None}
    if figures.get("tracked"):
        sources["tracking on"] = (figures["tracked"], figures["tracked"]["latency"])
    for mode, pair in sources.items():
        if pair is None:
            continue
        direct, proxied = pair
        collect_cpu = proxied.get("collect_cpu_s", direct["collect"]["cpu_s"])
        evaluate_cpu = proxied.get("evaluate_cpu_s", direct["evaluate"]["cpu_s"])
        out[mode] = {
            "collect": lambda_seconds({"cpu_s": collect_cpu, "calls": direct["collect"]["calls"]}, memory["collect"]),
            "evaluate": lambda_seconds(
                {"cpu_s": evaluate_cpu, "calls": direct["evaluate"]["calls"]}, memory["evaluate"]
            ),
            "collect_cpu_s": collect_cpu,
            "collect_direct": lambda_seconds(direct["collect"], memory["collect"]),
        }
    return out
