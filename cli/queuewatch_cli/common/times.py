"""Moments the commands read from their options, and where a jobs history really begins: what backtest,
capacity and history share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from queuewatch.base.durations import parse_duration
from queuewatch.base.errors import QueuewatchError

DAY = 86400


def parse_moment(text: str, now: datetime, option: str) -> datetime:
    """An ISO 8601 time (UTC unless it says), 'now', or a duration meaning that long ago (14d, 36h)."""
    if text == "now":
        moment = now
    else:
        try:
            moment = now - timedelta(seconds=parse_duration(text))
        except ValueError:
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                raise QueuewatchError(
                    f"{option}: found {text!r}, expected an ISO time such as 2026-05-01T09:00, 'now', or 14d (ago)"
                ) from None
            moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def held_start(start: float, first_queued: float | None) -> float:
    """Where a jobs history really begins: `start`, unless the first job came over a day later (a quiet night is
    history; a whole day with no job at all is taken to be before what the table holds: JobHistoryDays, or
    tracking turned on then), and then that job's minute. Epoch seconds."""
    if first_queued is None or first_queued - start <= DAY:
        return start
    return first_queued // 60 * 60
