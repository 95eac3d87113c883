"""`queuewatch status`'s forecasts: each runner type's headroom (when its pool reaches its maximum) and the queue
time it is predicted to pass, or why it has none, as the evaluator last published them
(adapters/state_table/forecast_board.py: one GetItem on the state table)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from queuewatch.adapters.state_table.forecast_board import read_board
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import moment, plural
from queuewatch.model.forecast.board import ForecastBoard, RunnerTypeForecast

MAX_SHOWN = 50  # runner types listed in the text; --json lists them all
STALE_AFTER = timedelta(minutes=5)  # a board older than this: the evaluator stopped forecasting, or ticking


def listed(names: list[str], shown: int = 8) -> str:
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def read_forecasts(client: Any, table: str) -> tuple[ForecastBoard | None, str | None]:
    """The board, or why it was not read."""
    try:
        return read_board(client, table), None
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if code == "AccessDeniedException":
            return None, "not read (status needs dynamodb:GetItem on the state table)"
        raise


def _late(forecast: RunnerTypeForecast) -> str:
    late = forecast.late
    if late is None:
        return ""
    when = "now" if late.crosses_in_seconds <= 0 else f"in about {format_duration(late.crosses_in_seconds)}"
    latest = late.latest_in_seconds
    spread = (
        f"{format_duration(late.earliest_in_seconds)}-{format_duration(latest)}"
        if latest is not None
        else f"from {format_duration(late.earliest_in_seconds)}"
    )
    sure = "likely" if late.likely else "possible"
    return f"; queues past {format_duration(late.threshold_seconds)} {when} ({sure}; {spread}; rule {late.rule})"


def headroom(forecast: RunnerTypeForecast) -> str:
    """Its headroom in words: when its pool reaches its maximum, or that it does not within the horizon."""
    left = f"{plural(forecast.runners_left, 'runner')} left of {forecast.maximum}"
    full_in = forecast.full_in_seconds
    if full_in is None:
        return f"headroom past its {format_duration(forecast.horizon_seconds)} horizon ({left})"
    if full_in <= 0:
        return f"at its maximum now ({left})"
    return f"reaches its maximum in about {format_duration(full_in)} ({left})"


def forecast_lines(board: ForecastBoard | None, now: datetime, note: str | None = None) -> list[str]:
    if note is not None:
        return [f"forecasts: {note}"]
    if board is None:
        return ["forecasts: none published (no rule has `forecast:`, or the evaluator has not ticked since)"]
    age = now - board.at
    stale = f"; older than {format_duration(STALE_AFTER.total_seconds())}: not current" if age > STALE_AFTER else ""
    lines = [
        f"forecasts at {moment(board.at)} ({format_duration(max(0.0, age.total_seconds()))} ago{stale}): "
        f"{plural(len(board.forecasts) + board.left_out, 'runner type')} forecast, "
        f"{len(board.full_soon)} reaching the maximum within the horizon, "
        f"{len(board.late)} predicted to queue past a rule's queue time"
    ]
    pressed = sorted(
        board.forecasts,
        key=lambda f: (f.late is None, f.full_in_seconds is None, f.full_in_seconds or 0.0, f.runners_left, f.name),
    )
    for forecast in pressed[:MAX_SHOWN]:
        evidence = f": {forecast.evidence}" if forecast.evidence else ""
        lines.append(f"  {forecast.name}: {headroom(forecast)}{_late(forecast)}{evidence}")
    if len(pressed) > MAX_SHOWN:
        lines.append(f"  and {len(pressed) - MAX_SHOWN} more runner types (--json lists them all)")
    if board.left_out:
        lines.append(f"  and {board.left_out} more with the most headroom, past what the board holds")
    for reason, names in sorted(board.without.items()):
        lines.append(f"  no forecast for {plural(len(names), 'runner type')}: {reason}: {listed(names)}")
    return lines


def forecast_document(board: ForecastBoard | None, note: str | None = None) -> dict[str, Any]:
    if board is None:
        return {"published": False, "note": note}
    return {"published": True, **board.model_dump(mode="json")}
