"""What a page does while GitHub Actions itself is in trouble (the evaluator reads GitHub's status page only
where the stack's GitHubStatus parameter turns it on)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from queuewatch.base.frozen import FrozenModel
from queuewatch.model.rules import Priority


class GitHubStatusSettings(FrozenModel):
    on_incident: Literal["note", "hold", "lower"] = Field(
        default="note",
        description="note: the page says so first; hold: pages wait, as under a silence, until GitHub recovers; "
        "lower: pages go out at `lower_to`",
    )
    lower_to: Priority = Field(default=Priority.P3, description="the priority of a page during a GitHub incident")
