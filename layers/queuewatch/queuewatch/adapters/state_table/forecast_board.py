"""The tick's forecasts (model/forecast/board.py), published in the state table for `queuewatch status`.

One item, `pk = forecast`, `sk = board`, outside the `queuewatch` partition, so the evaluator's one Query per tick
never reads it; put by the evaluator on each tick that judges the present and has a rule with `forecast:`, as
compressed JSON (5,000 runner types' figures: some 60 KB compressed, 60 write units a tick; a fleet of a few
hundred: a few). Kept under DynamoDB's 400 KB item: past MAX_BOARD_BYTES the evidence goes first, then the runner
types least pressed (their number is kept). A metric per runner type would cost far more (each custom metric is
billed every hour it has data): the dashboard's per runner type metric is only for the pools filling up.
"""

from __future__ import annotations

import zlib
from datetime import UTC
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from queuewatch.adapters.state_table.keys import FORECAST_BOARD_KEY
from queuewatch.model.forecast.board import ForecastBoard

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_BOARD_BYTES = 350_000


def packed(board: ForecastBoard) -> bytes:
    """The board compressed, within MAX_BOARD_BYTES: the least pressed left out (counted) when it would not fit."""
    data = zlib.compress(board.model_dump_json(exclude_defaults=True).encode(), 6)
    if len(data) <= MAX_BOARD_BYTES:
        return data
    pressed = sorted(
        board.forecasts,
        key=lambda f: (f.late is None, f.full_in_seconds is None, f.full_in_seconds or 0.0, f.runners_left, f.name),
    )
    kept = [f if f.late is not None else f.model_copy(update={"evidence": None}) for f in pressed]
    while True:
        smaller = board.model_copy(update={"forecasts": kept, "left_out": board.left_out + len(pressed) - len(kept)})
        data = zlib.compress(smaller.model_dump_json(exclude_defaults=True).encode(), 6)
        if len(data) <= MAX_BOARD_BYTES or not kept:
            return data
        kept = kept[: len(kept) * 3 // 4]


def put_board(client: DynamoDBClient, table: str, board: ForecastBoard) -> None:
    item: dict[str, Any] = {
        **FORECAST_BOARD_KEY,
        "board_z": {"B": packed(board)},
        "written_at": {"S": board.at.astimezone(UTC).isoformat()},
    }
    client.put_item(TableName=table, Item=item)


def read_board(client: DynamoDBClient, table: str) -> ForecastBoard | None:
    """The board the evaluator last published; None before its first forecast, or one this command cannot read
    (a newer evaluator's)."""
    item = client.get_item(TableName=table, Key=FORECAST_BOARD_KEY).get("Item")
    if item is None:
        return None
    try:
        return ForecastBoard.model_validate_json(zlib.decompress(bytes(item["board_z"]["B"])))
    except (ValidationError, zlib.error, KeyError):
        return None
