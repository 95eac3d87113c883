"""The real Lambda handlers, loaded as Lambda loads them, with clients that count their calls.

Each handler's tick deadline runs on a Lambda clock, not the wall clock: the process's CPU time scaled to
the vCPU share its MemorySize buys in Lambda (bench/lambda_model.py), against the budget its Timeout in
template.yaml leaves. A busy machine (moto's server, other work on the same cores) stretches the wall
time of a tick, never what it would take in Lambda, so it cannot push a tick past its deadline here.
"""

from __future__ import annotations

import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.config import Config as BotoConfig

from bench.counting import CallLog, LogSink, counting_session
from bench.lambda_model import cpu_scale
from queuewatch.adapters.aws.clients import RETRY_CONFIG, AwsClients, Deadline
from queuewatch_cli.devkit.handlers import REPO_ROOT, FakeContext, arrives_when_made, load_handler_module

LOGICAL_IDS = {"collect": "CollectFunction", "evaluate": "EvaluateFunction", "track": "TrackFunction"}


def template_memory_mb(stage: str) -> int:
    """The function's MemorySize in template.yaml: the figures the cost model prices."""
    text = (REPO_ROOT / "template.yaml").read_text(encoding="utf-8")
    block = text.split(f"\n  {LOGICAL_IDS[stage]}:\n", 1)[1].split("\n  Resources\n", 1)[0]
    found = re.search(r"^\s+MemorySize: (\d+)\s*$", block, re.MULTILINE)
    if found is None:
        raise ValueError(f"template.yaml: no MemorySize for {LOGICAL_IDS[stage]}")
    return int(found[1])


def template_timeout_s(stage: str) -> int:
    """The function's Timeout in template.yaml: what its tick's deadline is computed from."""
    text = (REPO_ROOT / "template.yaml").read_text(encoding="utf-8")
    block = text.split(f"\n  {LOGICAL_IDS[stage]}:\n", 1)[1].split("\n  Resources\n", 1)[0]
    found = re.search(r"^\s+Timeout: (\d+)\s*$", block, re.MULTILINE)
    if found is None:
        raise ValueError(f"template.yaml: no Timeout for {LOGICAL_IDS[stage]}")
    return int(found[1])


class LambdaClock:
    """Seconds a Lambda function at `memory_mb` would have spent: this process's CPU time, scaled."""

    def __init__(self, memory_mb: int) -> None:
        self.scale = cpu_scale(memory_mb)

    def __call__(self) -> float:
        return time.process_time() * self.scale


# moto's one server process on a busy machine answers a 5,000-queue GetMetricData in more than the 5 s
# AWS is given: a wall-clock timeout would make the verdicts depend on the load. The tick's deadline
# (on the Lambda clock, from the production retry budget) still bounds each tick.
BENCH_CLIENT = RETRY_CONFIG.merge(BotoConfig(connect_timeout=30, read_timeout=120))


class LambdaTimedClients(AwsClients):
    """The handler's clients, with its tick's deadline moved from the wall clock to the Lambda clock."""

    def __init__(self, session: Any, clock: Callable[[], float]) -> None:
        super().__init__(session=session, config=BENCH_CLIENT)
        self.clock = clock

    def start_tick(self, deadline: Deadline | None) -> None:
        if deadline is not None:  # the same budget the handler computed, counted on the Lambda clock
            deadline = Deadline(self.clock() + (deadline.at - time.monotonic()), self.clock)
        super().start_tick(deadline)


@dataclass
class BenchContext(FakeContext):
    """LambdaContext with the function's own Timeout, where FakeContext gives every invocation 60 s."""

    timeout_s: int = 60

    def get_remaining_time_in_millis(self) -> int:
        return self.timeout_s * 1000


@dataclass
class Invocation:
    """One handler call: what it returned and what it cost."""

    result: Any
    wall_s: float
    cpu_s: float
    calls: Counter[str]
    attempts: int
    metrics_requested: int
    log: dict[str, int]
    server_cpu_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class Functions:
    """CollectFunction and EvaluateFunction in this process, sharing one call log and one log sink.

    Install before anything else writes to stdout: Powertools' Logger binds the stream it is made with.
    """

    def __init__(self, stages: tuple[str, ...] = ("collect", "evaluate")) -> None:
        self.log = CallLog()
        self.sink = LogSink()
        sys.stdout = self.sink
        self.modules = {stage: load_handler_module(stage) for stage in stages}
        self.connect()

    def connect(self) -> None:
        """New clients for both handlers, against the endpoint AWS_ENDPOINT_URL names now; they count their calls.

        The handlers make their clients at import, from a default session, and keep them: a bench that
        switches endpoint (moto directly, or through the latency proxy) makes them again.
        """
        session = counting_session(self.log)
        for stage, module in self.modules.items():
            aws = LambdaTimedClients(session, LambdaClock(template_memory_mb(stage)))
            setattr(module, "aws", aws)  # noqa: B010 - the handler module's own global

    def new_evaluator_container(self) -> None:
        """Forget what the evaluator remembers between warm invocations (its EvaluatorMemory).

        Each fleet is a new deployment whose timeline starts at the same T0: a memory carried over
        from the last fleet's later ticks would call every tick of this one stale.
        """
        module = self.modules["evaluate"]
        setattr(module, "memory", type(module.memory)())  # noqa: B010 - the handler module's own global

    def invoke(self, stage: str, event: dict[str, Any]) -> Invocation:
        module = self.modules[stage]
        if stage == "evaluate":
            arrives_when_made(module, event)  # the bench's timeline is simulated
        context = BenchContext(
            f"queuewatch-{stage}", memory_limit_in_mb=template_memory_mb(stage), timeout_s=template_timeout_s(stage)
        )
        self.log.take()
        self.sink.take()
        wall, cpu = time.perf_counter(), time.process_time()
        result = module.lambda_handler(event, context)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        calls, attempts, metrics = self.log.take()
        return Invocation(result, wall, cpu, calls, attempts, metrics, self.sink.take())


def peak_rss_mb() -> float:
    """This process's peak resident memory since it started its program (Linux's VmHWM).

    Not getrusage's ru_maxrss: that one carries the parent's peak over fork and exec.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")
