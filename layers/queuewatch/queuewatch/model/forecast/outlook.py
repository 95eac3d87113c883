"""A runner type's forecast: the next minutes projected from now with capacity's pool model. Pure: no AWS, no I/O.

From the collector's inputs (inputs.py) and the jobs waiting now, the projection replays, through model.simulate:
- the jobs waiting now, spread evenly from the oldest one's queue moment to now;
- the jobs to come, at the window's arrival rate, evenly spaced over the horizon;
- against the autoscaler's maximum, with the slots of the jobs running now busy for the rest of their run.

It answers when the pool reaches its maximum (a job must wait for a slot), and for a rule's queue time, which
job is the first predicted to wait past it and when. How sure: the same projection at the bounds of the
arrival rate's 90% interval (Poisson counts, normal approximation), so a forecast drawn from few arrivals says
how wide it is.

What it assumes, and where it is wrong (docs/forecast.md):
- Arrivals are independent and steady at the window's rate: a burst shorter than a tick, or a rate that turns
  mid-horizon, is seen only at the next tick.
- Every job runs the median run time; the jobs running now have run evenly from none to twice their median.
- Runners counted but not running a job are free to take the next job; a free slot still takes the start-up.
- The maximum is the one read: a maximum changed mid-forecast is seen at the next read.
- The launch ceilings act fleet-wide, as a growing wait once the fleet asks faster than they allow (launch.py).
- A warm pool's idle runners are runners: they count against the maximum and take the next jobs.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from queuewatch.base.durations import format_duration
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.forecast.launch import LaunchCeilings
from queuewatch.model.forecast.model import simulate

Z_90 = 1.645  # the two-sided 90% interval's half-width, in standard deviations
MAX_PROJECTED_JOBS = 5_000  # per projection: past this, the rate already fills any pool within the horizon
_EPSILON = 1e-6


@dataclass(frozen=True)
class Projection:
    """One replay of the next minutes at one arrival rate."""

    offsets: array[float]  # each job's queue moment, seconds from now (negative: waiting now), ascending
    waits: array[float]  # each job's predicted queue time
    full_in_seconds: float | None  # when a job first waits for a slot, from now (0: now); None: not in the horizon

    def first_late(self, threshold_seconds: float, horizon_seconds: float) -> int | None:
        """The first job queued by the horizon predicted to wait past the threshold (as the rules: strictly)."""
        for index, offset in enumerate(self.offsets):
            if offset > horizon_seconds:
                return None
            if self.waits[index] > threshold_seconds:
                return index
        return None


@dataclass(frozen=True)
class Lateness:
    """A queue time threshold against the forecast: the first job predicted to wait past it."""

    threshold_seconds: float
    queued_in_seconds: float  # when that job is queued, from now: 0 or less for a job waiting now
    wait_seconds: float  # its predicted queue time
    earliest_in_seconds: float  # queued_in_seconds at the arrival rate's upper bound
    latest_in_seconds: float | None  # ... at its lower bound; None: no job in the horizon is late at that rate

    @property
    def crosses_in_seconds(self) -> float:
        """When the oldest waiting job's queue time would pass the threshold, from now (0: it has)."""
        return max(0.0, self.queued_in_seconds + self.threshold_seconds)

    @property
    def likely(self) -> bool:
        """Late even at the arrival rate's lower bound: not a matter of a few jobs more or less."""
        return self.latest_in_seconds is not None


@dataclass(frozen=True)
class NoOutlook:
    """Why a runner type has no forecast this tick: a figure it needs was not read."""

    reason: str


@dataclass(frozen=True)
class Outlook:
    at: datetime
    horizon_seconds: float
    inputs: ForecastInputs
    waiting: int
    oldest_seconds: float
    central: Projection
    launch_slope: float = 0.0

    # The bounds are projected only when a threshold is late at the central rate: most runner types never are,
    # and these two replays would be two thirds of the forecast's CPU.
    @cached_property
    def low(self) -> Projection:
        """The projection at the arrival rate's lower bound."""
        rate, spread = _rate(self.inputs)
        return self._project(max(0.0, rate - spread)) if spread else self.central

    @cached_property
    def high(self) -> Projection:
        """... and at its upper bound, which has a floor of one arrival: a window with none does not prove the
        rate is zero."""
        rate, spread = _rate(self.inputs)
        floor = (Z_90 * Z_90) / self.inputs.window_seconds if self.inputs.arrived == 0 else 0.0
        return self._project(max(rate + spread, floor))

    def _project(self, rate: float) -> Projection:
        return _project(self.inputs, self.waiting, self.oldest_seconds, rate, self.horizon_seconds, self.launch_slope)

    @property
    def maximum(self) -> int:
        assert self.inputs.maximum is not None  # outlook() gives no Outlook without it
        return self.inputs.maximum

    @property
    def headroom(self) -> int:
        """Runners left under the maximum now."""
        return max(0, self.maximum - _runners(self.inputs))

    @property
    def full_in_seconds(self) -> float | None:
        return self.central.full_in_seconds

    def lateness(self, threshold_seconds: float) -> Lateness | None:
        """The first job waiting now or queued within the horizon predicted to wait past the threshold; None:
        none is."""
        index = self.central.first_late(threshold_seconds, self.horizon_seconds)
        if index is None:
            return None
        high = self.high.first_late(threshold_seconds, self.horizon_seconds)
        low = self.low.first_late(threshold_seconds, self.horizon_seconds)
        queued_in = self.central.offsets[index]
        return Lateness(
            threshold_seconds=threshold_seconds,
            queued_in_seconds=queued_in,
            wait_seconds=self.central.waits[index],
            earliest_in_seconds=self.high.offsets[high] if high is not None else queued_in,
            latest_in_seconds=self.low.offsets[low] if low is not None else None,
        )

    def evidence(self) -> str:
        """What the forecast stands on, in the page's words: '42 jobs arrived in 10m, 3 runners left of 50, jobs
        run about 40m'."""
        inputs = self.inputs
        jobs, left = inputs.arrived, self.headroom
        parts = [
            f"{jobs} job{'s' if jobs != 1 else ''} arrived in {format_duration(inputs.window_seconds)}",
            f"{left} runner{'s' if left != 1 else ''} left of {self.maximum}",
            f"jobs run about {format_duration(_run(inputs))}",
        ]
        if inputs.startup_seconds is not None:
            parts.append(f"start-up about {format_duration(inputs.startup_seconds)}")
        return ", ".join(parts)


