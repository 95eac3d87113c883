"""A fleet-wide incident: the calls one tick makes, and how many ticks it takes to send every page once
the tick's deadline bounds the work (one page under `group_by: all`, one per runner type under
`group_by: runner_type`).

Run: .venv/bin/python -m bench.incident_writes [runner types, default 1000] [ms a call, default 15]
[group_by, default runner_type; `all` is one fleet-wide page].
Against an in-process moto, each call advances a simulated clock by the per-call latency (DynamoDB
and SNS answer Lambda in about 10-20 ms) on the thread that makes it (the evaluator writes instance
states 16 at a time), and the evaluator's Deadline (Deadline.for_tick on its 45 s timeout) reads that
clock: what does not fit one tick is deferred to the next, never lost or doubled.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from moto import mock_aws

from queuewatch.adapters.aws.clients import AwsClients, Deadline
from queuewatch.config.load import parse_config
from queuewatch.evaluate import Stack
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot, Snapshot
from queuewatch_cli.devkit.moto_tables import create_state_table

EVALUATE_TIMEOUT_SECONDS = 45  # template.yaml, EvaluateFunction
MAX_TICKS = 10


def config_text(size: int, group_by: str) -> str:
    return (
        "version: 1\ndefaults:\n  rule: {team: ci-infra}\nrunner_types:\n"
        + "".join(f"  - {{name: rt{n}, queue: {{name: q{n}}}}}\n" for n in range(size))
        + f"rules:\n  - {{name: jobs-queueing, thresholds: {{queue_size: 0}}, priority: P2, group_by: {group_by}}}\n"
    )


def incident(size: int, at: datetime) -> Snapshot:
    signals = {SignalName.QUEUE_SIZE: Reading.of(5), SignalName.QUEUE_TIME: Reading.of(600)}
    template = RunnerTypeSnapshot(name="rt0", region="us-east-1", queue_name="q0", signals=signals)
    runner_types = [template.model_copy(update={"name": f"rt{n}", "queue_name": f"q{n}"}) for n in range(size)]
    return Snapshot(snapshot_id=f"incident-{at:%H%M}", collected_at=at, runner_types=runner_types)


def _read(at: datetime) -> datetime:
    return at


def main(size: int, latency_ms: float, group_by: str = "runner_type") -> None:
    config = parse_config(config_text(size, group_by), source="bench.yaml")
    calls: Counter[str] = Counter()
    main_thread = threading.get_ident()
    elapsed: dict[int, float] = {main_thread: 0.0}  # simulated seconds each thread has spent in calls

    def one_call(event_name: str, **_: Any) -> None:
        calls[event_name.split(".", 2)[2]] += 1
        ident = threading.get_ident()
        if ident == main_thread:
            elapsed[main_thread] = max(elapsed.values())  # it waited for every writer before its next call
        else:
            elapsed.setdefault(ident, elapsed[main_thread])  # a writer starts when the main thread started it
        elapsed[ident] += latency_ms / 1000

    def simulated() -> float:
        return max(elapsed.values())

    start = datetime.now(UTC).replace(second=0, microsecond=0)
    memory = EvaluatorMemory()
    paged: set[str] = set()
    with mock_aws():
        clients = AwsClients()
        dynamodb, sns = clients.dynamodb("us-east-1"), clients.sns("us-east-1")
        create_state_table(dynamodb, "state")
        stack = Stack(table="state", topic_arn=sns.create_topic(Name="a")["TopicArn"], name="b", region="us-east-1")
        for client in (dynamodb, sns):
            client.meta.events.register("before-call", one_call)
        print(f"{size} runner types start queueing at once, group_by: {group_by}, {latency_ms:g} ms a call:")
        for tick in range(MAX_TICKS):
            calls.clear()
            elapsed.clear()
            elapsed[main_thread] = 0.0
            clients.start_tick(Deadline.for_tick(EVALUATE_TIMEOUT_SECONDS, clock=simulated))
            at = start + timedelta(minutes=tick)
            arrives = partial(_read, at)  # the record arrives at its tick
            result = evaluate(incident(size, at), config, dynamodb, sns, stack, memory=memory, clock=arrives)
            sent = [page for page in result.pages_sent if page not in paged]
            doubled = len(result.pages_sent) - len(sent)
            paged.update(sent)
            made = ", ".join(f"{op} {n}" for op, n in sorted(calls.items()))
            print(
                f"  tick {tick + 1}: {sum(calls.values())} calls ({made}),"
                f" {simulated():.1f} s simulated; {len(sent)} pages sent, {len(result.deferred)} deferred,"
                f" {doubled} sent again"
            )
            if not result.deferred:
                break
    pages = size if group_by == "runner_type" else 1
    verdict = "met" if len(paged) == pages else "MISSED"
    print(f"  every page sent once within {tick + 1} ticks: {verdict} ({len(paged)} of {pages})")


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 1000,
        float(sys.argv[2]) if len(sys.argv) > 2 else 15.0,
        sys.argv[3] if len(sys.argv) > 3 else "runner_type",
    )
