"""Plots that tell the truth on short histories: drawn over the data's own span, the span before the history
hatched as not held (never drawn as quiet) with a note, the axis saying what each point is, and every label
inside the frame. Checked through matplotlib's objects (data, limits, labels), not pixels."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import matplotlib.dates as mdates
import pytest
from job_records import job_record
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from queuewatch.collect.queues import WatchedQueue
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import JobRecord
from queuewatch.model.rules import Priority
from queuewatch.model.slo import BurnAlert, Counts, Slo, Tally, window_span
from queuewatch_cli.commands.backtest.jobs import JobObservations, job_spans
from queuewatch_cli.commands.backtest.plot import Timeline
from queuewatch_cli.commands.backtest.replay import Replay
from queuewatch_cli.commands.slo.plot import burn_down, burn_down_figure
from queuewatch_cli.common.plotting import NOT_HELD

END = datetime(2026, 11, 28, 4, 0, tzinfo=UTC)
CONFIG = parse_config(
    "version: 1\ndefaults: {region: us-east-1}\n"
    "runner_types: [{name: small, queue: {name: q-small}}, {name: large, queue: {name: q-large}}]\n"
    "rules: [{name: r, team: ci-infra, match: ['*'], thresholds: {queue_time: 1m}}]\n",
    source="t.yaml",
)
TARGETS = [
    WatchedQueue(name, "us-east-1", "1", f"q-{name}", None, CONFIG.signals_for({})) for name in ("small", "large")
]


def job(n: int, runner_type: str, queued: datetime, started: datetime) -> JobRecord:
    return job_record(
        n,
        runner_type,
        queued,
        started_at=started,
        run_id=1,
        labels=(),
        updated_at=queued,
        expires_at=END + timedelta(days=14),
    )


def replayed(start: datetime, held_from: datetime | None, *, tracked: bool = True) -> Timeline:
    """A backtest's timeline as run.py draws it: ticks from where the history begins; the last incident runs
    to the range's end, so its label sits at the right edge. Untracked (CloudWatch), where the history begins
    is known only from the first datapoint."""
    first = held_from or start
    jobs = [
        job(1, "small", first + timedelta(minutes=10), first + timedelta(minutes=40)),
        job(2, "large", END - timedelta(minutes=8), END + timedelta(hours=1)),
    ]
    known = held_from if tracked else None
    timeline = Timeline(CONFIG, start, END, "t.yaml", tracked=tracked, held_from=known)
    replay = Replay(CONFIG)
    replay.on_tick = timeline.record
    for snapshot in JobObservations(CONFIG, TARGETS, [], job_spans(jobs, TARGETS)).ticks(first, END):
        replay.tick(snapshot, snapshot.collected_at)
    timeline.close_spans(replay.episodes)
    return timeline


def _limits(axes: Axes) -> tuple[datetime, datetime]:
    left, right = axes.get_xlim()
    return mdates.num2date(left), mdates.num2date(right)  # type: ignore[no-untyped-call]


def _not_held(axes: Axes) -> list[Rectangle]:
    return [p for p in axes.patches if isinstance(p, Rectangle) and p.get_label() == NOT_HELD]


def _all_inside(figure: Figure, axes: Axes) -> None:
    figure.canvas.draw()
    frame = axes.get_window_extent()
    for text in axes.texts:
        extent = text.get_window_extent()
        assert frame.x0 - 1 <= extent.x0 and extent.x1 <= frame.x1 + 1, text.get_text()


@pytest.mark.parametrize("tracked", [True, False])
@pytest.mark.parametrize(
    ("start", "held_from"),
    [
        (END - timedelta(days=14), END - timedelta(hours=2)),  # two hours of history in a fortnight's range
        (END - timedelta(hours=6), END - timedelta(hours=2)),
        (END - timedelta(hours=2), None),  # the history holds the whole range
    ],
)
def test_the_backtest_plot_is_drawn_over_the_history_it_holds(
    start: datetime, held_from: datetime | None, tracked: bool
) -> None:
    timeline = replayed(start, held_from, tracked=tracked)
    figure = timeline.figure()
    [axes] = figure.axes
    left, right = _limits(axes)
    held = held_from or start
    assert right >= END - timedelta(minutes=timeline.bucket_minutes)
    # The data fills the frame: at most a twentieth of it is the sliver before the history.
    assert (held - left) <= (right - left) * 0.05 + timedelta(minutes=1)
    hatched = _not_held(axes)
    texts = [t.get_text() for t in axes.texts]
    if held_from is None:
        assert hatched == [] and left == start and not [t for t in texts if "not held" in t]
    else:
        [patch] = hatched
        assert mdates.num2date(patch.get_x() + patch.get_width()) == held_from  # type: ignore[no-untyped-call]
        note = " ".join(axes.get_xlabel().splitlines()[-2:])
        assert f"holds data from {held_from:%Y-%m-%d %H:%M} UTC" in note and "not quiet" in note
        # before the history: unknown, never zero
        before = int((held_from - timeline.origin).total_seconds() // 60) // timeline.bucket_minutes
        for series in timeline.queue_time.values():
            assert all(math.isnan(v) for v in series[:before]) and not math.isnan(series[before + 1])
        if tracked:  # where the jobs' history begins is known before the first tick
            assert timeline.bucket_minutes == 1  # two hours held are drawn by the minute, whatever the range
    measured = "a tracked job" if tracked else "read from CloudWatch"
    assert measured in axes.get_xlabel() and "maxima" not in axes.get_xlabel()
    assert "r" in texts  # the last span's label is drawn...
    _all_inside(figure, axes)  # ...inside the frame


SLO = Slo(
    name="linux-fast", match=("linux.*",), exclude=(), teams=(), labels=(), objective=0.99, queue_time_under=120,
    window=28 * 86400, team="ci-infra", priority=Priority.P2, ticket_priority=Priority.P3, runbook_url=None,
    min_jobs=20, page_when_waiting_over=None, burn_alerts=(BurnAlert("fast", 14.4, 3600, 300, "page"),),
)  # fmt: skip


@pytest.mark.parametrize("hours", [2, 24 * 27])
def test_the_slo_plot_starts_where_its_counts_do(hours: int) -> None:
    window_start, _ = window_span(END, SLO.window)
    first = END - timedelta(hours=hours)
    counted = Tally()
    for n in range(hours * 12):
        counted.add(first + timedelta(minutes=5 * n), Counts(good=9, bad=1))
    chart = burn_down(SLO, counted, END, [], alerts_read=True)
    assert chart.points[0] == (first, 1.0)  # not a line at 100% from the window's start
    figure = burn_down_figure([chart])
    [axes] = figure.axes
    left, right = _limits(axes)
    assert right == END and (first - left) <= (right - left) * 0.05 + timedelta(minutes=1)
    [patch] = _not_held(axes)
    assert mdates.num2date(patch.get_x()) >= window_start  # type: ignore[no-untyped-call]
    assert "not from the 28-day window's start" in axes.get_xlabel()
    _all_inside(figure, axes)


def test_the_slo_plot_of_a_whole_window_has_nothing_to_mark() -> None:
    window_start, _ = window_span(END, SLO.window)
    counted = Tally()
    for n in range(28 * 24):
        counted.add(window_start + timedelta(hours=n), Counts(good=99, bad=1))
    [axes] = burn_down_figure([burn_down(SLO, counted, END, [], alerts_read=True)]).axes
    assert _not_held(axes) == [] and _limits(axes) == (window_start, END)


@pytest.mark.parametrize("rule", ["r", "a-rule-with-a-longer-name"])
def test_a_span_that_begins_at_the_last_minute_keeps_its_label_inside_the_frame(rule: str) -> None:
    timeline = replayed(END - timedelta(hours=2), None)
    timeline.spans.append((END - timedelta(minutes=1), END, rule))  # paged on the range's last tick
    figure = timeline.figure()
    [axes] = figure.axes
    assert rule in [t.get_text() for t in axes.texts]
    _all_inside(figure, axes)
