"""The autoscaler's job-retry and dead-letter queues beside each runner type's build queue, read every tick.

Each found queue costs one GetQueueAttributes a tick (the lean reader, beside the build queues' reads),
and where it holds messages, one AWS/SQS ApproximateAgeOfOldestMessage query in the first GetMetricData
round, which asks for it at no call more. So a stuck check or a dead-lettered request shows on the tick
SQS counts it, and its age as CloudWatch publishes it. A queue that cannot be read gives its signals the
reason (a degraded signal on the monitor page), never a 0. A runner type with no such queue found has no
such signal at all: that path is not deployed (demand_paths.py).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.sqs import QueueDepth
from queuewatch.collect.queues import WatchedQueue
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot


@dataclass(frozen=True)
class PathQueue:
    """One path's queue for one runner type: which queue, and its signals."""

    queue_name: str
    count: SignalName
    age: SignalName


def path_queues(target: WatchedQueue) -> list[PathQueue]:
    out = []
    if target.job_retry_queue:
        out.append(PathQueue(target.job_retry_queue, SignalName.JOB_RETRY_CHECKS, SignalName.JOB_RETRY_AGE))
    if target.dead_letter_queue:
        out.append(PathQueue(target.dead_letter_queue, SignalName.DEAD_LETTERED, SignalName.DEAD_LETTER_AGE))
    return out


PathDepths = dict[tuple[int, SignalName], QueueDepth | str]
"""(runner index, count signal) -> the depth read, or its failure's reason."""


def read_paths(
    targets: list[WatchedQueue], reader: Callable[[str], Callable[[str], QueueDepth]], pool: ThreadPoolExecutor
) -> Callable[[], PathDepths]:
    """Start every path queue's read; the returned function waits for them. `reader(region)` reads a URL."""
    futures: dict[tuple[int, SignalName], Future[QueueDepth]] = {}
    for index, target in enumerate(targets):
        for path in path_queues(target):
            read = reader(target.region)
            futures[(index, path.count)] = pool.submit(read, target.url_of(path.queue_name))

    def results() -> PathDepths:
        out: PathDepths = {}
        for key, future in futures.items():
            try:
                out[key] = future.result()
            except Exception as error:  # noqa: BLE001 - a failed read degrades that path's signals only
                out[key] = describe(error)
        return out

    return results


def aged_paths(targets: list[WatchedQueue], depths: PathDepths) -> dict[int, list[tuple[SignalName, str]]]:
    """The path queues holding messages, whose oldest age the first metric round asks for: (signal, queue)."""
    out: dict[int, list[tuple[SignalName, str]]] = {}
    for index, target in enumerate(targets):
        for path in path_queues(target):
            depth = depths.get((index, path.count))
            if isinstance(depth, QueueDepth) and depth.total > 0:
                out.setdefault(index, []).append((path.age, path.queue_name))
    return out


def with_paths(
    runner_type: RunnerTypeSnapshot, target: WatchedQueue, index: int, depths: PathDepths
) -> RunnerTypeSnapshot:
    """The runner type with its path queues' names and counts; an empty queue's oldest age is 0."""
    signals = dict(runner_type.signals)
    for path in path_queues(target):
        depth = depths.get((index, path.count))
        if isinstance(depth, QueueDepth):
            signals[path.count] = Reading.of(depth.total)
            if depth.total == 0:
                signals[path.age] = Reading.of(0)
        else:
            reason = f"GetQueueAttributes of {path.queue_name} failed: {depth or 'not read'}"
            signals[path.count] = signals[path.age] = Reading.missing(reason)
    update = {
        "signals": signals,
        "job_retry_queue": target.job_retry_queue,
        "dead_letter_queue": target.dead_letter_queue,
    }
    return runner_type.model_copy(update=update)
