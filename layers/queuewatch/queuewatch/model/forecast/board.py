"""The forecasts of a tick, as the evaluator publishes them for `queuewatch status` and the dashboard. Pure.

Per runner type a rule with `forecast:` selects: its runners left and maximum, when its pool reaches the maximum
(its headroom, in time; None: not within its horizon), and the first rule's queue time it is predicted to pass
and when; or why it has no forecast. Small by design: a few numbers per runner type, the evidence only for
those whose pool fills within the horizon, so 5,000 runner types fit one item (adapters/state_table/forecast_board.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from pydantic import Field

from queuewatch.base.frozen import FrozenModel
from queuewatch.model.forecast.outlook import NoOutlook, Outlook
from queuewatch.model.rules import Rule


class Late(FrozenModel):
    """A rule's queue time the forecast says a job will wait past."""

    rule: str
    threshold_seconds: float
    crosses_in_seconds: float  # when the oldest wait passes it, from the board's time (0: it has)
    earliest_in_seconds: float  # ... at the arrival rate's upper bound
    latest_in_seconds: float | None  # ... at its lower bound; None: not late at that rate
    likely: bool


class RunnerTypeForecast(FrozenModel):
    name: str
    horizon_seconds: float
    runners_left: int
    maximum: int
    full_in_seconds: float | None = Field(
        default=None, description="when the pool reaches its maximum, from the board's time; None: not in the horizon"
    )
    late: Late | None = None  # the soonest rule's queue time it is predicted to pass within the horizon
    evidence: str | None = None  # what the forecast stands on: only where the pool fills within the horizon


class ForecastBoard(FrozenModel):
    at: datetime
    forecasts: list[RunnerTypeForecast] = Field(default_factory=list)
    without: dict[str, list[str]] = Field(default_factory=dict, description="why none -> the runner types")
    left_out: int = Field(default=0, description="runner types past what one item holds, the least pressed")

    @property
    def full_soon(self) -> list[RunnerTypeForecast]:
        """Those whose pool reaches its maximum within the horizon, the soonest first."""
        found = [f for f in self.forecasts if f.full_in_seconds is not None]
        return sorted(found, key=lambda f: (f.full_in_seconds or 0.0, f.name))

    @property
    def late(self) -> list[RunnerTypeForecast]:
        return [f for f in self.forecasts if f.late is not None]

    @property
    def unforecast(self) -> int:
        return sum(len(names) for names in self.without.values())


def board_of(found: Mapping[str, Outlook | NoOutlook], rules: Iterable[Rule], at: datetime) -> ForecastBoard:
    """The tick's outlooks (evaluate/forecasts.py) on a board: per runner type, the soonest lateness of the rules
    with `forecast:` selecting it, within that rule's horizon, as the predictive page judges it."""
    forecasting = [r for r in rules if r.forecast_horizon is not None and r.queue_time_threshold is not None]
    forecasts: list[RunnerTypeForecast] = []
    without: dict[str, list[str]] = {}
    for name, projected in sorted(found.items()):
        if isinstance(projected, NoOutlook):
            without.setdefault(projected.reason, []).append(name)
            continue
        late: Late | None = None
        for rule in forecasting:
            if not rule.applies_to(name) or rule.queue_time_threshold is None or rule.forecast_horizon is None:
                continue
            lateness = projected.lateness(rule.queue_time_threshold)
            if lateness is None or lateness.queued_in_seconds > rule.forecast_horizon:
                continue
            if late is None or lateness.crosses_in_seconds < late.crosses_in_seconds:
                latest = lateness.latest_in_seconds
                late = Late(
                    rule=rule.name,
                    threshold_seconds=lateness.threshold_seconds,
                    crosses_in_seconds=lateness.crosses_in_seconds,
                    earliest_in_seconds=max(0.0, lateness.earliest_in_seconds + lateness.threshold_seconds),
                    latest_in_seconds=None if latest is None else max(0.0, latest + lateness.threshold_seconds),
                    likely=lateness.likely,
                )
        full_in = projected.full_in_seconds
        forecasts.append(
            RunnerTypeForecast(
                name=name,
                horizon_seconds=projected.horizon_seconds,
                runners_left=projected.headroom,
                maximum=projected.maximum,
                full_in_seconds=full_in,
                late=late,
                evidence=projected.evidence() if full_in is not None or late is not None else None,
            )
        )
    return ForecastBoard(at=at, forecasts=forecasts, without=without)
