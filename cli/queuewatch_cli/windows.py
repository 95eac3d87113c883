"""The config's maintenance windows in words, each with its next occurrence: check-config prints them."""

from __future__ import annotations

from datetime import datetime

from queuewatch.config.maintenance import local_span, next_window
from queuewatch.config.schema import Config
from queuewatch.durations import format_duration


def window_lines(config: Config, now: datetime) -> list[str]:
    """One line per window: what it holds back and when, then its occurrence open now or the next one."""
    lines = []
    for window in config.maintenance_windows:
        starts, ends = next_window(window, now)
        span = local_span(window, starts, ends)
        when = (
            f"open now, until {span} (ends in {format_duration((ends - now).total_seconds())})"
            if starts <= now
            else f"next {span} (in {format_duration((starts - now).total_seconds())})"
        )
        lines.append(f"maintenance window {window.name}: {window.describe()}; {when}")
    return lines
