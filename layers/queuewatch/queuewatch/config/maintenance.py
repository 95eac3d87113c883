"""Recurring maintenance windows: a weekly span of wall-clock time in a named time zone, in which the pages of
the rules, teams or runner types it names are held back, as a silence holds them back.

Times are the zone's wall clock, so a window keeps its local hours across daylight saving time: on the night
clocks go forward, a start inside the skipped hour begins when the clock reaches the next time that exists
(02:30 in a zone that jumps from 02:00 to 03:00 starts at 03:00); on the night clocks go back, a time that
happens twice means its first occurrence. A window whose end is not after its start runs past midnight.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from functools import cached_property
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from pydantic import Field, field_validator, model_validator

from queuewatch.base.frozen import FrozenModel
from queuewatch.config.names import RULE_NAME, RunnerTypeGlob
from queuewatch.model.rules import HEALTH_RULE, selects

Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS: tuple[Weekday, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
CLOCK = re.compile(r"^(?P<hour>[01]\d|2[0-3]):(?P<minute>[0-5]\d)$")


class MaintenanceWindow(FrozenModel):
    """One weekly window; `rules`, `teams` and `match` narrow what it holds back (each left out: any)."""

    name: str
    time_zone: str = Field(description="an IANA time zone name, such as Europe/Berlin or America/New_York")
    weekdays: list[Weekday] = Field(min_length=1, description="the days the window starts on")
    start: str = Field(description="the local time it starts, HH:MM (24-hour)")
    end: str = Field(description="the local time it ends, HH:MM; not after start: the next day")
    rules: list[str] = Field(default_factory=list, description="the rules it holds back; none listed: every rule")
    teams: list[str] = Field(default_factory=list, description="the teams it holds back; none listed: every team")
    match: list[RunnerTypeGlob] = Field(
        default_factory=list, description="runner type globs it holds back, as a rule's match; none listed: all"
    )

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not RULE_NAME.match(value):
            raise ValueError(f"found {value!r}, expected a window name of lower-case letters, digits and '-'")
        return value

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            near = _zones_meant(value)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise ValueError(f"found {value!r}, expected an IANA time zone name such as Europe/Berlin{hint}") from None
        return value

    @field_validator("start", "end")
    @classmethod
    def _clock(cls, value: str) -> str:
        if not CLOCK.match(value):
            raise ValueError(f"found {value!r}, expected a 24-hour time HH:MM, such as 02:00 or 18:30")
        return value

    @field_validator("rules")
    @classmethod
    def _rule_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not RULE_NAME.match(name):
                raise ValueError(f"found {name!r}, expected a rule name of lower-case letters, digits and '-'")
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> MaintenanceWindow:
        if self.start == self.end:
            raise ValueError(f"start and end are both {self.start}: expected a window of some length")
        return self

    @cached_property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)

    def holds_back(self, rule: str, runner_type: str, team: str) -> bool:
        """Whether the window, when open, holds back this rule's page of this runner type. queuewatch's own page
        only when the window names its rule: a window for "everything" must never hide that the watcher is blind."""
        if rule == HEALTH_RULE and HEALTH_RULE not in self.rules:
            return False
        if self.rules and rule not in self.rules:
            return False
        if self.teams and team not in self.teams:
            return False
        return not self.match or any(selects(pattern, runner_type) for pattern in self.match)

    def occurrence(self, day: date) -> tuple[datetime, datetime]:
        """The window starting on the local date `day`, as UTC instants."""
        start, end = _clock(self.start), _clock(self.end)
        end_day = day if end > start else day + timedelta(days=1)
        return _instant(day, start, self.zone), _instant(end_day, end, self.zone)

    def open_at(self, at: datetime) -> bool:
        starts, _ = next_window(self, at)
        return starts <= at

    def describe(self) -> str:
        """'tuesday, thursday 02:00-04:00 Europe/Berlin: rules jobs-queueing; runner types linux-*'."""
        what = [
            f"{label} {', '.join(values)}"
            for label, values in (("rules", self.rules), ("teams", self.teams), ("runner types", self.match))
            if values
        ]
        days = ", ".join(self.weekdays)
        return f"{days} {self.start}-{self.end} {self.time_zone}: " + ("; ".join(what) or "every alert")


def _zones_meant(value: str) -> list[str]:
    """The zones a near miss stands for: `America/NewYork` is America/New_York, `berlin` Europe/Berlin."""
    import difflib  # only bad files need suggestions: kept off the cold start

    def plain(name: str) -> str:
        return re.sub(r"[\s_-]", "", name).lower()

    zones = {plain(zone): zone for zone in available_timezones()}
    wanted = plain(value)
    same = sorted(z for key, z in zones.items() if key == wanted or key.rsplit("/", 1)[-1] == wanted.rsplit("/", 1)[-1])
    return (same or [zones[key] for key in difflib.get_close_matches(wanted, list(zones), n=3, cutoff=0.8)])[:3]


def next_window(window: MaintenanceWindow, after: datetime) -> tuple[datetime, datetime]:
    """The occurrence open at `after` (its start may be earlier), else the next one to open: (start, end), UTC."""
    local = after.astimezone(window.zone).date()
    found: list[tuple[datetime, datetime]] = []
    for offset in range(-1, 9):  # yesterday's may still be open; a weekly window recurs within 8 days
        day = local + timedelta(days=offset)
        if WEEKDAYS[day.weekday()] in window.weekdays:
            starts, ends = window.occurrence(day)
            if ends > after:
                found.append((starts, ends))
    return min(found)


def next_for(
    windows: list[MaintenanceWindow], rule: str, runner_types: list[tuple[str, str]], after: datetime
) -> tuple[MaintenanceWindow, datetime, datetime] | None:
    """The soonest window (open or next) holding back this rule's page of any of these (runner type, team)."""
    candidates = [
        (*next_window(w, after), w.name, w)
        for w in windows
        if any(w.holds_back(rule, name, team) for name, team in runner_types)
    ]
    if not candidates:
        return None
    starts, ends, _, window = min(candidates, key=lambda c: (c[0], c[2]))
    return window, starts, ends


def local_span(window: MaintenanceWindow, starts: datetime, ends: datetime) -> str:
    """'Tue 2026-12-01 02:00-04:00 Europe/Berlin', on the window's own clock."""
    begin, finish = starts.astimezone(window.zone), ends.astimezone(window.zone)
    return f"{begin:%a %Y-%m-%d %H:%M}-{finish:%H:%M} {window.time_zone}"


def _clock(text: str) -> time:
    hour, minute = text.split(":")
    return time(int(hour), int(minute))


def _instant(day: date, clock: time, zone: ZoneInfo) -> datetime:
    """The local wall-clock time as a UTC instant; a time the zone skips is moved to when the clock reaches it."""
    local = datetime.combine(day, clock, tzinfo=zone)
    instant = local.astimezone(UTC)
    if instant.astimezone(zone).replace(tzinfo=None) != local.replace(tzinfo=None):
        # In the gap: fold=0 reads it with the offset before the jump, which lands past the jump by the gap's
        # length; the clock reaches the skipped time at the jump itself, the first instant after it.
        for minutes in range(1, 181):
            earlier = instant - timedelta(minutes=minutes)
            if earlier.astimezone(zone).replace(tzinfo=None) < local.replace(tzinfo=None):
                return earlier + timedelta(minutes=1)
    return instant
