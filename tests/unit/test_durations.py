"""Durations as the config writes them and as pages print them."""

from __future__ import annotations

import pytest

from queuewatch.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("5m", 300), ("1h30m", 5400), ("2d", 172800), (45, 45), ("120", 120), ("0s", 0)]
)
def test_parses(text: str | int, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("bad", ["5 minutes", "-1", -1, True, "", "1m30", "m", 1.5])
def test_rejects_naming_the_input(bad: object) -> None:
    with pytest.raises(ValueError, match="expected a duration"):
        parse_duration(bad)


@pytest.mark.parametrize(("seconds", "text"), [(6840, "1h54m"), (45, "45s"), (300, "5m"), (7200, "2h"), (59.6, "1m")])
def test_formats(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
