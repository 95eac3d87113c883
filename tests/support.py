"""Builders the tests share: snapshots to order, and the fixed clock they start from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from queuewatch.config import SignalName
from queuewatch.localrun import REPO_ROOT
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


class CloudFormationLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags (!Ref, !GetAtt, !Sub, ...) read as their long form."""


def _construct_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        assert isinstance(node, yaml.MappingNode)
        value = loader.construct_mapping(node, deep=True)
    if suffix == "Ref":
        return {"Ref": value}
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{suffix}": value}


CloudFormationLoader.add_multi_constructor("!", _construct_tag)


def load_template() -> dict[str, Any]:
    """template.yaml as CloudFormation reads it."""
    text = (REPO_ROOT / "template.yaml").read_text(encoding="utf-8")
    return yaml.load(text, Loader=CloudFormationLoader)  # type: ignore[no-any-return]
