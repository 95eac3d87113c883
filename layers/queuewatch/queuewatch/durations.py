"""Durations as the config writes them ("90s", "5m", "1h30m") and as pages print them."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BeforeValidator, PlainSerializer

_PART = re.compile(r"(\d+)([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(value: object) -> int:
    """Seconds in a duration; a bare number is seconds. Raises ValueError naming the input."""
    if isinstance(value, bool):
        raise ValueError(f"found {value!r}, expected a duration such as 90s, 5m or 1h30m")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"found {value}, expected a duration of zero or more")
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text.isascii() and text.isdigit():
            return int(text)
        parts = _PART.findall(text)
        if parts and "".join(n + u for n, u in parts) == text:
            return sum(int(n) * _UNIT_SECONDS[u] for n, u in parts)
    raise ValueError(f"found {value!r}, expected a duration such as 90s, 5m or 1h30m")


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


Duration = Annotated[int, BeforeValidator(parse_duration), PlainSerializer(format_duration)]
"""A span of time in whole seconds, written in the config as 90s, 5m, 1h30m."""
