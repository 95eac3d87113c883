"""`capacity --pool`: the upstream module's warm pool (`pool_config`), proposed from the history and replayed.

The pool, as the autoscaler runs it: on the minutes its `schedule_expression` fires, its pool function tops the
idle runners up to `size`; a topped-up runner is ready the start-up delay later. The replay, and what it assumes:
- The schedule fires every minute of its hours (`cron(* H1-H2 ? * DAYS *)`); outside them idle pool runners are
  scaled down at the first minute, and none is started.
- A job takes the idle pool runner ready soonest (at once if one is ready, else when the booting one is), and
  otherwise asks for a fresh runner as in the pool model (model/forecast/model.py): a slot, then the start-up delay.
- Pool runners hold slots of the maximum, idle or busy; a top-up takes only slots free at that minute.
- What a pool costs: each pool runner's time from its start until a job starts on it, or it is scaled down
  (instance-hours no job would have paid for otherwise; a job's own run is paid either way).
- Those figures are totals over the history; a weekly rate only over a week or more of it (each weekday held
  at least once): a shorter history's totals are its own, never scaled up to a week it does not hold.

Proposed: per runner type, the UTC hours (weekdays and weekends apart) that have a job a day or more and in
which the history's jobs miss the queue time target without a pool, joined into runs of hours; for each run,
the smallest size that meets the target for the jobs queued in it. Hours that meet the target without a pool,
or have fewer jobs, get none. Pure: no AWS, no I/O.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from queuewatch.model.forecast.model import Target, percentile

MINUTE = 60
HOUR = 3600
DAY = 86400
WEEK = 7 * DAY
EPOCH_WEEKDAY = 3  # 1970-01-01 was a Thursday (Monday is 0)
DAY_SETS = (("MON-FRI", frozenset(range(5))), ("SAT,SUN", frozenset({5, 6})))


@dataclass(frozen=True)
class Window:
    """Hours [first, last] UTC, on the weekdays of `days` (Monday 0)."""

    days: str
    weekdays: frozenset[int]
    first: int
    last: int

    def holds(self, at: float) -> bool:
        day, into = divmod(int(at), DAY)
        return (day + EPOCH_WEEKDAY) % 7 in self.weekdays and self.first <= into // HOUR <= self.last

    @property
    def schedule_expression(self) -> str:
        hours = str(self.first) if self.first == self.last else f"{self.first}-{self.last}"
        return f"cron(* {hours} ? * {self.days} *)"


@dataclass(frozen=True)
class PoolReplay:
    waits: list[float]
    pool_seconds: float  # pool runners' time before a job started on them, or until scaled down


def replay_pool(
    arrivals: Sequence[float],
    runs: Sequence[float],
    startup: float,
    runners: int,
    size: int,
    scheduled: Callable[[float], bool],
) -> PoolReplay:
    """Each job's queue time with `runners` slots and a pool of `size` on the scheduled minutes (see above)."""
    slots = [-math.inf] * runners  # when each slot not held by a pool runner is next free: a min-heap
    warm: list[tuple[float, float]] = []  # idle pool runners: (ready at, started at), a min-heap
    waits: list[float] = []
    cost = 0.0
    minute = math.ceil(arrivals[0] / MINUTE) * MINUTE if arrivals else 0.0

    def tick(at: float) -> None:
        nonlocal cost
        if scheduled(at):
            while len(warm) < size and slots and slots[0] <= at:
                heapq.heappop(slots)
                heapq.heappush(warm, (at + startup, at))
        else:
            for _, started in warm:
                cost += at - started
                heapq.heappush(slots, at)
            warm.clear()

    for arrival, run in zip(arrivals, runs, strict=True):
        while minute <= arrival:
            tick(minute)
            minute += MINUTE
        if warm:
            ready, started = heapq.heappop(warm)
            begins = max(ready, arrival)
            cost += begins - started
            heapq.heappush(slots, begins + run)
        else:
            asked = max(arrival, slots[0])
            begins = asked + startup
            heapq.heapreplace(slots, begins + run)
        waits.append(begins - arrival)
    for _, started in warm:  # still idle at the end: counted until the last minute ticked
        cost += max(0.0, minute - started)
    return PoolReplay(waits, cost)


