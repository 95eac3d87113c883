"""GitHub's own status, from the Statuspage API behind githubstatus.com: is GitHub Actions itself in trouble?

When it is, every fleet queues at once and the autoscaler is not to blame; a page says so first. Pure: the
adapter (adapters/github_status.py) fetches the document, `parse_summary` reads it. A status that could not be
read is unknown, never an all-clear and never a reason to hold a page back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, Field

from queuewatch.frozen import FrozenModel

ACTIONS = "Actions"  # the component's name on githubstatus.com
STATUS_PAGE = "https://www.githubstatus.com"
ComponentStatus = Literal["operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance"]


class GitHubIncident(FrozenModel):
    """An unresolved incident on GitHub's status page that names the Actions component."""

    name: str
    status: str = Field(description="investigating, identified, monitoring, ...")
    impact: str = Field(description="none, minor, major, critical")
    url: str = Field(description="the incident's page (its shortlink)")
    started_at: AwareDatetime | None = None


class GitHubStatus(FrozenModel):
    """What GitHub's status page said about Actions when the evaluator asked."""

    checked_at: AwareDatetime
    actions: ComponentStatus | Literal["unknown"] = Field(description="the Actions component's status")
    incidents: list[GitHubIncident] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why the status is unknown")

    @property
    def degraded(self) -> bool:
        """Known to be in trouble: an Actions incident open, or the component not operational."""
        return bool(self.incidents) or self.actions not in ("operational", "unknown")

    @property
    def first(self) -> GitHubIncident:
        """The incident a page names: the open one first reported, else the component's state on the page."""
        if self.incidents:
            return min(self.incidents, key=lambda i: (i.started_at is None, i.started_at))
        said = self.actions.replace("_", " ")
        return GitHubIncident(name=f"GitHub Actions: {said}", status=self.actions, impact="none", url=STATUS_PAGE)

    @classmethod
    def unknown(cls, at: datetime, error: str) -> GitHubStatus:
        return cls(checked_at=at, actions="unknown", error=error)


def parse_summary(document: Any, at: datetime) -> GitHubStatus:
    """GitHub's /api/v2/summary.json (Statuspage v2) -> the Actions component's status and its open incidents.
    Raises ValueError when the document is not that shape."""
    if not isinstance(document, dict) or not isinstance(document.get("components"), list):
        raise ValueError("expected a Statuspage summary: a JSON object with 'components' and 'incidents'")
    actions = next((c for c in document["components"] if isinstance(c, dict) and c.get("name") == ACTIONS), None)
    if actions is None:
        raise ValueError(f"the summary has no {ACTIONS!r} component")
    incidents = [
        GitHubIncident(
            name=str(incident.get("name") or "an incident"),
            status=str(incident.get("status") or "unknown"),
            impact=str(incident.get("impact") or "none"),
            url=str(incident.get("shortlink") or STATUS_PAGE),
            started_at=incident.get("started_at") or incident.get("created_at"),
        )
        for incident in _listed(document, "incidents")
        if isinstance(incident, dict)
        and incident.get("status") not in ("resolved", "postmortem")
        and _names_actions(incident)
    ]
    return GitHubStatus(checked_at=at, actions=actions.get("status"), incidents=incidents)


def _names_actions(incident: dict[str, Any]) -> bool:
    """The incident lists the Actions component, or one of its updates changed it."""
    named = [c.get("name") for c in _listed(incident, "components") if isinstance(c, dict)]
    for update in _listed(incident, "incident_updates"):
        if isinstance(update, dict):
            named += [c.get("name") for c in _listed(update, "affected_components") if isinstance(c, dict)]
    return ACTIONS in named


def _listed(document: dict[str, Any], key: str) -> list[Any]:
    """The list under `key` (none when absent). Anything else is not a Statuspage document: a ValueError, which
    the adapter turns into an unknown status, where iterating it would raise out of the evaluator's tick."""
    value = document.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"expected a list under {key!r}, found {type(value).__name__}")
    return value
