"""Maintenance windows: when each occurs on its zone's clock, across daylight saving time, and what it holds back."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from queuewatch.config.load import ConfigError, parse_config
from queuewatch.config.maintenance import MaintenanceWindow, next_for, next_window
from queuewatch.model.rules import HEALTH_RULE
from queuewatch_cli.commands.check_config.check import check_config


def window(**fields: object) -> MaintenanceWindow:
    base: dict[str, object] = {
        "name": "patching",
        "time_zone": "Europe/Berlin",
        "weekdays": ["sunday"],
        "start": "02:30",
        "end": "04:00",
    }
    return MaintenanceWindow.model_validate({**base, **fields})


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def test_an_ordinary_week_opens_at_the_local_time() -> None:
    # 2026-03-22 is a Sunday in winter time (UTC+1).
    assert next_window(window(), utc(2026, 3, 20, 12)) == (utc(2026, 3, 22, 1, 30), utc(2026, 3, 22, 3))


def test_a_start_the_spring_forward_skips_opens_when_the_clock_reaches_it() -> None:
    # 2026-03-29: Berlin's clocks jump from 02:00 to 03:00; 02:30 never happens, so it opens at 03:00 CEST.
    assert next_window(window(), utc(2026, 3, 28, 12)) == (utc(2026, 3, 29, 1), utc(2026, 3, 29, 2))


def test_a_start_the_fall_back_repeats_is_its_first_occurrence_and_the_window_keeps_local_hours() -> None:
    # 2026-10-25: clocks go from 03:00 back to 02:00; 02:30 happens twice, first in summer time (UTC+2).
    starts, ends = next_window(window(), utc(2026, 10, 24, 12))
    assert (starts, ends) == (utc(2026, 10, 25, 0, 30), utc(2026, 10, 25, 3))
    assert (ends - starts).total_seconds() == 2.5 * 3600  # 02:30 to 04:00 local, through the repeated hour


def test_an_open_window_is_the_one_returned_and_an_overnight_one_ends_the_next_day() -> None:
    overnight = window(time_zone="America/New_York", weekdays=["friday"], start="22:00", end="02:00")
    # Friday 2026-11-27 22:00 EST is 2026-11-28 03:00 UTC; at 05:00 UTC it is open, until 07:00 UTC.
    assert next_window(overnight, utc(2026, 11, 28, 5)) == (utc(2026, 11, 28, 3), utc(2026, 11, 28, 7))
    assert overnight.open_at(utc(2026, 11, 28, 5)) and not overnight.open_at(utc(2026, 11, 28, 7))


def test_what_a_window_holds_back() -> None:
    narrow = window(rules=["jobs-queueing"], teams=["ci-infra"], match=["linux-*"])
    assert narrow.holds_back("jobs-queueing", "linux-x64@us-west-2", "ci-infra")  # a key glob: every region
    assert not narrow.holds_back("jobs-stuck", "linux-x64", "ci-infra")
    assert not narrow.holds_back("jobs-queueing", "linux-x64", "gpu-infra")
    assert not narrow.holds_back("jobs-queueing", "windows-x64", "ci-infra")
    assert not window().holds_back(HEALTH_RULE, "collector", "ci-infra")  # the watcher's own page: only by name
    assert window(rules=[HEALTH_RULE]).holds_back(HEALTH_RULE, "collector", "ci-infra")


def test_the_soonest_window_for_a_page() -> None:
    windows = [window(name="later", weekdays=["monday"]), window(name="sooner", weekdays=["saturday"])]
    found = next_for(windows, "jobs-queueing", [("linux-x64", "ci-infra")], utc(2026, 11, 25, 12))
    assert found is not None and found[0].name == "sooner"
    assert next_for([window(teams=["gpu"])], "jobs-queueing", [("linux-x64", "ci-infra")], utc(2026, 11, 25)) is None


CONFIG = """
version: 1
runner_types:
  - {name: linux-x64, queue: {name: q}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 5m}}
maintenance_windows:
"""


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("- {name: w, time_zone: Europe/Berln, weekdays: [sunday], start: '02:00', end: '04:00'}", "Europe/Berlin"),
        ("- {name: w, time_zone: UTC, weekdays: [sunday], start: '2am', end: '04:00'}", "HH:MM"),
        ("- {name: w, time_zone: UTC, weekdays: [sun], start: '02:00', end: '04:00'}", "sunday"),
        ("- {name: w, time_zone: UTC, weekdays: [sunday], start: '02:00', end: '02:00'}", "some length"),
        ("- {name: w, time_zone: UTC, weekdays: [sunday], start: '02:00', end: '04:00', rules: [nope]}", "nope"),
    ],
)
def test_a_bad_window_is_refused_naming_what_was_expected(entry: str, expected: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(CONFIG + "  " + entry + "\n", source="qw.yaml")
    assert "qw.yaml" in str(error.value) and expected in str(error.value)


def test_check_config_explains_each_window_and_its_next_occurrence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "qw.yaml"
    entry = (
        "  - {name: patching, time_zone: Europe/Berlin, weekdays: [sunday], start: '02:30', end: '04:00', "
        "match: [linux-*]}\n"
    )
    path.write_text(CONFIG + entry, encoding="utf-8")
    assert check_config([str(path)], now=utc(2026, 3, 28, 12)) == 0
    out = capsys.readouterr().out
    assert (
        "maintenance window patching: sunday 02:30-04:00 Europe/Berlin: runner types linux-*; "
        "next Sun 2026-03-29 03:00-04:00 Europe/Berlin (in 13h)"
    ) in out


def test_explain_names_a_rules_title_and_the_windows_that_may_hold_it_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "qw.yaml"
    entry = (
        "  - {name: patching, time_zone: UTC, weekdays: [sunday], start: '02:00', end: '04:00', "
        "rules: [jobs-queueing]}\n"
    )
    path.write_text(CONFIG.replace("queue_time: 5m}", "queue_time: 5m}, title: Linux jobs wait") + entry)
    assert check_config([str(path)], explain=True, now=utc(2026, 3, 28, 12)) == 0
    out = capsys.readouterr().out
    assert "  title            Linux jobs wait\n" in out
    assert "  windows          patching  (maintenance windows that may hold it back)" in out
