"""Durations as the config writes them ("90s", "5m", "1h30m") and as pages print them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer, ValidationInfo

_PART = re.compile(r"(\d{1,12})([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

LONGEST = 366 * 86400
"""No span queuewatch uses is longer than a year; past it a duration is a typo, and one far past it
overflows datetime arithmetic (OverflowError) at run time. Each field bounds its own tighter."""

_EXPECTED = "expected a duration such as 90s, 5m or 1h30m"


def parse_duration(value: object) -> int:
    """Seconds in a duration written with its units. Raises ValueError naming the input.

    A bare number is refused: `90` reads as 90 seconds to one person and 90 minutes to the next, and the
    wrong reading pages sixty times late (or early). Zero alone is accepted: it is zero in every unit.
    """
    seconds: int | None = None
    if isinstance(value, bool):
        raise ValueError(f"found {value!r}, {_EXPECTED}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"found {value}, expected a duration of zero or more")
        if value:
            raise ValueError(unitless(str(value)))
        seconds = 0
    elif isinstance(value, str):
        text = value.strip().lower()
        if text.isascii() and text.isdigit():
            if text.strip("0"):
                raise ValueError(unitless(text))
            seconds = 0
        else:
            parts = _PART.findall(text)
            if parts and "".join(n + u for n, u in parts) == text:
                seconds = sum(int(n) * _UNIT_SECONDS[u] for n, u in parts)
    if seconds is None:
        raise ValueError(f"found {value!r}, {_EXPECTED}{_weeks_meant(value)}")
    if seconds > LONGEST:
        raise ValueError(f"found {value!r}, expected at most 366d: no span queuewatch uses is longer than a year")
    return seconds


_WEEKS = re.compile(r"^\s*(\d{1,4})\s*w(eeks?)?\s*$", re.IGNORECASE)


def _weeks_meant(value: object) -> str:
    """'; did you mean 28d?' for `4w`: weeks are no unit of queuewatch's, days are."""
    weeks = _WEEKS.match(value) if isinstance(value, str) else None
    return f"; did you mean {int(weeks[1]) * 7}d? (weeks are written in days)" if weeks else ""


def unitless(number: str) -> str:
    """The refusal of a duration written without its unit, starting with what was written."""
    shown = number if len(number) <= 12 else f"{number[:12]}..."
    return f"{shown}: add a unit, such as {shown}s or {shown}m"


def format_duration(seconds: float) -> str:
    """Short human form: 114m, 2h5m, 45s."""
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    hours, rest = divmod(total, 3600)
    minutes = rest // 60
    if hours == 0:
        return f"{minutes}m"
    return f"{hours}h{minutes}m" if minutes else f"{hours}h"


WRITTEN = "written"
"""The validation context key that says a document was written by a person (the config file): there a bare
number is refused. Models built in code pass whole seconds, as every caller in the code means them."""


def _duration(value: object, info: ValidationInfo) -> int:
    written = bool(info.context and info.context.get(WRITTEN))
    if isinstance(value, int) and not isinstance(value, bool) and not written:
        if not 0 <= value <= LONGEST:
            raise ValueError(f"found {value}s, expected 0s to 366d")
        return value
    return parse_duration(value)


Duration = Annotated[int, BeforeValidator(_duration), PlainSerializer(format_duration)]
"""A span of time in whole seconds, written in the config as 90s, 5m, 1h30m (a bare number there is
refused); built in code, whole seconds."""


def within(least: int, most: int, why: str) -> Callable[[int], int]:
    """A check for a Duration field (AfterValidator): it must lie in [least, most]; the error says the
    bound and why it is there, and pydantic adds the field's name."""

    def check(seconds: int) -> int:
        if seconds < least:
            raise ValueError(f"found {format_duration(seconds)}, expected at least {format_duration(least)}: {why}")
        if seconds > most:
            raise ValueError(f"found {format_duration(seconds)}, expected at most {format_duration(most)}: {why}")
        return seconds

    return check
