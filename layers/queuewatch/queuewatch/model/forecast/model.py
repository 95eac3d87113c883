"""The pool model: arrivals and run times replayed against N runners. Pure: no AWS, no I/O.

One model serves `capacity` (the history replayed against a pool size) and the forecast (outlook.py: the next
minutes projected from now).

The model, and every assumption it makes:
- A job is queued at its arrival and served first come, first served.
- At most N runners exist at once; each serves one job, and a fresh runner is started for every job
  (the autoscaler's ephemeral runners): it takes the start-up delay before the job starts, and its slot is
  busy from the moment the runner is asked for until the job ends.
- Jobs are independent (a job's arrival does not depend on another's end) and runners of one runner type are
  interchangeable.

So a job's queue time is the wait for a free slot, plus the start-up delay. The replay is exact for the
jobs given: it has no sampling error of its own. What it cannot know (a job that would have arrived
differently, had the fleet been faster) is the model's, not the arithmetic's.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from queuewatch.base.durations import format_duration


@dataclass(frozen=True)
class Target:
    """A queue time percentile to stay under: `p90<5m` is Target(90, 300, strict=True)."""

    percentile: float
    seconds: float
    strict: bool = True

    def met_by(self, value: float) -> bool:
        return value < self.seconds if self.strict else value <= self.seconds

    def __str__(self) -> str:
        return f"p{self.percentile:g}{'<' if self.strict else '<='}{format_duration(self.seconds)}"


def percentile(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank percentile of values sorted ascending: the smallest value at least q% of them do not
    exceed. NaN for none."""
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def simulate(
    arrivals: Sequence[float],
    runs: Sequence[float],
    runners: int,
    startup: float,
    launch: Sequence[float] | None = None,
    busy_until: Sequence[float] = (),
    not_before: float = -math.inf,
) -> array[float]:
    """Each job's queue time with `runners` slots; arrivals ascending (seconds), runs in the same order. `launch`:
    each job's wait for the autoscaler's launch ceilings (launch.py), between its slot and its runner's start-up.

    The forecast starts the replay mid-stream: `busy_until` holds when each slot busy at the start is free (the
    rest are free), and no job begins before `not_before` (now: a job still waiting has not begun)."""
    if runners < 1:
        raise ValueError(f"runners: found {runners}, expected 1 or more")
    if len(busy_until) > runners:
        raise ValueError(f"busy_until: found {len(busy_until)} busy slots, expected at most the {runners} runners")
    free_at = sorted(busy_until) + [-math.inf] * (runners - len(busy_until))  # when each slot is next free
    heapq.heapify(free_at)  # a min-heap
    waits = array("d", bytes(8 * len(arrivals)))
    for index, arrival in enumerate(arrivals):
        asked = max(arrival, free_at[0])
        begins = max(asked + startup + (launch[index] if launch else 0.0), not_before)
        heapq.heapreplace(free_at, begins + runs[index])
        waits[index] = begins - arrival
    return waits


def enough_runners(
    arrivals: Sequence[float], runs: Sequence[float], startup: float, launch: Sequence[float] | None = None
) -> int:
    """The most slots ever busy at once with no limit: with this many, every job waits the start-up delay (and
    its launch) alone, and more runners change nothing."""
    ends: list[float] = []
    peak = 0
    for index, (arrival, run) in enumerate(zip(arrivals, runs, strict=True)):
        while ends and ends[0] <= arrival:
            heapq.heappop(ends)
        heapq.heappush(ends, arrival + startup + (launch[index] if launch else 0.0) + run)
        peak = max(peak, len(ends))
    return peak


@dataclass(frozen=True)
class PoolResult:
    runners: int
    p50: float
    p90: float
    p99: float
    worst: float
    target_value: float  # the target's percentile of queue time with this many runners


def pool_result(
    arrivals: Sequence[float],
    runs: Sequence[float],
    runners: int,
    startup: float,
    q: float,
    launch: Sequence[float] | None = None,
) -> PoolResult:
    waits = sorted(simulate(arrivals, runs, runners, startup, launch))
    return PoolResult(
        runners,
        percentile(waits, 50),
        percentile(waits, 90),
        percentile(waits, 99),
        waits[-1] if waits else math.nan,
        percentile(waits, q),
    )


@dataclass(frozen=True)
class Sizing:
    """The smallest pool that meets the target, or why none does."""

    runners: int | None  # None: no pool meets it (the start-up delay alone is too long)
    result: PoolResult | None  # the queue times with that pool
    unlimited: int  # the pool past which more runners change nothing
    tried: tuple[PoolResult, ...]  # every pool simulated on the way, by size


def smallest_pool(
    arrivals: Sequence[float],
    runs: Sequence[float],
    startup: float,
    target: Target,
    launch: Sequence[float] | None = None,
) -> Sizing:
    """Binary search over N: under first come, first served, one more runner never delays any job, so the
    target's percentile only falls as N grows."""
    if not arrivals:
        return Sizing(None, None, 0, ())
    unlimited = enough_runners(arrivals, runs, startup, launch)
    tried: dict[int, PoolResult] = {}

    def at(runners: int) -> PoolResult:
        if runners not in tried:
            tried[runners] = pool_result(arrivals, runs, runners, startup, target.percentile, launch)
        return tried[runners]

    if not target.met_by(at(unlimited).target_value):
        return Sizing(None, None, unlimited, tuple(tried[n] for n in sorted(tried)))
    low, high = 1, unlimited  # high meets the target; find the least that does
    while low < high:
        middle = (low + high) // 2
        if target.met_by(at(middle).target_value):
            high = middle
        else:
            low = middle + 1
    return Sizing(high, at(high), unlimited, tuple(tried[n] for n in sorted(tried)))
