"""A tick's work grows with the fleet, not with its square: what every instance is judged on is built once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from support import T0, runner_type, snapshot

from queuewatch.alerting.alert_state import StoredState
from queuewatch.config.load import parse_config
from queuewatch.evaluate.holds import HoldInputs
from queuewatch.evaluate.plan import plan

FLEET = 60


def config_text(names: list[str]) -> str:
    pools = "\n".join(f"  - {{name: {name}, queue: {{name: q-{name}}}}}" for name in names)
    return (
        "version: 1\ndefaults: {region: us-east-1, rule: {team: t}}\nrunner_types:\n"
        + pools
        + "\nrules:\n  - {name: queueing, thresholds: {queue_size: 1}}\n"
    )


def test_the_hold_inputs_are_built_once_a_tick_whatever_the_fleet(monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"pool-{index}" for index in range(FLEET)]
    config = parse_config(config_text(names), source="fleet.yaml")
    observation = snapshot(T0, *(runner_type(name, 5, 600) for name in names))
    first = plan(config, StoredState(), observation, T0)
    assert len(first.instances) == FLEET, "every runner type breaches, so each is judged on its holds"
    stored = StoredState(applied_at=T0, instances=dict(first.instances))

    built: list[object] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(None)
        return HoldInputs(*args, **kwargs)

    monkeypatch.setattr("queuewatch.evaluate.context.HoldInputs", counted)
    later = T0 + timedelta(minutes=1)
    again = plan(config, stored, snapshot(later, *(runner_type(name, 5, 660) for name in names)), later)
    assert len(again.instances) == FLEET
    # Built per instance, each build reading every stored instance, a tick at 5,000 runner types was 25 million reads.
    assert len(built) == 1
