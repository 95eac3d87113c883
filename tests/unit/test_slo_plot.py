"""`slo --plot`: the budget burns down from 100% to the summary's budget left, with each page and ticket sent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import pytest
from matplotlib.text import Annotation

from queuewatch.digest.message import Fired
from queuewatch.model.rules import Priority
from queuewatch.model.slo import BurnAlert, Counts, Slo, Tally, budget_left, window_span
from queuewatch_cli.commands.slo.plot import burn_down, burn_down_figure, draw

NOW = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
SLO = Slo(
    name="linux-fast", match=("linux.*",), exclude=(), teams=(), labels=(), objective=0.99, queue_time_under=120,
    window=7 * 86400, team="ci-infra", priority=Priority.P2, ticket_priority=Priority.P3, runbook_url=None, min_jobs=20,
    page_when_waiting_over=None, burn_alerts=(BurnAlert("fast", 14.4, 3600, 300, "page"),),
)  # fmt: skip


def counted() -> Tally:
    """1,000 jobs a day for a week and the hour after NOW, 5 late a day, and an incident two days ago with 60
    late in an hour."""
    start, _ = window_span(NOW, SLO.window)
    incident = NOW - timedelta(days=2)
    tally = Tally()
    for n in range(7 * 288 + 12):
        at = start + timedelta(minutes=5 * n)
        bad = 5 if incident <= at < incident + timedelta(hours=1) else 1 if n % 58 == 0 else 0
        tally.add(at, Counts(good=max(0, 3 - bad), bad=bad))
    tally.add(datetime(2026, 11, 1, tzinfo=UTC), Counts(good=0, bad=100))  # before the window: not counted
    return tally


@pytest.mark.parametrize(
    ("late", "first"),
    [(timedelta(0), timedelta(0)), (timedelta(minutes=37, seconds=20), timedelta(minutes=40))],
    ids=["on-the-hour", "mid-hour"],
)
def test_the_burn_down_starts_full_and_ends_at_the_summarys_budget_left(late: timedelta, first: timedelta) -> None:
    """At a tick mid-hour the window's ragged edges count by minute, as the summary's do: the line starts at
    the window's first counted minute and ends at the start of now's minute on the summary's budget left."""
    tally, now = counted(), NOW + late
    chart = burn_down(SLO, tally, now, [], alerts_read=True)
    window = tally.window(now, SLO.window)
    _, expected = budget_left(window, SLO)
    assert chart.points[0] == (NOW - timedelta(seconds=SLO.window) + first, 1.0)
    end = now.replace(second=0)
    assert chart.points[-1][0] == end and chart.points[-1][1] == pytest.approx(expected)
    lefts = [left for _, left in chart.points]
    assert lefts == sorted(lefts, reverse=True)  # a budget only burns
    incident = NOW - timedelta(days=2)
    before = next(left for at, left in reversed(chart.points) if at <= incident)
    after = next(left for at, left in chart.points if at >= incident + timedelta(hours=1))
    assert before - after == pytest.approx(60 / (window.total * SLO.budget))


def test_each_alert_sent_in_the_window_is_drawn_and_named_in_the_legend(tmp_path: Path) -> None:
    page = Fired(NOW - timedelta(days=2, minutes=-20), "P2", "page", "slo:linux-fast")
    ticket = Fired(NOW - timedelta(days=1), "P3", "ticket", "slo:linux-fast:ticket")
    old = Fired(NOW - timedelta(days=9), "P2", "old page", "slo:linux-fast")
    chart = burn_down(SLO, counted(), NOW, [page, ticket, old], alerts_read=True)
    assert chart.fired == (page, ticket)
    figure = burn_down_figure([chart, burn_down(SLO, Tally(), NOW, [], alerts_read=False)])
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