@dataclass(frozen=True)
class PoolEntry:
    """One `pool_config` entry, and what it buys."""

    window: Window
    size: int | None  # None: no size up to the cap meets the target in these hours
    jobs: int  # queued in its hours
    before: float  # the target's percentile of queue time in its hours, without a pool
    after: float  # and with it
    idle_instance_hours: float  # over the history's span
    queue_hours_saved: float  # over the history's span
    span: float  # the history's seconds the totals cover

    @property
    def weeks(self) -> float | None:
        """The weeks the history holds; None under a week, which holds no weekly rate."""
        return self.span / WEEK if self.span >= WEEK else None

    @property
    def instance_hours_a_week(self) -> float | None:
        return None if self.weeks is None else self.idle_instance_hours / self.weeks

    @property
    def queue_hours_saved_a_week(self) -> float | None:
        return None if self.weeks is None else self.queue_hours_saved / self.weeks

    def config(self, timezone: str = "UTC") -> dict[str, object]:
        return {
            "schedule_expression": self.window.schedule_expression,
            "schedule_expression_timezone": timezone,
            "size": self.size,
        }


def _in_hours(arrivals: Sequence[float], waits: Sequence[float], window: Window) -> list[float]:
    return sorted(w for a, w in zip(arrivals, waits, strict=True) if window.holds(a))


def propose(
    arrivals: Sequence[float], runs: Sequence[float], startup: float, runners: int, target: Target, span: float
) -> list[PoolEntry]:
    """The pool schedule for one runner type (see the module's text); `runners` is the maximum replayed."""
    if not arrivals:
        return []
    none = replay_pool(arrivals, runs, startup, runners, 0, lambda _: False).waits
    weeks = max(span / WEEK, 1 / 7)  # how many of each weekday the history holds, a day at least
    entries: list[PoolEntry] = []
    for days, weekdays in DAY_SETS:
        missed = []
        for hour in range(24):
            waits = _in_hours(arrivals, none, Window(days, weekdays, hour, hour))
            # Pays off: jobs in that hour on most such days (one a day or more), and they miss the target there.
            often = len(waits) >= weeks * len(weekdays)
            if often and not target.met_by(percentile(waits, target.percentile)):
                missed.append(hour)
        for first, last in _runs(missed):
            entries.append(_sized(arrivals, runs, startup, runners, target, Window(days, weekdays, first, last), span))
    return entries


def _runs(hours: list[int]) -> list[tuple[int, int]]:
    joined: list[tuple[int, int]] = []
    for hour in hours:
        if joined and joined[-1][1] == hour - 1:
            joined[-1] = (joined[-1][0], hour)
        else:
            joined.append((hour, hour))
    return joined


def _sized(
    arrivals: Sequence[float],
    runs: Sequence[float],
    startup: float,
    runners: int,
    target: Target,
    window: Window,
    span: float,
) -> PoolEntry:
    """The smallest pool meeting the target for the jobs queued in `window`'s hours: bisection, as a larger pool
    never makes a job in its hours wait longer there (checked at the answer, not assumed: each size is replayed)."""
    before = replay_pool(arrivals, runs, startup, runners, 0, window.holds)

    def at(size: int) -> tuple[bool, PoolReplay]:
        replayed = replay_pool(arrivals, runs, startup, runners, size, window.holds)
        value = percentile(_in_hours(arrivals, replayed.waits, window), target.percentile)
        return target.met_by(value), replayed

    low, high = 1, runners
    met, best = at(high)
    if not met:
        return _entry(arrivals, window, None, before, best, target, span)
    while low < high:
        middle = (low + high) // 2
        ok, replayed = at(middle)
        if ok:
            high, best = middle, replayed
        else:
            low = middle + 1
    return _entry(arrivals, window, high, before, best, target, span)


def _entry(
    arrivals: Sequence[float],
    window: Window,
    size: int | None,
    before: PoolReplay,
    after: PoolReplay,
    target: Target,
    span: float,
) -> PoolEntry:
    without, with_pool = _in_hours(arrivals, before.waits, window), _in_hours(arrivals, after.waits, window)
    return PoolEntry(
        window,
        size,
        len(without),
        percentile(without, target.percentile),
        percentile(with_pool, target.percentile),
        after.pool_seconds / HOUR,
        (sum(before.waits) - sum(after.waits)) / HOUR,
        span,
    )


def what_if(
    arrivals: Sequence[float],
    runs: Sequence[float],
    startup: float,
    runners: int,
    size: int,
    window: Window,
    target: Target,
    span: float,
) -> PoolEntry:
    """`--pool-size N`: the history replayed with a pool of `size` in `window`'s hours and at most `runners`."""
    before = replay_pool(arrivals, runs, startup, runners, 0, window.holds)
    after = replay_pool(arrivals, runs, startup, runners, size, window.holds)
    return _entry(arrivals, window, size, before, after, target, span)
