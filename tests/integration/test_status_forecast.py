"""`queuewatch status`'s forecasts: each runner type's headroom and predicted queue, or why it has none, from the
board the evaluator publishes in the state table (adapters/state_table/forecast_board.py)."""

from __future__ import annotations

import hashlib
import json
import zlib
from datetime import timedelta

import boto3
import pytest
from faults import inject
from support import T0, StackInMoto, runner_type, snapshot

from queuewatch.adapters.state_table.forecast_board import MAX_BOARD_BYTES, packed, put_board, read_board
from queuewatch.adapters.state_table.keys import FORECAST_BOARD_KEY as KEY
from queuewatch.config.load import parse_config
from queuewatch.model.forecast.board import ForecastBoard, RunnerTypeForecast, board_of
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.forecast.outlook import NoOutlook, outlook
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.status.status import show_status

CONFIG = parse_config(
    """version: 1
defaults: {rule: {team: ci-infra}}
runner_types:
  - {name: linux.2xlarge, queue: {name: q1}}
  - {name: linux.4xlarge, queue: {name: q2}}
  - {name: arm64, queue: {name: q3}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 30m}, forecast: 10m}
""",
    source="test.yaml",
)
FILLING = ForecastInputs(window_seconds=600, arrived=42, run_seconds=2400, startup_seconds=60, running=47,
                         running_seconds=60, runners=47, maximum=50, runners_from="log")  # fmt: skip
CALM = ForecastInputs(window_seconds=600, arrived=3, run_seconds=600, running=5, running_seconds=60, maximum=50)


@pytest.fixture
def stack(aws: None) -> StackInMoto:
    return StackInMoto.create()


def board() -> ForecastBoard:
    found = {
        "linux.2xlarge": outlook(FILLING, waiting=0, oldest_seconds=None, at=T0, horizon_seconds=600),
        "linux.4xlarge": outlook(CALM, waiting=0, oldest_seconds=None, at=T0, horizon_seconds=600),
        "arm64": NoOutlook("the autoscaler's maximum for it was not read"),
    }
    return board_of(found, CONFIG.resolved_rules, T0)


def test_status_shows_each_runner_types_headroom_its_predicted_queue_and_why_one_has_none(stack: StackInMoto) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_board(dynamodb, "state", board())
    text = show_status(dynamodb, "state", T0 + timedelta(minutes=1), as_json=False)
    section = text.split("forecasts at ")[1]
    assert section.startswith("2026-11-21 18:00 UTC (1m ago): 2 runner types forecast, 1 reaching the maximum")
    filling = next(line for line in section.splitlines() if line.startswith("  linux.2xlarge: "))
    assert "reaches its maximum in about " in filling and "(3 runners left of 50)" in filling
    assert "; queues past 30m in about " in filling and "rule jobs-queueing" in filling
    assert filling.endswith("42 jobs arrived in 10m, 3 runners left of 50, jobs run about 40m, start-up about 1m")
    assert "  linux.4xlarge: headroom past its 10m horizon (45 runners left of 50)" in section
    assert "  no forecast for 1 runner type: the autoscaler's maximum for it was not read: arm64" in section
    document = json.loads(show_status(dynamodb, "state", T0 + timedelta(minutes=1), as_json=True))
    forecasts = {f["name"]: f for f in document["forecast"]["forecasts"]}
    assert (
        forecasts["linux.4xlarge"]["full_in_seconds"] is None
        and forecasts["linux.2xlarge"]["late"]["threshold_seconds"] == 1800
    )
    later = show_status(dynamodb, "state", T0 + timedelta(minutes=9), as_json=False)
    assert "(9m ago; older than 5m: not current)" in later


def test_status_without_a_board_says_why_where_the_config_forecasts(stack: StackInMoto) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    text = show_status(dynamodb, "state", T0, as_json=False, config=CONFIG)
    assert text.endswith("forecasts: none published (no rule has `forecast:`, or the evaluator has not ticked since)")
    # without a config that forecasts, a stack with no board has nothing to say of forecasts
    assert "forecasts:" not in show_status(dynamodb, "state", T0, as_json=False)


def test_a_board_of_5000_runner_types_fits_one_item_and_the_least_pressed_go_first_past_it(stack: StackInMoto) -> None:
    forecasts = [
        RunnerTypeForecast(name=f"runner-type-{n:05d}-" + "x" * 60, horizon_seconds=600, runners_left=n % 50,
                           maximum=50, full_in_seconds=float(n) if n % 2 else None, evidence="e" * 100)
        for n in range(5000)
    ]  # fmt: skip
    big = ForecastBoard(at=T0, forecasts=forecasts)
    assert len(packed(big)) <= MAX_BOARD_BYTES
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    put_board(dynamodb, "state", big)
    assert read_board(dynamodb, "state") == big
    # Names no compression shrinks: past the item's size, those with the most headroom are counted, not kept.
    noisy = [
        f.model_copy(update={"name": hashlib.sha512(f.name.encode()).hexdigest() * 2 + str(n)})
        for n, f in enumerate(forecasts)
    ]
    kept = ForecastBoard.model_validate_json(zlib.decompress(packed(big.model_copy(update={"forecasts": noisy}))))
    assert 0 < len(kept.forecasts) < 5000 and kept.left_out == 5000 - len(kept.forecasts)
    # Every pool filling within its horizon stayed; those left out all had headroom past it.
    assert sum(f.full_in_seconds is not None for f in kept.forecasts) == 2500
    item = dynamodb.get_item(TableName="state", Key=KEY)["Item"]
    assert len(item["board_z"]["B"]) <= MAX_BOARD_BYTES


def forecast_tick(minute: int) -> Snapshot:
    at = T0 + timedelta(minutes=minute)
    filling = runner_type("linux.2xlarge").model_copy(update={"forecast": FILLING})
    calm = runner_type("linux.4xlarge").model_copy(update={"forecast": CALM})
    return snapshot(at, filling, calm, runner_type("arm64"))


def test_the_evaluator_publishes_its_forecasts_each_tick_and_a_failed_write_costs_no_page(stack: StackInMoto) -> None:
    result = stack.evaluate(forecast_tick(0), CONFIG)
    assert result.forecast_board is not None and [f.name for f in result.forecast_board.full_soon] == ["linux.2xlarge"]
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    text = show_status(dynamodb, "state", T0 + timedelta(seconds=30), as_json=False)
    assert "forecasts at 2026-11-21 18:00 UTC (30s ago): 2 runner types forecast, 1 reaching the maximum" in text
    assert "  no forecast for 1 runner type: its forecast inputs were not read this tick: arm64" in text

    # The board's write fails: the tick's pages and state stand, and the next tick puts the board again.
    fault = inject(stack.dynamodb, "PutItem", "access-denied", when=lambda call: call["Item"]["pk"]["S"] == "forecast")
    result = stack.evaluate(forecast_tick(1), CONFIG)
    assert fault.faulted and result.outcome in ("applied", "unchanged") and "forecast#board" in result.log_failed
    fault.enabled = False
    stack.evaluate(forecast_tick(2), CONFIG)
    board = read_board(dynamodb, "state")
    assert board is not None and board.at == T0 + timedelta(minutes=2)
