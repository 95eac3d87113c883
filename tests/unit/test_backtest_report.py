"""The backtest's words: pages paired across two configs, earlier and later; flaps; the times it accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from queuewatch.base.errors import QueuewatchError
from queuewatch_cli.commands.backtest.replay import Episode
from queuewatch_cli.commands.backtest.report import compare, comparison_lines, report, summarize
from queuewatch_cli.common.times import parse_moment

T = datetime(2026, 3, 2, tzinfo=UTC)
END = T + timedelta(days=7)


def episode(start: int, end: int | None, *names: str, group: str = "all") -> Episode:
    """An episode from minute `start` to minute `end` (None: still firing at the range's end)."""
    resolved = T + timedelta(minutes=end) if end is not None else None
    began = T + timedelta(minutes=start)
    return Episode("r", group, "P2", began, began - timedelta(minutes=5), resolved, set(names))


def test_b_paging_the_same_alert_later_or_earlier_is_told_apart_from_new_pages() -> None:
    a = [episode(0, 60, "x"), episode(600, 660, "y"), episode(1000, 1010, "x")]
    b = [episode(10, 60, "x"), episode(590, 660, "y"), episode(2000, 2030, "z")]
    result = compare(a, b, END)
    assert [e.started_at for e in result.only_a] == [T + timedelta(minutes=1000)]
    assert [e.runner_types for e in result.only_b] == [{"z"}]
    lines = "\n".join(comparison_lines(result, "a.yaml", "b.yaml"))
    assert (
        "pages B sends earlier than A: 1\n    r/all y: A 2026-03-02 10:00 UTC, B 2026-03-02 09:50 UTC (10m earlier)"
        in lines
    )
    assert (
        "pages B sends later than A: 1\n    r/all x: A 2026-03-02 00:00 UTC, B 2026-03-02 00:10 UTC (10m later)"
        in lines
    )
    assert "B pages 1 runner type(s) A never pages: z" in lines
    assert "pages both send at the same minute: 0" in lines


def test_pages_that_share_no_runner_type_are_not_paired() -> None:
    result = compare([episode(0, 60, "x")], [episode(0, 60, "y")], END)
    assert len(result.only_a) == 1 and len(result.only_b) == 1 and not result.same


def test_a_flap_is_a_new_page_of_the_same_group_within_30_minutes_of_its_resolve() -> None:
    episodes = [
        episode(0, 60, "x"),
        episode(90, 100, "x"),  # 30m after: a flap
        episode(131, None, "x"),  # 31m after: not one; still firing at the end
        episode(95, 96, "y", group="other"),  # another group: never a flap of the first
    ]
    summary = summarize(episodes, T, END)
    assert [(before.started_at, after.started_at) for before, after in summary.flaps] == [
        (T, T + timedelta(minutes=90))
    ]
    assert summary.firing_seconds == (60 + 10 + (7 * 1440 - 131) + 1) * 60
    text = "\n".join(report("a.yaml", episodes, T, END))
    assert "-> still firing" in text and "pages per week 4.0;" in text


def test_times_are_iso_now_or_a_duration_ago_to_the_minute() -> None:
    now = datetime(2026, 3, 16, 12, 34, 56, tzinfo=UTC)
    assert parse_moment("now", now, "--to") == datetime(2026, 3, 16, 12, 34, tzinfo=UTC)
    assert parse_moment("14d", now, "--from") == datetime(2026, 3, 2, 12, 34, tzinfo=UTC)
    assert parse_moment("2026-03-02T09:00", now, "--from") == datetime(2026, 3, 2, 9, tzinfo=UTC)
    assert parse_moment("2026-03-02T09:00+02:00", now, "--from") == datetime(2026, 3, 2, 7, tzinfo=UTC)
    with pytest.raises(QueuewatchError, match="--from: found 'last week', expected an ISO time"):
        parse_moment("last week", now, "--from")
