"""The bench's Lambda time: a tick's deadline on the handler's CPU clock, not the wall clock, and the
verdict on the collector's Lambda time at 5,000 runner types, tracking off and on."""

from __future__ import annotations

import copy
import time
from typing import Any

import boto3
import pytest

from bench.functions import LambdaClock, LambdaTimedClients
from bench.lambda_model import cpu_scale, lambda_estimates
from bench.report import COLLECT_TARGET_S, tick_budget_s
from queuewatch.adapters.aws.clients import Deadline


def test_the_deadline_runs_on_the_lambda_clock_whatever_the_wall_clock_does() -> None:
    now = [100.0]
    clients = LambdaTimedClients(boto3.Session(), clock=lambda: now[0])
    clients.start_tick(Deadline(time.monotonic() + 5.0))  # the budget the handler computed: 5 s
    deadline = clients._deadline
    assert deadline is not None
    assert deadline.at == pytest.approx(105.0, abs=0.5)
    now[0] = 104.0
    assert not deadline.expired()
    now[0] = 106.0
    assert deadline.expired()


def test_lambda_gives_cpu_by_memory_and_one_process_uses_one_vcpu_at_most() -> None:
    assert cpu_scale(1769) == 1.0
    assert cpu_scale(1024) == 1769 / 1024
    assert cpu_scale(3538) == 1.0
    assert LambdaClock(1024).scale == 1769 / 1024


def fleet(collect_cpu_s: float, reads: int, *, tracked_cpu_s: float | None = None) -> dict[str, Any]:
    calls = {"sqs.GetQueueAttributes": reads, "sqs.ListQueues": 6, "cloudwatch.GetMetricData": 4}
    stage = {
        "cpu_s": collect_cpu_s * 1.3,
        "calls": calls,
        "metrics_requested": 0,
    }  # the 0 ms ticks pay a TCP connection a call
    evaluate = {"cpu_s": 0.3, "calls": {"dynamodb.Query": 1}}
    figures: dict[str, Any] = {
        "memory_mb": {"collect": 1769, "evaluate": 256},
        "ours": {"collect": stage, "evaluate": evaluate},
        "latency": {"ours": {"collect_cpu_s": collect_cpu_s, "evaluate_cpu_s": 0.3}},
        "tracked": None,
    }
    if tracked_cpu_s is not None:
        tracked_stage = {"cpu_s": tracked_cpu_s, "calls": {**calls, "sqs.GetQueueAttributes": reads // 5}}
        figures["tracked"] = {
            "collect": tracked_stage,
            "evaluate": evaluate,
            "latency": {"collect_cpu_s": tracked_cpu_s, "evaluate_cpu_s": 0.3},
        }
    return figures


def test_the_estimate_is_the_handlers_cpu_over_kept_alive_connections_plus_the_rounds_of_calls() -> None:
    estimates = lambda_estimates(fleet(6.0, 5000, tracked_cpu_s=2.0))
    assert estimates["tracking off"]["collect"] == pytest.approx(6.0 + (79 + 10) * 0.020)
    assert estimates["tracking on"]["collect"] == pytest.approx(2.0 + (16 + 10) * 0.020)
    assert estimates["tracking off"]["collect_direct"] > estimates["tracking off"]["collect"]


def test_the_target_and_the_deadline_are_judged_on_those_estimates() -> None:
    from bench.report import Printer, targets

    met = fleet(6.0, 5000, tracked_cpu_s=2.0)
    slow = fleet(12.0, 5000, tracked_cpu_s=2.0)
    late = fleet(30.0, 5000, tracked_cpu_s=2.0)
    for figures in (met, slow, late):
        figures.update(runner_types=5000, minimum={})
        figures["ours"].update(writes=0, publishes=0, outcomes=["unchanged"], steady_failures=[])
        figures["ours"]["cold"] = {s: {"cpu_s": 1.0, "calls": {}, "peak_rss_mb": 60.0} for s in ("collect", "evaluate")}
        figures["ours"]["state"] = {"read_units": 1}
        figures["tracked"].update(outcomes=["unchanged"], steady_failures=[], over_minimum={})
    results = {"memory_mb": met["memory_mb"], "imports": IMPORTS}

    class Quiet(Printer):
        def line(self, text: str = "") -> None:
            pass

    def judged(figures: dict[str, Any]) -> dict[str, Any]:
        return targets(Quiet(None), {**results, "fleets": {"5000": copy.deepcopy(figures)}})  # type: ignore[arg-type]

    assert judged(met)["collector_at_most_10s_at_5000"]["met"] is True
    assert judged(slow)["collector_at_most_10s_at_5000"]["met"] is False
    assert slow["latency"]["ours"]["collect_cpu_s"] < tick_budget_s("collect") < 30.0
    assert judged(slow)["ticks_within_deadline"]["met"] is True
    assert judged(late)["ticks_within_deadline"]["over"] == {"5000 tracking off collect": 31.78}
    unsteady = copy.deepcopy(met)
    unsteady["tracked"]["outcomes"] = ["changed"]
    assert judged(unsteady)["steady_writes_nothing"]["met"] is False
    assert COLLECT_TARGET_S == 10.0


IMPORTS = {
    name: {"ratio": 1.0, "ms": 1.0, "wall_ms": 1.0, "rss_mb": 1.0}
    for name in ("import boto3", "collect handler", "evaluate handler", "libraries alone")
}
