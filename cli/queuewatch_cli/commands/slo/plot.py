"""`queuewatch slo --plot`: each SLO's error budget burning down across its window, with the SLO's pages and
tickets that went out (from the stack's sent log, the state table's `sent#` partitions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from queuewatch.base.wording import moment
from queuewatch.digest.message import Fired
from queuewatch.evaluate.slo import is_ticket
from queuewatch.model.slo import HOUR, Slo, Tally, window_span
from queuewatch_cli.common.plotting import inside_frame, span_held

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass(frozen=True)
class BurnDown:
    slo: str
    points: tuple[tuple[datetime, float], ...]  # the budget left, as a share of the window's, after each hour
    fired: tuple[Fired, ...]
    alerts_read: bool  # False: no sent log was read (no --state-table), so no alert is drawn
    window: tuple[datetime, datetime] | None = None  # the SLO's window as drawn: its start, and now
    window_days: float = 0.0


def burn_down(slo: Slo, tally: Tally, now: datetime, fired: Sequence[Fired], alerts_read: bool) -> BurnDown:
    """The budget over the window's jobs (the summary's), less the late jobs counted from the window's start up
    to each hour's end: 100% at the start, the summary's budget left at the end (negative once overspent).
    A window with no jobs has no budget to draw."""
    start, end = window_span(now, slo.window)
    window, days = (start, now), slo.window / 86400
    hours = tally.by_hour(start, end)
    allowed = sum(counts.total for counts in hours.values()) * slo.budget
    first = tally.first_counted(start)
    if allowed <= 0 or first is None:
        return BurnDown(slo.name, (), tuple(fired), alerts_read, window, days)
    # From the first minute counted: a history shorter than the window holds nothing before it (not a quiet
    # stretch at 100%, which is what a line from the window's start would say).
    points = [(first, 1.0)]
    spent = 0
    for hour in sorted(hours):
        spent += hours[hour].bad
        points.append((min(hour + timedelta(seconds=HOUR), end), (allowed - spent) / allowed))
    shown = tuple(f for f in fired if start <= f.page_at <= now)
    return BurnDown(slo.name, tuple(points), shown, alerts_read, window, days)


def burn_down_figure(charts: Sequence[BurnDown]) -> Figure:
    """One panel per SLO: the budget left (line), zero (grey), each page (red) and ticket (orange) that went out."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    figure, panels = plt.subplots(len(charts), 1, figsize=(10, 3 * len(charts)), dpi=100, squeeze=False)
    for chart, axes in zip(charts, [row[0] for row in panels], strict=True):
        if chart.points:
            axes.plot([at for at, _ in chart.points], [left * 100 for _, left in chart.points], label="budget left")
        else:
            axes.text(0.5, 0.5, "no jobs in the window: no budget", transform=axes.transAxes, ha="center")
        axes.axhline(0, color="grey", linewidth=0.8)
        labelled: set[str] = set()
        for alert in chart.fired:
            kind = "ticket" if is_ticket(alert.rule) else "page"
            label = f"{kind} sent" if kind not in labelled else None
            labelled.add(kind)
            colour = "tab:orange" if kind == "ticket" else "tab:red"
            axes.axvline(alert.page_at, color=colour, linestyle="--", linewidth=0.9, label=label)
            where = mdates.date2num(alert.page_at)  # type: ignore[no-untyped-call]
            axes.annotate(
                alert.priority, (where, 1), xycoords=("data", "axes fraction"),
                xytext=(2, -10), textcoords="offset points", fontsize=7, color=colour,
            )  # fmt: skip
        axes.set_xlabel("UTC")
        if chart.window is not None:
            began, ended = chart.window
            held_from = chart.points[0][0] if chart.points else None
            span_held(axes, began, held_from, ended, f"the {chart.window_days:g}-day window's start ({moment(began)})")
        alerts = "" if chart.alerts_read else " (alerts not read: give --state-table)"
        axes.set_title(f"{chart.slo}: error budget left{alerts}", fontsize=10)
        axes.yaxis.set_major_formatter(PercentFormatter())
        axes.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M", tz=UTC))  # type: ignore[no-untyped-call]
        axes.set_ylabel("budget left")
        axes.grid(alpha=0.3)
        if axes.get_legend_handles_labels()[0]:
            axes.legend(loc="best", fontsize=8)
    figure.tight_layout()
    for axes in [row[0] for row in panels]:
        inside_frame(figure, axes)
    return figure


def draw(charts: Sequence[BurnDown], path: str) -> None:
    import matplotlib.pyplot as plt

    figure = burn_down_figure(charts)
    figure.savefig(path)
    plt.close(figure)
