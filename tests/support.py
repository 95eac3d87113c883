"""Builders the tests share: snapshots to order, and the fixed clock they start from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from queuewatch.config import SignalName
from queuewatch.snapshot import Reading, RunnerTypeSnapshot, Snapshot

T0 = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)


def minutes(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def runner_type(
    name: str,
    queue_size: float | None = 0,
    queue_time: float | None = 0,
    *,
    region: str = "us-east-1",
    team: str | None = None,
    missing: str = "no datapoints in the last 10m",
) -> RunnerTypeSnapshot:
    signals = {
        SignalName.QUEUE_SIZE: Reading.of(queue_size) if queue_size is not None else Reading.missing(missing),
        SignalName.QUEUE_TIME: Reading.of(queue_time) if queue_time is not None else Reading.missing(missing),
    }
    queue = "gh-ci-" + name.replace(".", "-") + "-queued-builds"
    return RunnerTypeSnapshot(name=name, region=region, queue_name=queue, team=team, signals=signals)


def snapshot(at: datetime, *runner_types: RunnerTypeSnapshot) -> Snapshot:
    return Snapshot(snapshot_id=f"snap-{at:%H%M%S}", collected_at=at, runner_types=list(runner_types))


def with_signals(base: RunnerTypeSnapshot, **readings: Reading) -> RunnerTypeSnapshot:
    """The runner type with more signals: keyword names are SignalName values."""
    signals = dict(base.signals)
    signals.update({SignalName(name): reading for name, reading in readings.items()})
    return base.model_copy(update={"signals": signals})


def count(window_sum: float, usual: float, *, fleet_wide: bool | None = None) -> Reading:
    """A count signal: its total over the triage window and its usual total per window."""
    return Reading(
        value=window_sum / 15, age_seconds=60, window_sum=window_sum, baseline_sum=usual, fleet_wide=fleet_wide
    )


def level(value: float, *, first: float | None = None, last: float | None = None, mean: float | None = None) -> Reading:
    """A level signal: its latest value, where it stood over the window, and its baseline mean."""
    return Reading(value=value, age_seconds=60, window_first=first, window_last=last, baseline_mean=mean)
