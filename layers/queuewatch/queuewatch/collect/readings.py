"""Turning answered series into readings: the fresh value, and the history the triage compares it with."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.adapters.cloudwatch import MetricSeries
from queuewatch.adapters.sqs import QueueDepth
from queuewatch.base.durations import format_duration
from queuewatch.collect.queries import MetricSlot
from queuewatch.collect.queues import WatchedQueue
from queuewatch.model.signals import COUNT_SIGNALS, RESOURCE_SIGNALS, SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

LEVEL_HISTORY_SIGNALS = frozenset(
    {SignalName.QUEUE_SIZE, SignalName.QUEUE_TIME, SignalName.JOB_DURATION, *RESOURCE_SIGNALS}
)
"""Signals whose level over the triage window (growing, or above its baseline) the triage reads."""


@dataclass(frozen=True)
class Spans:
    """The tick's time spans: the value must be fresher than lookback; the triage looks back further."""

    now: datetime
    lookback: int
    window: int
    baseline: int

    @property
    def fetched(self) -> int:
        return max(self.lookback, self.window + self.baseline)


def assemble(
    target: WatchedQueue,
    depth: QueueDepth | str | None,
    series: list[tuple[MetricSeries, MetricSlot]],
    spans: Spans,
) -> RunnerTypeSnapshot:
    signals: dict[SignalName, Reading] = {}
    if depth is not None:
        signals[SignalName.QUEUE_SIZE] = (
            Reading.of(depth.total)
            if isinstance(depth, QueueDepth)
            else Reading.missing(f"GetQueueAttributes failed: {depth}")
        )
    grouped: dict[SignalName, list[tuple[MetricSeries, MetricSlot]]] = defaultdict(list)
    for metric, slot in series:
        grouped[slot.signal].append((metric, slot))
    for signal, answers in grouped.items():
        history = [(m, s) for m, s in answers if s.depth_history]
        own = [(m, s) for m, s in answers if not s.depth_history]
        if signal == SignalName.EC2_EXCEPTIONS:
            signals[signal] = _exceptions_reading(own, spans)
        elif signal == SignalName.GITHUB_APP_RATE_LIMIT:
            signals[signal] = _apps_reading(own, spans)
        elif own:
            metric, slot = own[0]
            signals[signal] = _reading(metric, slot, spans)
        if history and signal in signals:
            signals[signal] = _with_level_history(signals[signal], history[0][0], 1, spans)
    # An empty queue has no oldest message: CloudWatch may publish nothing, which is not a fault.
    # Its AWS/SQS age is not even asked for (see metric_requests).
    queue_time = signals.get(SignalName.QUEUE_TIME)
    age_unknown = SignalName.QUEUE_TIME in target.signals and (queue_time is None or queue_time.value is None)
    age_failed = any(m.error for m, _ in grouped.get(SignalName.QUEUE_TIME, []))
    empty = signals.get(SignalName.QUEUE_SIZE, Reading()).value == 0
    if age_unknown and empty and not age_failed:
        signals[SignalName.QUEUE_TIME] = Reading.of(0)
    return RunnerTypeSnapshot(
        name=target.runner_type,
        region=target.region,
        queue_name=target.queue_name,
        account_id=target.account_id if target.foreign else None,
        team=target.team,
        signals=signals,
    )


def _fresh_value(metric: MetricSeries, slot: MetricSlot, spans: Spans) -> Reading:
    """The newest datapoint if it is fresh enough, else why there is none."""
    if metric.error:
        return Reading.missing(metric.error)
    if metric.points:
        stamp, value = metric.points[0]  # newest first
        age = (spans.now - stamp).total_seconds()
        if age <= spans.lookback:
            return Reading.of(value * slot.seconds_per_unit, max(0.0, age))
    if slot.missing_as_zero:
        return Reading.of(0)
    if metric.points:
        age = (spans.now - metric.points[0][0]).total_seconds()
        return Reading.missing(
            f"stale: the last datapoint is {format_duration(age)} old, "
            f"beyond metric_lookback {format_duration(spans.lookback)}"
        )
    return Reading.missing(f"no datapoints in the last {format_duration(spans.fetched)}")


