"""Which queues a tick reads with GetQueueAttributes, where the tracked jobs decide queue size and time.

Without tracking, or where the rules judge the autoscaler's queue (queue_source: sqs), every queue is read
every tick: its depth is what the rules judge. Where they judge the jobs (queue_source: jobs, the default
with tracking), the queue's depth is evidence beside them, shown as scale-up requests: the triage compares
it with the jobs only where jobs wait (no_scale_up_request), and a page shows it beside each runner type it
names. So a tick reads the queue of
- every runner type with jobs waiting now: the triage and the firing page;
- every runner type that had jobs waiting within the rules' longest keep_firing_for, and a tick more: the
  pages of an alert that is still firing or resolves, while its jobs are gone;
- one runner type in ROTATION, by a hash of its name, turn by turn: every queue is read at least every
  ROTATION ticks, so a queue deleted or unreadable shows in the snapshot within that;
- every queue on a container's first tick (it remembers nothing yet), and whenever the jobs could not be
  read (then the queue is all there is to show).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from queuewatch.collect.queues import WatchedQueue

ROTATION = 10  # ticks between two reads of a queue no jobs wait on
TICK = timedelta(minutes=1)


class CollectorMemory:
    """What a warm container remembers between ticks: when each runner type last had jobs waiting.

    Kept in the handler's module (the collector runs one tick at a time, so usually in one container). A
    new container remembers nothing, so its first tick reads every queue.
    """

    def __init__(self) -> None:
        self.last_waiting: dict[str, datetime] = {}
        self.warm = False

    def recently_waiting(self, now: datetime, hold: timedelta) -> set[str]:
        # A tick from the past (a late or repeated event) sees its future entries as recent: read them too.
        return {name for name, seen in self.last_waiting.items() if now - seen <= hold}

    def remember(self, waiting: Iterable[str], now: datetime, hold: timedelta) -> None:
        for name in waiting:
            if name not in self.last_waiting or self.last_waiting[name] < now:
                self.last_waiting[name] = now
        self.last_waiting = {name: seen for name, seen in self.last_waiting.items() if now - seen <= hold}
        self.warm = True


def in_rotation(runner_type: str, now: datetime) -> bool:
    """Whether this tick's turn reads the runner type's queue: a stable hash, so a fleet that grows or shrinks
    does not shift everyone's turn."""
    turn = int(now.timestamp() // TICK.total_seconds()) % ROTATION
    return zlib.crc32(runner_type.encode()) % ROTATION == turn


def queues_to_read(
    targets: Sequence[WatchedQueue],
    candidates: Iterable[int],
    waiting: set[str],
    memory: CollectorMemory | None,
    now: datetime,
    hold: timedelta,
) -> set[int]:
    """The indexes among `candidates` (the runner types whose size the queue gives) whose queue this tick
    reads, and the memory updated with who waits now. Without a memory (a one-off run), every queue."""
    chosen = set(candidates)
    if memory is None:
        return chosen
    if memory.warm:
        recent = memory.recently_waiting(now, hold) | waiting
        chosen = {i for i in chosen if targets[i].runner_type in recent or in_rotation(targets[i].runner_type, now)}
    memory.remember(waiting, now, hold)
    return chosen
