"""The evaluator's forecasts for people: each tick's outlooks on a board (model/forecast/board.py), put in the state
table for `queuewatch status` (adapters/state_table/forecast_board.py) and kept on the result for the tick's metrics
(evaluate/forecast_metrics.py: the dashboard). The pages never depend on it: a failed write costs the tick nothing but
the board, which the next tick puts again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from queuewatch.adapters.aws.errors import DeadlineExceeded
from queuewatch.adapters.state_table.forecast_board import put_board
from queuewatch.evaluate.result import EvaluationResult
from queuewatch.evaluate.steps import Plan
from queuewatch.model.forecast.board import board_of

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

BOARD_KEY = "forecast#board"  # in result.log_failed when the board was not put


def publish_forecasts(
    dynamodb: DynamoDBClient,
    table: str,
    planned: Plan,
    result: EvaluationResult,
) -> None:
    """The tick's outlooks (one per runner type a rule with `forecast:` selects, computed once by the plan) on
    the board; nothing without such a rule."""
    found = planned.context.outlooks
    if not found:
        return
    board = board_of(found, planned.context.config.resolved_rules, planned.context.now)
    result.forecast_board = board
    try:
        put_board(dynamodb, table, board)
    except (ClientError, BotoCoreError, DeadlineExceeded):
        result.log_failed.append(BOARD_KEY)
