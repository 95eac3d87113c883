"""Held back by a maintenance window of the config, while it is open: `window:<name>`."""

from __future__ import annotations

from queuewatch.evaluate.holds.inputs import HoldInputs

PREFIX = "window:"


def holding(inputs: HoldInputs, rule: str, instance: str, team: str, before: tuple[str, ...]) -> list[str]:
    return [f"{PREFIX}{w.name}" for w in inputs.windows_open if w.holds_back(rule, instance, team)]
