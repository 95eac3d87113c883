"""Which queues a tick reads where the tracked jobs are judged: where jobs wait, waited lately, or whose turn
it is; every queue on a container's first tick and without a memory."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from queuewatch.collect.depth_reads import ROTATION, CollectorMemory, in_rotation, queues_to_read
from queuewatch.collect.queues import WatchedQueue

T0 = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
HOLD = timedelta(minutes=6)
FLEET = [
    WatchedQueue(
        runner_type=f"linux-{n:03d}", region="us-east-1", account_id="1" * 12, queue_name=f"q{n}", team=None, signals={}
    )
    for n in range(200)
]
ALL = range(len(FLEET))


def names(indexes: set[int]) -> set[str]:
    return {FLEET[i].runner_type for i in indexes}


def minute(n: int) -> datetime:
    return T0 + timedelta(minutes=n)


def turn(at: datetime) -> set[str]:
    return {q.runner_type for q in FLEET if in_rotation(q.runner_type, at)}


def test_a_first_tick_and_a_one_off_run_read_every_queue() -> None:
    assert queues_to_read(FLEET, ALL, set(), None, T0, HOLD) == set(ALL)
    memory = CollectorMemory()
    assert queues_to_read(FLEET, ALL, set(), memory, T0, HOLD) == set(ALL)
    assert memory.warm


def test_a_warm_tick_reads_where_jobs_wait_and_the_rotations_turn() -> None:
    memory = CollectorMemory()
    queues_to_read(FLEET, ALL, set(), memory, T0, HOLD)
    read = queues_to_read(FLEET, ALL, {"linux-007"}, memory, minute(1), HOLD)
    assert names(read) == {"linux-007"} | turn(minute(1))
    assert len(read) < len(FLEET) / 5


def test_a_queue_stays_read_while_an_alert_on_it_can_still_fire_or_resolve() -> None:
    memory = CollectorMemory()
    queues_to_read(FLEET, ALL, set(), memory, T0, HOLD)
    queues_to_read(FLEET, ALL, {"linux-007"}, memory, minute(1), HOLD)  # jobs wait
    for n in range(2, 8):  # the jobs are gone; keep_firing_for and a tick (HOLD) after they were last seen
        assert "linux-007" in names(queues_to_read(FLEET, ALL, set(), memory, minute(n), HOLD)), n
    later = queues_to_read(FLEET, ALL, set(), memory, minute(8), HOLD)
    assert names(later) == turn(minute(8))


def test_every_queue_is_read_within_a_rotation() -> None:
    memory = CollectorMemory()
    queues_to_read(FLEET, ALL, set(), memory, T0, HOLD)
    seen: set[int] = set()
    for n in range(1, ROTATION + 1):
        seen |= queues_to_read(FLEET, ALL, set(), memory, minute(n), HOLD)
    assert seen == set(ALL)


def test_a_late_tick_still_reads_what_waits_after_it() -> None:
    memory = CollectorMemory()
    queues_to_read(FLEET, ALL, set(), memory, T0, HOLD)
    queues_to_read(FLEET, ALL, {"linux-011"}, memory, minute(5), HOLD)
    assert "linux-011" in names(queues_to_read(FLEET, ALL, set(), memory, minute(3), HOLD))


def test_only_the_candidates_are_read() -> None:
    """A runner type whose size a metric gives (a fork's shared queue) is never read."""
    memory = CollectorMemory()
    assert queues_to_read(FLEET, {1, 2}, set(), memory, T0, HOLD) == {1, 2}
    assert queues_to_read(FLEET, {1, 2}, {FLEET[3].runner_type}, memory, minute(1), HOLD) <= {1, 2}