def outlook(
    inputs: ForecastInputs,
    *,
    waiting: int,
    oldest_seconds: float | None,
    at: datetime,
    horizon_seconds: float,
    launch_slope: float = 0.0,
) -> Outlook | NoOutlook:
    """The forecast for one runner type. `waiting` and `oldest_seconds`: its jobs queued now and the oldest one's
    wait. `launch_slope`: the launch ceilings' extra wait per second from now (fleet_launch_slope)."""
    if inputs.maximum is None:
        return NoOutlook("the autoscaler's maximum for it was not read (its Current runners log line or a metric)")
    if inputs.run_seconds is None:
        return NoOutlook("no job of it completed in the history read: its run time is unknown")
    oldest = oldest_seconds or 0.0
    rate, _ = _rate(inputs)
    return Outlook(
        at=at,
        horizon_seconds=horizon_seconds,
        inputs=inputs,
        waiting=waiting,
        oldest_seconds=oldest,
        central=_project(inputs, waiting, oldest, rate, horizon_seconds, launch_slope),
        launch_slope=launch_slope,
    )


def _rate(inputs: ForecastInputs) -> tuple[float, float]:
    """The window's arrival rate a second, and its 90% interval's half-width (Poisson, normal approximation)."""
    return inputs.arrived / inputs.window_seconds, Z_90 * math.sqrt(inputs.arrived) / inputs.window_seconds


def fleet_launch_slope(arrivals_per_second: Iterable[float], ceilings: LaunchCeilings) -> float:
    """The launch ceilings' wait, as seconds more per second from now: once the fleet asks for runners faster
    than the ceilings launch them (every job a runner), the backlog and each ask's wait grow steadily."""
    launches_per_second = min(ceilings.per_minute * ceilings.apps / 60, float(ceilings.ssm_per_second))
    asked = sum(arrivals_per_second)
    return max(0.0, asked - launches_per_second) / launches_per_second


def _runners(inputs: ForecastInputs) -> int:
    """The slots in use: the autoscaler's count, never fewer than the jobs tracked running."""
    return max(inputs.runners or 0, inputs.running)


def _run(inputs: ForecastInputs) -> float:
    assert inputs.run_seconds is not None
    return max(inputs.run_seconds, 1.0)


def _project(
    inputs: ForecastInputs, waiting: int, oldest: float, rate: float, horizon: float, launch_slope: float
) -> Projection:
    maximum = inputs.maximum
    assert maximum is not None
    run = _run(inputs)
    startup = inputs.startup_seconds or 0.0
    offsets = array("d", (-oldest + oldest * k / waiting for k in range(waiting)))  # the oldest first
    if rate > 0:
        count = min(MAX_PROJECTED_JOBS, math.floor(horizon * rate + 0.5))
        offsets.extend((k + 0.5) / rate for k in range(count))
    busy = min(maximum, inputs.running)
    # the jobs running now have run evenly from 0 to twice their median so far, each a median run in all
    ran = inputs.running_seconds if inputs.running_seconds is not None else run / 2
    busy_until = [max(0.0, run - 2 * ran * (k + 0.5) / busy) for k in range(busy)]
    # runners counted but running no job hold slots only until a job takes them: they are free now
    launch = [launch_slope * max(offset, 0.0) for offset in offsets] if launch_slope else None
    if busy + len(offsets) <= maximum:
        # a slot for every job at its arrival: what simulate gives, without its heap (most pools, most ticks)
        waits = array("d", (max(o + startup + (launch[i] if launch else 0.0), 0.0) - o for i, o in enumerate(offsets)))
    else:
        waits = simulate(offsets, [run] * len(offsets), maximum, startup, launch, busy_until, not_before=0.0)
    full_in: float | None = None
    for index, offset in enumerate(offsets):
        least = max(startup + (launch[index] if launch else 0.0), -offset)  # its wait had a slot been free
        if waits[index] > least + _EPSILON:
            full_in = max(offset, 0.0)
            break
    if full_in is None and busy >= maximum:
        full_in = 0.0
    return Projection(offsets, waits, full_in)
