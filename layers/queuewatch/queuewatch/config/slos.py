"""The config's `slos:` section: queue-time SLOs and their burn-rate alerts (queuewatch/model/slo.py judges them)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from queuewatch.base.durations import Duration, within
from queuewatch.base.frozen import FrozenModel
from queuewatch.config.names import RULE_NAME, RunnerTypeGlob
from queuewatch.model.jobs import QUEUED_LIMIT
from queuewatch.model.rules import Priority
from queuewatch.model.slo import DEFAULT_BURN_ALERTS, MINUTE, BurnAlert, Slo

_DAY = 86400
MAX_WINDOW = 90 * _DAY  # the jobs' history keeps at most 90 days (JobHistoryDays)
_PERCENT = re.compile(r"^\s*(\d{1,3}(\.\d{1,6})?)\s*%\s*$")


def _objective(value: object) -> object:
    """`99%`, `99.9%` or a fraction such as 0.99."""
    if isinstance(value, str):
        found = _PERCENT.match(value)
        if not found:
            raise ValueError(f"found {value!r}, expected a percentage such as 99% or 99.5%")
        return float(found[1]) / 100
    return value


def _between(value: float) -> float:
    if 50 <= value < 100:  # a percentage written without its sign: 99 reads as 9900%
        raise ValueError(
            f"found {value:g}, a fraction of 1 ({value * 100:g}%); write objective: {value:g}% or {value / 100:g}"
        )
    if not 0.5 <= value < 1:
        raise ValueError(
            f"found {value * 100:g}%, expected at least 50% and under 100%: at 100% there is no budget to burn"
        )
    return value


Objective = Annotated[float, BeforeValidator(_objective), AfterValidator(_between)]
SloWindow = Annotated[
    Duration,
    AfterValidator(within(_DAY, MAX_WINDOW, "whole days, at most what the jobs' history keeps (JobHistoryDays, 90)")),
]


def _whole_minutes(seconds: int) -> int:
    if seconds % MINUTE:
        raise ValueError(f"found {seconds}s, expected whole minutes such as 5m: windows are counted by the minute")
    return seconds


BurnWindow = Annotated[
    Duration,
    AfterValidator(within(MINUTE, 7 * _DAY, "windows are counted by the minute, at most a week back")),
    AfterValidator(_whole_minutes),
]


class BurnAlertSpec(FrozenModel):
    """One multi-window pair; the SRE Workbook's defaults are fast (14.4x over 1h and 5m, page), slow (6x over
    6h and 30m, page) and ticket (1x over 3d and 6h, to the chat or e-mail topic only)."""

    name: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,30}$")]
    factor: Annotated[float, Field(gt=0, le=1000)]
    long_window: BurnWindow
    short_window: BurnWindow
    notify: Literal["page", "ticket"] = "page"

    @model_validator(mode="after")
    def _short_under_long(self) -> BurnAlertSpec:
        if self.short_window >= self.long_window:
            raise ValueError("short_window must be shorter than long_window: the short one confirms the long one")
        return self


class SloSpec(FrozenModel):
    name: str
    match: list[RunnerTypeGlob] = Field(default_factory=lambda: ["*"], min_length=1)
    exclude: list[RunnerTypeGlob] = Field(default_factory=list)
    teams: list[str] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list, max_length=100)
    objective: Objective
    queue_time_under: Annotated[
        Duration, AfterValidator(within(1, int(QUEUED_LIMIT.total_seconds()), "GitHub cancels a job queued 24h"))
    ]
    window: SloWindow = 28 * _DAY
    team: str | None = None
    priority: Priority = Priority.P2
    ticket_priority: Priority = Priority.P3
    runbook_url: str | None = None
    min_jobs: Annotated[int, Field(ge=1, le=1_000_000)] = 20
    page_when_waiting_over: (
        Annotated[
            Duration, AfterValidator(within(60, int(QUEUED_LIMIT.total_seconds()), "GitHub cancels a job queued 24h"))
        ]
        | None
    ) = None
    burn_alerts: list[BurnAlertSpec] | None = Field(default=None, min_length=1, max_length=6)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not RULE_NAME.match(value):
            raise ValueError(f"found {value!r}, expected an SLO name of lower-case letters, digits and '-'")
        return value

    @field_validator("runbook_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://\S+$", value):
            raise ValueError(f"found {value!r}, expected an http(s) URL")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> SloSpec:
        if self.window % _DAY:
            raise ValueError(f"window: found {self.window}s, expected whole days such as 28d")
        names = [a.name for a in self.burn_alerts or []]
        if len(set(names)) != len(names):
            raise ValueError("burn_alerts: each pair needs a name of its own")
        if self.page_when_waiting_over is not None and self.page_when_waiting_over < self.queue_time_under:
            raise ValueError(
                "page_when_waiting_over must be at least queue_time_under: a job waiting less is still good"
            )
        return self

    def resolved(self, default_team: str | None) -> Slo:
        team = self.team or default_team
        if team is None:
            raise ValueError(f"SLO {self.name!r} has no team; expected team: in the SLO or in defaults.rule")
        alerts = (
            tuple(BurnAlert(a.name, a.factor, a.long_window, a.short_window, a.notify) for a in self.burn_alerts)
            if self.burn_alerts
            else DEFAULT_BURN_ALERTS
        )
        return Slo(
            name=self.name,
            match=tuple(self.match),
            exclude=tuple(self.exclude),
            teams=tuple(self.teams),
            labels=tuple(sorted({label.lower() for label in self.labels})),
            objective=self.objective,
            queue_time_under=self.queue_time_under,
            window=self.window,
            team=team,
            priority=self.priority,
            ticket_priority=self.ticket_priority,
            runbook_url=self.runbook_url,
            min_jobs=self.min_jobs,
            page_when_waiting_over=self.page_when_waiting_over,
            burn_alerts=alerts,
        )


def history_days_needed(slo: Slo) -> int:
    """The JobHistoryDays the SLO's report needs: its window, and a day for the jobs queued the day before."""
    return slo.window // _DAY + 1
