"""The autoscaler's launch ceilings: how fast it can create runners, fleet-wide. Pure: no AWS, no I/O.

Every job asks for a fresh runner (ephemeral runners), and creating one costs, as the upstream module documents
(docs/rate-limits-and-tuning.md there):
- a JIT-config call to GitHub's API through a GitHub App: about 180 a minute in a burst (the secondary limit's
  900 points a minute, 5 a POST) and 166 a minute sustained (10,000 registrations an hour), per App;
- one write of that config to SSM Parameter Store: 40 a second per account and region (its default throughput),
  shared by every App, pool and scale-up of the stack.

The replay, and what it assumes: asks are launched in the order they came (the scale-up's queue), spread over the
Apps in turn; an ask is launched at the first moment no ceiling forbids it: at most `burst` of its App's launches
in any minute, `per_minute * 60` in any hour, and `ssm_per_second` of all launches in any second. The ceiling that
set that moment is the one that binds for that ask. The pool model (model.py) adds each ask's wait to its job's
queue time; the asks are taken at the jobs' arrivals, so where the maximum holds asks back the waits are an upper
bound.
"""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

APP_BURST_PER_MINUTE = 180
APP_SUSTAINED_PER_MINUTE = 166.0
SSM_WRITES_PER_SECOND = 40

CEILINGS = ("GitHub App burst", "GitHub App sustained", "SSM Parameter Store")


@dataclass(frozen=True)
class LaunchCeilings:
    per_minute: float = APP_SUSTAINED_PER_MINUTE  # per App, sustained (over an hour)
    burst: int = APP_BURST_PER_MINUTE  # per App, in any minute
    ssm_per_second: int = SSM_WRITES_PER_SECOND  # all Apps together, in any second
    apps: int = 1

    def describe(self, ceiling: str) -> str:
        return {
            "GitHub App burst": f"the GitHub App's burst ({self.burst} a minute per App, {self.apps} App(s))",
            "GitHub App sustained": f"the GitHub App's sustained rate ({self.per_minute:g} a minute per App, "
            f"{self.apps} App(s))",
            "SSM Parameter Store": f"SSM Parameter Store's {self.ssm_per_second} writes a second (per account and "
            "region)",
        }[ceiling]


@dataclass(frozen=True)
class LaunchLimit:
    """What the launch ceilings did to the fleet's runner asks."""

    ceilings: LaunchCeilings
    peak_minute: int  # the most runners asked for in one UTC minute
    delayed: dict[str, int] = field(default_factory=dict)  # asks a ceiling held back, by the ceiling that bound
    longest: dict[str, float] = field(default_factory=dict)  # the longest such wait, by ceiling (seconds)
    waits: dict[str, array[float]] = field(default_factory=dict)  # per runner type, each ask's, in arrival order

    @property
    def binds(self) -> str | None:
        """The ceiling that held back the most asks; None when none held any back."""
        if not self.delayed:
            return None
        return max(CEILINGS, key=lambda name: (self.delayed.get(name, 0), self.longest.get(name, 0.0)))


def launch_limit(asks: Iterable[tuple[float, str]], ceilings: LaunchCeilings) -> LaunchLimit:
    """Every job (any runner type: the Apps and SSM serve them all) is a runner to launch: its arrival and its
    runner type, ascending by arrival. Each ask's wait is kept per runner type, in the order its asks came."""
    hourly = max(1, int(ceilings.per_minute * 60))
    launched: deque[float] = deque(maxlen=ceilings.ssm_per_second)  # the latest launches, in order
    by_app = [deque[float](maxlen=max(ceilings.burst, hourly)) for _ in range(ceilings.apps)]
    delayed: dict[str, int] = {}
    longest: dict[str, float] = {}
    counts: dict[int, int] = {}
    waits: dict[str, array[float]] = {}
    cause_before = ""
    for index, (arrival, runner_type) in enumerate(asks):
        mine = by_app[index % ceilings.apps]
        bounds = {
            "GitHub App burst": mine[-ceilings.burst] + 60 if len(mine) >= ceilings.burst else -math.inf,
            "GitHub App sustained": mine[-hourly] + 3600 if len(mine) >= hourly else -math.inf,
            "SSM Parameter Store": launched[-ceilings.ssm_per_second] + 1
            if len(launched) >= ceilings.ssm_per_second
            else -math.inf,
        }
        cause, bound = max(bounds.items(), key=lambda item: item[1])
        in_order = launched[-1] if launched else -math.inf  # behind an ask held back before it: that one's ceiling
        if in_order > bound:
            cause, bound = cause_before, in_order
        at = max(arrival, bound)
        launched.append(at)
        mine.append(at)
        waits.setdefault(runner_type, array("d")).append(at - arrival)
        if at > arrival:
            delayed[cause] = delayed.get(cause, 0) + 1
            longest[cause] = max(longest.get(cause, 0.0), at - arrival)
        cause_before = cause
        minute = int(arrival // 60)
        counts[minute] = counts.get(minute, 0) + 1
    return LaunchLimit(ceilings, max(counts.values(), default=0), delayed, longest, waits)
