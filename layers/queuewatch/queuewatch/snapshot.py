"""The Snapshot: what the collector saw on one tick, and what the evaluator judges.

It travels as the collector's return value inside a Lambda destination record
(wire.py), so it is kept compact: a reading omits what it does not have.
A failed collection reaches the evaluator as a CollectorFailure instead; either
is one observation, stamped with the tick it stands for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import AwareDatetime, Field

from queuewatch.frozen import FrozenModel
from queuewatch.signals import SignalName

SNAPSHOT_VERSION = 1


class Reading(FrozenModel):
    """One signal's latest value, or why there is none, and the history the triage compares it with.

    The history comes from the same GetMetricData call as the value: count signals
    carry their sum over the triage window and their usual sum per window before
    it; level signals carry where they stood when the window began.
    """

    value: float | None = None
    age_seconds: float | None = None  # how old the value was when collected
    error: str | None = None  # set exactly when value is None
    window_sum: float | None = None  # count signals: the total over the triage window
    baseline_sum: float | None = None  # count signals: the usual total per window, over the baseline before it
    window_first: float | None = None  # level signals: the first datapoint of the triage window
    window_last: float | None = None  # level signals: the last datapoint of the triage window
    baseline_mean: float | None = None  # level signals: the mean over the baseline before the window
    by_name: dict[str, float] | None = None  # ec2_exceptions: the window's total per exception name, non-zero only
    fleet_wide: bool | None = None  # set when the metric names no runner type: it counts the whole fleet

    @classmethod
    def of(cls, value: float, age_seconds: float = 0.0) -> Reading:
        return cls(value=value, age_seconds=round(age_seconds, 1))

    @classmethod
    def missing(cls, reason: str) -> Reading:
        return cls(error=reason)


class RunnerTypeSnapshot(FrozenModel):
    name: str
    region: str
    queue_name: str
    team: str | None = None
    signals: dict[SignalName, Reading] = Field(default_factory=dict)

    @property
    def degraded(self) -> dict[SignalName, str]:
        """The signals that could not be read, with the reason."""
        return {name: r.error for name, r in self.signals.items() if r.error is not None}

    def value(self, name: SignalName) -> float | None:
        reading = self.signals.get(name)
        return reading.value if reading else None


class DiscoveryResult(FrozenModel):
    region: str
    pattern: str
    found: int = 0
    error: str | None = None


class Snapshot(FrozenModel):
    version: int = SNAPSHOT_VERSION
    snapshot_id: str
    collected_at: AwareDatetime
    runner_types: list[RunnerTypeSnapshot]
    discovery: list[DiscoveryResult] = Field(default_factory=list)
    triage_window_seconds: int = 900  # the span window_sum and window_first cover
    baseline_seconds: int = 10800  # the span before the window that baseline_sum and baseline_mean cover

    @property
    def failed_discovery_regions(self) -> set[str]:
        return {d.region for d in self.discovery if d.error is not None}


@dataclass(frozen=True)
class CollectorFailure:
    """The collector's failure destination record: what failed, and when."""

    at: datetime
    error_type: str
    error_message: str
    request_id: str


Observation = Snapshot | CollectorFailure
"""What one tick gives the evaluator: what the collector saw, or that it failed."""


def observed_at(observation: Observation) -> datetime:
    """The tick's own time: ticks order by it, whatever the evaluator's clock says."""
    return observation.collected_at if isinstance(observation, Snapshot) else observation.at


def observation_label(observation: Observation) -> str:
    return observation.snapshot_id if isinstance(observation, Snapshot) else f"failure:{observation.request_id}"