def _reading(metric: MetricSeries, slot: MetricSlot, spans: Spans) -> Reading:
    reading = _fresh_value(metric, slot, spans)
    if reading.value is None:
        return reading
    if slot.fleet_wide:
        reading = reading.model_copy(update={"fleet_wide": True})
    if slot.signal in COUNT_SIGNALS:
        window, baseline = _sums(metric, spans)
        return reading.model_copy(
            update={
                "window_sum": _round(window * slot.seconds_per_unit),
                "baseline_sum": _round(baseline * slot.seconds_per_unit),
            }
        )
    if slot.signal in LEVEL_HISTORY_SIGNALS:
        return _with_level_history(reading, metric, slot.seconds_per_unit, spans)
    return reading


def _with_level_history(reading: Reading, metric: MetricSeries, per_unit: int, spans: Spans) -> Reading:
    if reading.value is None or metric.error:
        return reading
    cutoff = spans.now - timedelta(seconds=spans.window)
    recent = [value for stamp, value in metric.points if stamp >= cutoff]  # newest first
    earlier = [value for stamp, value in metric.points if stamp < cutoff]
    update: dict[str, float] = {}
    if recent:
        update["window_first"] = _round(recent[-1] * per_unit)
        update["window_last"] = _round(recent[0] * per_unit)
    if earlier:
        update["baseline_mean"] = _round(sum(earlier) / len(earlier) * per_unit)
    return reading.model_copy(update=update)


def _sums(metric: MetricSeries, spans: Spans) -> tuple[float, float]:
    """The total over the window, and the usual total per window over the baseline before it."""
    cutoff = spans.now - timedelta(seconds=spans.window)
    start = cutoff - timedelta(seconds=spans.baseline)
    window = sum(value for stamp, value in metric.points if stamp >= cutoff)
    before = sum(value for stamp, value in metric.points if start <= stamp < cutoff)
    return window, before * spans.window / spans.baseline


def _exceptions_reading(answers: list[tuple[MetricSeries, MetricSlot]], spans: Spans) -> Reading:
    """RunInstances exceptions by name: the window's total per name, read from one query per name."""
    errors = [m.error for m, _ in answers if m.error]
    if errors and len(errors) == len(answers):
        return Reading.missing(errors[0])
    by_name: dict[str, float] = {}
    baseline = 0.0
    seen_any = False
    for metric, slot in answers:
        if metric.error or slot.exception is None:
            continue
        seen_any = seen_any or bool(metric.points)
        window, before = _sums(metric, spans)
        baseline += before
        if window:
            by_name[slot.exception] = _round(window)
    if not seen_any and not answers[0][1].missing_as_zero:
        return Reading.missing(f"no datapoints in the last {format_duration(spans.fetched)}")
    total = sum(by_name.values())
    return Reading(
        value=total,
        age_seconds=0.0,
        window_sum=_round(total),
        baseline_sum=_round(baseline),
        by_name=by_name,
        fleet_wide=True if answers[0][1].fleet_wide else None,
    )


def _apps_reading(answers: list[tuple[MetricSeries, MetricSlot]], spans: Spans) -> Reading:
    """Each GitHub App's requests left, by app id; the value is the lowest. An app not read makes the whole
    reading missing, with that app named: a spent app must never hide behind a healthy one's figure."""
    by_app: dict[str, float] = {}
    unread: list[str] = []
    for metric, slot in answers:
        reading = _fresh_value(metric, slot, spans)
        if reading.value is None:
            unread.append(f"app {slot.app}: {reading.error}")
        else:
            by_app[slot.app or ""] = _round(reading.value)
    if unread:
        return Reading.missing("; ".join(unread))
    fleet = True if answers and answers[0][1].fleet_wide else None
    return Reading(value=min(by_app.values()), age_seconds=0.0, by_name=by_app, fleet_wide=fleet)


def _round(value: float) -> float:
    return round(value, 2)
