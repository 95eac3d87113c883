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
