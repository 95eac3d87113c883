"""Held back while GitHub Actions has an incident, with `github_status.on_incident: hold`: the team waits it out,
and its end pages what still fires."""

from __future__ import annotations

from queuewatch.alerting.silences import GITHUB_HOLD
from queuewatch.evaluate.holds.inputs import HoldInputs
from queuewatch.model.rules import HEALTH_RULE


def holding(inputs: HoldInputs, rule: str, instance: str, team: str, before: tuple[str, ...]) -> list[str]:
    settings = inputs.github_settings
    if settings is None or settings.on_incident != "hold" or rule == HEALTH_RULE:
        return []
    github = inputs.github
    if github is None:
        return []  # the stack reads no status page
    if github.actions == "unknown":
        # A read that failed says nothing: the hold stays as the last known read left it, never lifted for a
        # tick (which would page the held alert) nor set by a guess.
        return [GITHUB_HOLD] if inputs.github_held or GITHUB_HOLD in before else []
    return [GITHUB_HOLD] if github.degraded else []
