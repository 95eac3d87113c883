"""What one runner type's forecast needs, as the collector reads it each tick and the snapshot carries it.

A handful of numbers per runner type, set only for the runner types a rule with `forecast:` selects, so the
snapshot stays small at any fleet size. Every figure comes from a read the collector already makes: the tracked
jobs' history (arrivals, run times, start-up delays, the jobs running now) and the autoscaler's own count of its
runners and their maximum (its `Current runners` log line, or a runner metric the config names).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from queuewatch.base.frozen import FrozenModel

Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]


class ForecastInputs(FrozenModel):
    """One runner type's recent demand and its pool, at the snapshot's time."""

    window_seconds: Annotated[int, Field(gt=0)] = Field(description="the span `arrived` counts, ending now")
    arrived: Count = Field(description="jobs queued for a runner of this type in the window")
    run_seconds: Seconds | None = Field(
        default=None, description="the median run of the jobs that completed in the history read; None: none did"
    )
    startup_seconds: Seconds | None = Field(
        default=None,
        description="the median start-up delay: queued to started, of jobs that found a runner without waiting "
        "for a slot; None: unknown",
    )
    running: Count = Field(default=0, description="tracked jobs running now")
    running_seconds: Seconds | None = Field(default=None, description="the median time they have run so far")
    runners: Count | None = Field(default=None, description="the runners the autoscaler counted for this type")
    maximum: Annotated[int, Field(ge=1)] | None = Field(
        default=None, description="the autoscaler's maximum runners for this type"
    )
    runners_from: Literal["log", "metric"] | None = Field(
        default=None, description="where runners and maximum were read: the scale-up's log line, or a metric"
    )
    runners_age_seconds: Seconds | None = Field(default=None, description="how old that count was when read")
