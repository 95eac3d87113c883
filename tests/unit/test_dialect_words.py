"""One dialect across the commands, each rule held by a table: times written one way by one function, status in
the on-call's words, capacity's times and rates as people read them, and a --plot hint that works from here."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from queuewatch.alerting.slo_summary import SloSummary, lines
from queuewatch.base.wording import moment
from queuewatch_cli.commands.capacity.output import arrivals_by_hour
from queuewatch_cli.commands.status.status import AlertView, StatusView, text_lines
from queuewatch_cli.common.plotting import install_hint

ROOT = Path(__file__).resolve().parents[2]
AT = datetime(2026, 11, 28, 2, 5, 9, tzinfo=UTC)
WRITTEN = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


@pytest.mark.parametrize(
    ("given", "written"),
    [
        (AT, "2026-11-28 02:05 UTC"),
        (AT.replace(tzinfo=None), "2026-11-28 02:05 UTC"),  # naive: UTC, the house's convention
        (AT.astimezone(timezone(timedelta(hours=-5))), "2026-11-28 02:05 UTC"),  # another zone: said in UTC
        ("2026-11-28T02:00Z", "2026-11-28 02:00 UTC"),  # the SLO report's ISO hours
        ("2026-11-28T02:05:09+00:00", "2026-11-28 02:05 UTC"),
        (None, "never"),
    ],
)
def test_every_time_is_written_one_way(given: datetime | str | None, written: str) -> None:
    assert moment(given) == written


def _hand_formatted(path: Path) -> list[str]:
    """Lines that write a time for people by hand (an axis's tick format and input examples aside)."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if "%Y-%m-%d %H:%M" in line and "DateFormatter" not in line:
            found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


@pytest.mark.parametrize(
    "module",
    [
        *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "cli" / "queuewatch_cli").rglob("*.py")),
        "layers/queuewatch/queuewatch/alerting/slo_summary.py",
    ],
)
def test_no_command_writes_a_time_its_own_way(module: str) -> None:
    assert _hand_formatted(ROOT / module) == []


def _summary(**changes: object) -> SloSummary:
    fields: dict[str, object] = dict(
        name="linux-fast", objective=0.99, queue_time_under_seconds=120, window_days=28, jobs=100, bad=1,
        achieved=0.99, budget_left_jobs=0.0, budget_left_fraction=0.0, pairs=[], history_from=None,
    )  # fmt: skip
    fields.update(changes)
    return SloSummary(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"history_from": "2026-11-28T01:00:00+00:00"}, "history from 2026-11-28 01:00 UTC"),
        (
            {"spent_by_runner_type": [("linux", 2)], "spent_by_hour": [("2026-11-28T02:00Z", 2)]},
            "by hour: 2026-11-28 02:00 UTC 2",
        ),
    ],
)
def test_slo_writes_times_as_every_command_does(changes: dict[str, object], expected: str) -> None:
    text = "\n".join(lines(_summary(**changes)))
    assert expected in text
    assert "T0" not in text and "Z " not in text and "+00:00" not in text


ALERT = AlertView("jobs-queueing", "all", "firing", AT - timedelta(minutes=3), AT - timedelta(minutes=3), 1, None)


@pytest.mark.parametrize(
    ("view", "said", "unsaid"),
    [
        (
            StatusView(AT - timedelta(minutes=2), [ALERT], [], [], 1.0),
            [
                "queuewatch status of state at 2026-11-28 02:05 UTC",
                "alerts last changed: 2026-11-28 02:03 UTC (2m ago)",
                "paged at 2026-11-28 02:02 UTC (page 1)",
            ],
            ["read unit", "outbox", "last applied tick", "sequence"],
        ),
        (
            StatusView(None, [replace(ALERT, outbox="page n-1 not yet delivered")], [], [], 0.5),
            ["alerts last changed: never", "; page n-1 not yet delivered"],
            ["read unit", "outbox:", "last applied tick"],
        ),
    ],
)  # fmt: skip
def test_status_speaks_the_on_calls_words(view: StatusView, said: list[str], unsaid: list[str]) -> None:
    text = "\n".join(text_lines(view, "state", AT))
    for words in said:
        assert words in text
    for words in unsaid:
        assert words not in text
    assert all(WRITTEN.search(line) for line in text.splitlines() if "UTC" in line)


@pytest.mark.parametrize(
    ("held", "counts", "said", "unsaid"),
    [
        (2 * 3600, [0] * 9 + [6, 4] + [0] * 13, "in the 2h held (less than a day: counts, not a daily rate)", "a day "),
        (7 * 86400, [0] * 9 + [70, 14] + [0] * 13, "arrivals a day by UTC hour 0-23: 0 0 0 0 0 0 0 0 0 10 2 0", "held"),
        (86400, [0] * 9 + [6, 4] + [0] * 13, "arrivals a day by UTC hour 0-23: 0 0 0 0 0 0 0 0 0 6 4 0", "held"),
    ],
)  # fmt: skip
def test_capacity_gives_a_daily_rate_only_over_a_day_or_more(
    held: float, counts: list[int], said: str, unsaid: str
) -> None:
    text = arrivals_by_hour(counts, held)
    assert said in text and unsaid not in text
    if held < 86400:
        assert " 6 4 " in text  # the counts as they are, never scaled up to a day


def test_the_plot_hint_installs_the_extra_of_this_very_clone() -> None:
    hint = shlex.split(install_hint())
    assert hint[1:4] == ["-m", "pip", "install"]
    assert hint[-2:] == ["-e", f"{ROOT}[plot]"]  # not 'queuewatch[plot]', a PyPI package of that name
