"""`--plot`: a PNG timeline of queue time per runner type, the rules' thresholds, and the firing spans shaded.

Under --compare both configs are drawn on one timeline: the queue times once (both replay the same
history), each config's thresholds and firing spans in its own colour, named by its file. A range with
nothing to draw says "no data".

Queue time is kept as the maximum per bucket (at most MAX_BUCKETS over the range) for
every runner type that queued at all, so memory stays bounded whatever the range; the
drawing shows the runner types that paged, or else those that queued longest.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from queuewatch.base.wording import moment
from queuewatch.config import Config
from queuewatch.evaluate.steps import Plan
from queuewatch.model.signals import SignalName
from queuewatch_cli.commands.backtest.replay import Episode
from queuewatch_cli.common.plotting import inside_frame, span_held

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_BUCKETS = 1500
MAX_LINES = 12
COLOURS = ("red", "blue")  # A's thresholds and firing spans, then B's


class Timeline:
    def __init__(
        self,
        config: Config,
        start: datetime,
        end: datetime,
        label: str = "config",
        *,
        tracked: bool = False,
        held_from: datetime | None = None,
    ) -> None:
        self.config = config
        self.label = label
        self.start = start
        self.end = end
        self.tracked = tracked  # the tracked jobs' waits, else the queues' CloudWatch history
        self.held_from = held_from if held_from is not None and held_from > start else None
        # The buckets cover the history held, not the range asked for: two hours held in a fortnight's range
        # are drawn minute by minute, not in a handful of 14-minute buckets.
        self.origin = self.held_from or start
        self.first_bucket: int | None = None  # the first with any datapoint: before it, nothing is held
        self.first_seen: datetime | None = None  # that datapoint's tick
        minutes = max(1, int((end - self.origin).total_seconds() // 60) + 1)
        self.bucket_minutes = max(1, math.ceil(minutes / MAX_BUCKETS))
        self.buckets = math.ceil(minutes / self.bucket_minutes)
        self.queue_time: dict[str, array[float]] = {}
        self.spans: list[tuple[datetime, datetime, str]] = []
        self.notes: list[str] = []  # the replay's notes (jobs this config does not watch): shown when it never fired

    def record(self, planned: Plan) -> None:
        snapshot = planned.context.snapshot
        if snapshot is None:
            return
        bucket = int((planned.context.now - self.origin).total_seconds() // 60) // self.bucket_minutes
        if not 0 <= bucket < self.buckets:
            return
        for runner_type in snapshot.runner_types:
            value = runner_type.value(SignalName.QUEUE_TIME)
            if value is not None and self.first_bucket is None:
                self.first_bucket, self.first_seen = bucket, planned.context.now
            if value is None or (value <= 0 and runner_type.name not in self.queue_time):
                continue  # a runner type that never queued costs no series
            series = self.queue_time.get(runner_type.name)
            if series is None:
                # Zero from the history's start until now (it had not queued); unknown before it, and after
                # until recorded.
                held = self.first_bucket if self.first_bucket is not None else bucket
                series = array("d", [math.nan]) * self.buckets
                series[held:bucket] = array("d", [0.0]) * (bucket - held)
                self.queue_time[runner_type.name] = series
            if math.isnan(series[bucket]) or value > series[bucket]:
                series[bucket] = value

    def close_spans(self, episodes: Sequence[Episode]) -> None:
        self.spans = [(e.started_at, e.resolved_at or self.end, e.rule) for e in episodes]
        self._paged = {name for e in episodes for name in e.runner_types}

    @property
    def history_from(self) -> datetime | None:
        """Where the replayed history begins: the jobs table's first job, else the first datapoint."""
        return self.held_from or self.first_seen

    def shown(self) -> list[str]:
        paged = sorted(name for name in getattr(self, "_paged", set()) if name in self.queue_time)
        if paged:
            return paged[:MAX_LINES]

        def peak(name: str) -> float:
            return max((v for v in self.queue_time[name] if not math.isnan(v)), default=0.0)

        return sorted(self.queue_time, key=lambda name: (-peak(name), name))[:MAX_LINES]

    def draw(self, path: str, other: Timeline | None = None) -> None:
        """This config's timeline as a PNG; with `other` (--compare), B's thresholds and firing spans beside A's."""
        import matplotlib.pyplot as plt

        figure = self.figure(other)
        figure.savefig(path)
        plt.close(figure)

    def figure(self, other: Timeline | None = None) -> Figure:
        try:
            import matplotlib
        except ImportError:
            from queuewatch_cli.common.plotting import install_hint

            raise SystemExit(f"--plot needs matplotlib: {install_hint()}") from None
        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.dates as mdates
        import matplotlib.pyplot as plt

        times = [self.origin + timedelta(minutes=i * self.bucket_minutes) for i in range(self.buckets)]
        figure, axes = plt.subplots(figsize=(12, 5), dpi=100)
        shown = self.shown() or (other.shown() if other is not None else [])
        source = self if self.shown() or other is None else other
        for name in shown:
            minutes = [v / 60 for v in source.queue_time[name]]
            axes.plot(times, minutes, label=name, linewidth=1.2)  # type: ignore[arg-type]
        timelines = [self] if other is None else [self, other]
        for which, (timeline, colour) in enumerate(zip(timelines, COLOURS, strict=False)):
            named = f"{'AB'[which]}: " if other is not None else ""  # the files are named once, in the footnote
            thresholds = [r for r in timeline.config.resolved_rules if r.queue_time_threshold is not None]
            for rule in thresholds:
                assert rule.queue_time_threshold is not None
                level = rule.queue_time_threshold / 60
                style = "--" if which == 0 else ":"
                axes.axhline(level, linestyle=style, color=colour if other is not None else "grey", linewidth=0.8)
                axes.annotate(
                    f"{named}{rule.name}: queue time > {level:g}m",
                    (0.005 + 0.5 * which, level),
                    xycoords=("axes fraction", "data"),
                    fontsize=7,
                    color=colour if other is not None else "grey",
                    va="bottom",
                )
            for index, (began, ended, rule_name) in enumerate(timeline.spans):
                label = (f"{named}firing" if other is not None else "firing") if index == 0 else None
                axes.axvspan(began, ended, color=colour, alpha=0.15, label=label)  # type: ignore[arg-type]
                axes.annotate(
                    f"{named}{rule_name}", (max(began, self.origin), 0), fontsize=7, color=colour, rotation=90,
                    va="bottom",
                )  # fmt: skip
            if other is not None and not timeline.spans:
                # A threshold crossed with no firing span drawn: say why, or it reads as a replay that failed.
                said = f"{named}no page" + (f": {timeline.notes[0]}" if timeline.notes else "")
                axes.text(0.005 + 0.5 * which, 0.97, said, transform=axes.transAxes, fontsize=7, color=colour, va="top")
        drawn = bool(shown) or any(t.spans for t in timelines)
        if not drawn:
            axes.text(0.5, 0.5, "no data", transform=axes.transAxes, ha="center", va="center", fontsize=14)
        axes.set_ylabel("queue time (minutes)")
        axes.set_xlabel(f"UTC; each point: {self.measured()}, in its {self.bucket_minutes}-minute bucket")
        last = times[-1] if len(times) > 1 else times[0] + timedelta(minutes=1)
        span_held(axes, self.start, self.history_from, last, f"--from {moment(self.start)}")
        axes.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d %H:%M", tz=UTC))  # type: ignore[no-untyped-call]
        title = f"queuewatch backtest {moment(self.start)} to {moment(self.end)}"
        if other is not None:
            title += ": A against B"
            # Whole paths clip in a title or a legend: named once, below the plot.
            figure.text(0.01, 0.005, f"A: {self.label}   B: {other.label}", fontsize=7, va="bottom", wrap=True)
        axes.set_title(title)
        axes.grid(alpha=0.3)
        if drawn:
            axes.legend(loc="best", fontsize=8)
        figure.autofmt_xdate()
        figure.tight_layout(rect=(0, 0.03, 1, 1) if other is not None else (0, 0, 1, 1))
        inside_frame(figure, axes)
        return figure

    def measured(self) -> str:
        """What each point is, by where the history came from: never "maxima" of a metric it did not read."""
        if self.tracked:
            return "the longest a tracked job had waited"
        return "the highest queue time read from CloudWatch (the queue's oldest request, or the config's metric)"
