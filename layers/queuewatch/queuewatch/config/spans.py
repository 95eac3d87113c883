"""How long each span in the config may be, and why.

Each duration is bounded to what can make sense, so that none overflows a date at run time or
silently never happens; the error names the field (pydantic adds it), the bound and the reason.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from queuewatch.base.durations import Duration, within

_DAY = 86400
QueueTimeThreshold = Annotated[
    Duration,
    AfterValidator(within(0, _DAY, "GitHub cancels a job that has waited 24h for a self-hosted runner")),
]
PendingPeriod = Annotated[
    Duration,
    AfterValidator(within(0, _DAY, "a breach that must last over a day before it pages outlives the jobs queueing")),
]
KeepFiringPeriod = Annotated[
    Duration, AfterValidator(within(0, _DAY, "an alert held open over a day after it cleared hides the next one"))
]
ForecastHorizon = Annotated[
    Duration,
    AfterValidator(
        within(60, 3600, "a forecast looks at least a tick ahead, and past an hour its arrival rate is a guess")
    ),
]
RepeatInterval = Annotated[
    Duration, AfterValidator(within(60, 7 * _DAY, "repeats come at most once a tick and at least once a week"))
]
MetricLookback = Annotated[
    Duration,
    AfterValidator(
        within(
            60,
            3 * 3600,
            "CloudWatch's datapoints come a minute apart at best (sub-minute ones are kept 3h), and one "
            "older than a few hours says nothing about the queue now",
        )
    ),
]
