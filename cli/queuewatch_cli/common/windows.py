"""The config's maintenance windows in words, each with its next occurrence: check-config prints them, and
status prints the one open now and the next (from the config, or as the stack's evaluator published them)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from queuewatch.base.durations import format_duration
from queuewatch.config.maintenance import MaintenanceWindow, local_span, next_window
from queuewatch.config.schema import Config


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


def _holds(window: MaintenanceWindow) -> str:
    what = [
        f"{label} {', '.join(values)}"
        for label, values in (("rules", window.rules), ("teams", window.teams), ("runner types", window.match))
        if values
    ]
    return "; ".join(what) or "every alert"


def status_window_lines(windows: Sequence[MaintenanceWindow], now: datetime) -> list[str]:
    """status's lines: each window open now, then the next to open (the soonest start after now)."""
    spans = sorted(((*next_window(w, now), w) for w in windows), key=lambda s: (s[0], s[2].name))
    lines = [
        f"maintenance window open now: {w.name} {local_span(w, starts, ends)}, holds {_holds(w)} "
        f"(ends in {format_duration((ends - now).total_seconds())})"
        for starts, ends, w in spans
        if starts <= now
    ]
    coming = [(starts, ends, w) for starts, ends, w in spans if starts > now]
    if not coming:  # every window is open now: the next is the soonest one's next occurrence
        coming = sorted(((*next_window(w, ends), w) for _, ends, w in spans), key=lambda s: (s[0], s[2].name))
    if coming:
        starts, ends, w = coming[0]
        lines.append(
            f"next maintenance window: {w.name} {local_span(w, starts, ends)}, holds {_holds(w)} "
            f"(in {format_duration((starts - now).total_seconds())})"
        )
    return lines
