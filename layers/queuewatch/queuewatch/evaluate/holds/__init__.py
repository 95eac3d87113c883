"""Is this alert held back, and why: the one answer the plan, `status`, `history --alert` and the transition log
read (pure).

As in Alertmanager's pipeline, each hold is a small stage with one question, asked in order: inhibition first
(inhibit.py: does a higher-priority page of the same problem already page it?), then the holds someone set
(silence.py: a silence; window.py: an open maintenance window; github.py: GitHub's incident waited out); what
no stage holds back pages. A new kind of hold is one file here and one entry in HOLDS. No hold opens or closes
an episode: a held alert keeps its episode, and a released one resumes it (alert_state.decide_group).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from queuewatch.alerting.silences import GITHUB_HOLD, SUPERSEDED_BY, SilenceRecord
from queuewatch.evaluate.holds import github, silence, window
from queuewatch.evaluate.holds.inputs import HoldInputs

HELD_LISTED = 10  # holders kept on an instance: the history names the first ten

Hold = Callable[[HoldInputs, str, str, str, tuple[str, ...]], list[str]]
"""A hold: (inputs, rule, instance, team, what held it before this tick) -> the names of what holds it now."""

HOLDS: tuple[Hold, ...] = (silence.holding, window.holding, github.holding)
"""The holds someone set, after inhibition: each names what holds the alert back, as its history says it."""


def held_by(inputs: HoldInputs, rule: str, instance: str, team: str, before: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What holds back the alert of `rule` on `instance` now: silence ids, `window:<name>`, `github-incident`;
    empty when nothing does. `before`: what held it on the last tick, for a hold whose input is unknown now."""
    found = [name for hold in HOLDS for name in hold(inputs, rule, instance, team, before)]
    return tuple(sorted(found)[:HELD_LISTED])


def described(name: str, silences: Mapping[str, SilenceRecord]) -> str:
    """One hold as the alert's history says it: 'silence s-ami by bob: AMI rollout', 'window patching'; a silence
    gone from the table by its id alone."""
    if name.startswith(window.PREFIX):
        return f"window {name.removeprefix(window.PREFIX)}"
    if name.startswith(SUPERSEDED_BY):
        return f"the higher-priority page of {name.removeprefix(SUPERSEDED_BY)}"
    if name == GITHUB_HOLD:
        return "GitHub's incident (github_status.on_incident: hold)"
    if name in silences:
        return f"silence {name} by {silences[name].author}: {silences[name].comment}"
    return f"silence {name}"


__all__ = ["HELD_LISTED", "HOLDS", "Hold", "HoldInputs", "described", "held_by"]
