"""Durations as the config writes them and as pages print them."""

from __future__ import annotations

import pytest

from queuewatch.base.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("5m", 300),
        ("1h30m", 5400),
        ("2d", 172800),
        ("0s", 0),
        (0, 0),
        ("0", 0),
        (" 5M ", 300),
    ],
)
def test_parses(text: str | int, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["5 minutes", "-1", -1, True, False, "", "1m30", "m", "5x", 1.5, None])
def test_rejects_with_an_error_naming_the_input(bad: object) -> None:
    with pytest.raises(ValueError, match="expected a duration") as caught:
        parse_duration(bad)
    assert f"found {bad!r}" in str(caught.value)


@pytest.mark.parametrize(("bare", "shown"), [(90, "90"), ("90", "90"), (" 120 ", "120"), (45, "45")])
def test_a_number_without_a_unit_is_refused_not_read_as_seconds(bare: object, shown: str) -> None:
    with pytest.raises(ValueError, match="add a unit") as caught:
        parse_duration(bare)
    assert str(caught.value) == f"{shown}: add a unit, such as {shown}s or {shown}m"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(6840, "1h54m"), (45, "45s"), (300, "5m"), (0, "0s"), (7200, "2h"), (59.6, "1m"), (3661, "1h1m")],
)
def test_formats(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("seconds", [0, 60, 300, 5400, 7200])
def test_whole_minutes_round_trip(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds


def test_a_model_built_in_code_takes_whole_seconds_and_the_config_file_still_refuses_a_bare_number() -> None:
    from queuewatch.config.load import ConfigError, parse_config
    from queuewatch.config.schema import Thresholds

    assert Thresholds(queue_time=60).queue_time == 60  # code means seconds: `backtest --suggest` builds these
    text = "version: 1\nrules:\n  - {name: r, team: t, thresholds: {queue_time: 60}}\n"
    with pytest.raises(ConfigError, match="60: add a unit"):
        parse_config(text, source="fleet.yaml")
