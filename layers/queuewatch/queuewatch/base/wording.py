"""Counting things in English, one way everywhere: "1 runner type", "3 runner types", "1 scale-up"; and times
as people read them, one way everywhere: "2026-11-28 02:05 UTC"."""

from __future__ import annotations

from datetime import UTC, datetime


def plural(count: float, singular: str, many: str | None = None) -> str:
    """`count` and the noun agreeing with it; `many` for nouns that do not take a plain -s."""
    noun = singular if count == 1 else (many or singular + "s")
    return f"{count:g} {noun}"


def moment(at: datetime | str | None, *, seconds: bool = False) -> str:
    """A time as every command writes it for people: `2026-11-28 02:05 UTC` (`02:05:09 UTC` with seconds).

    Naive times are taken as UTC (the house's convention); an ISO string is read first; None is "never"."""
    if at is None:
        return "never"
    if isinstance(at, str):
        at = datetime.fromisoformat(at)
    at = at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)
    return f"{at:%Y-%m-%d %H:%M:%S} UTC" if seconds else f"{at:%Y-%m-%d %H:%M} UTC"
