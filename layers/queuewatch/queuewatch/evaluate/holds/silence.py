"""Held back by a silence someone added (`queuewatch silence add`)."""

from __future__ import annotations

from queuewatch.evaluate.holds.inputs import HoldInputs


def holding(inputs: HoldInputs, rule: str, instance: str, team: str, before: tuple[str, ...]) -> list[str]:
    return [s.silence_id for s in inputs.silences if s.matches(rule, instance, team, inputs.now)]
