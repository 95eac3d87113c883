"""`slo --plot`: the budget burns down from 100% to the summary's budget left, with each page and ticket sent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import pytest
from matplotlib.text import Annotation

from queuewatch.digest.message import Fired
from queuewatch.model.rules import Priority
from queuewatch.model.slo import BurnAlert, Counts, Slo, budget_left, window_buckets_start, window_counts
from queuewatch_cli.commands.slo.plot import burn_down, burn_down_figure, draw

NOW = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
SLO = Slo(
    name="linux-fast", match=("linux.*",), exclude=(), teams=(), labels=(), objective=0.99, queue_time_under=120,
    window=7 * 86400, team="ci-infra", priority=Priority.P2, ticket_priority=Priority.P3, runbook_url=None, min_jobs=20,
    page_when_waiting_over=None, burn_alerts=(BurnAlert("fast", 14.4, 3600, 300, "page"),),
)  # fmt: skip


def buckets() -> dict[datetime, Counts]:
    """1,000 jobs a day for a week, 5 late a day, and an incident two days ago with 60 late in an hour."""
    start = window_buckets_start(NOW, SLO.window)
    found = {}
    for n in range(7 * 288):
        at = start + timedelta(minutes=5 * n)
        bad = 1 if n % 58 == 0 else 0
        found[at] = Counts(good=3 - bad, bad=bad)
    incident = NOW - timedelta(days=2)
    for n in range(12):
        found[window_buckets_start(incident, 0) + timedelta(minutes=5 * n)] = Counts(good=0, bad=5)
    found[datetime(2026, 11, 1, tzinfo=UTC)] = Counts(good=0, bad=100)  # before the window: not counted
    return found


def test_the_burn_down_starts_full_and_ends_at_the_summarys_budget_left() -> None:
    counted = buckets()
    chart = burn_down(SLO, counted, NOW, [], alerts_read=True)
    _, expected = budget_left(window_counts(counted, NOW, SLO.window), SLO)
    assert chart.points[0] == (window_buckets_start(NOW, SLO.window), 1.0)
    assert chart.points[-1][0] == NOW and chart.points[-1][1] == pytest.approx(expected)
    lefts = [left for _, left in chart.points]
    assert lefts == sorted(lefts, reverse=True)  # a budget only burns
    incident = NOW - timedelta(days=2)
    before = next(left for at, left in reversed(chart.points) if at <= incident)
    after = next(left for at, left in chart.points if at >= incident + timedelta(hours=1))
    total = window_counts(counted, NOW, SLO.window).total
    assert before - after == pytest.approx(60 / (total * SLO.budget), abs=2 / (total * SLO.budget))


def test_each_alert_sent_in_the_window_is_drawn_and_named_in_the_legend(tmp_path: Path) -> None:
    page = Fired(NOW - timedelta(days=2, minutes=-20), "P2", "page", "slo:linux-fast")
    ticket = Fired(NOW - timedelta(days=1), "P3", "ticket", "slo:linux-fast:ticket")
    old = Fired(NOW - timedelta(days=9), "P2", "old page", "slo:linux-fast")
    chart = burn_down(SLO, buckets(), NOW, [page, ticket, old], alerts_read=True)
    assert chart.fired == (page, ticket)
    figure = burn_down_figure([chart, burn_down(SLO, {}, NOW, [], alerts_read=False)])
    drawn, empty = figure.axes
    legend = drawn.get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == ["budget left", "page sent", "ticket sent"]
    vertical = {
        xs[0] for xs in (cast(list[datetime], line.get_xdata()) for line in drawn.lines[1:]) if len(set(xs)) == 1
    }
    assert vertical == {page.page_at, ticket.page_at}
    assert {t.get_text() for t in drawn.texts} == {"P2", "P3"}
    assert all(
        cast(Annotation, t).xycoords == ("data", "axes fraction") for t in drawn.texts
    )  # at the top, whatever the budget
    assert "alerts not read" in empty.get_title() and "no jobs in the window" in empty.texts[0].get_text()
    path = tmp_path / "slo.png"
    draw([chart], str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
