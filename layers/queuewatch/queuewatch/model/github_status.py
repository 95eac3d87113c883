"""GitHub's own status, from the Statuspage API behind githubstatus.com: is GitHub Actions itself in trouble?

When it is, every fleet queues at once and the autoscaler is not to blame; a page says so first. Pure: the
adapter (adapters/github_status.py) fetches the document, `parse_summary` reads it. A status that could not be
read is unknown, never an all-clear and never a reason to hold a page back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import AwareDatetime, Field

from queuewatch.base.frozen import FrozenModel

ACTIONS = "Actions"  # the component's name on githubstatus.com: found by it only when its id is not on the page
ACTIONS_ID = "br0l2tvcx85d"  # the Actions component's id on githubstatus.com, which a rename keeps
STATUS_PAGE = "https://www.githubstatus.com"
ComponentStatus = Literal["operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance"]
MAINTENANCE_UNDER_WAY = ("in_progress", "verifying")  # a scheduled maintenance's states while it is on
# How each state of an incident (Statuspage's incident statuses) is said on the page.
INCIDENT_WORDS = {
    "investigating": "GitHub is investigating an Actions incident",
    "identified": "GitHub has identified the cause of an Actions incident",
    "monitoring": "GitHub has fixed an Actions incident and is monitoring it",
}


class GitHubIncident(FrozenModel):
    """What GitHub's status page says is wrong with Actions: an unresolved incident that names the component, a
    scheduled maintenance of it under way, or, with neither posted, the component's own state."""

    name: str
    status: str = Field(description="investigating, identified, monitoring, ...; in_progress or verifying")
    impact: str = Field(description="none, minor, major, critical, maintenance")
    url: str = Field(description="the incident's page (its shortlink)")
    started_at: AwareDatetime | None = None
    kind: Literal["incident", "maintenance", "component"] = Field(
        default="incident",
        description="an incident, a scheduled maintenance under way, or the component's state with no incident",
    )
    until: AwareDatetime | None = Field(default=None, description="a maintenance's scheduled end")

    @property
    def sentence(self) -> str:
        """The page's first sentence, in the terms of what GitHub posted."""
        if self.kind == "maintenance":
            until = f", scheduled until {self.until:%Y-%m-%d %H:%M} UTC" if self.until else ""
            return f"GitHub Actions is in scheduled maintenance: {self.name}{until} ({self.url})"
        if self.kind == "component":
            state = self.status.replace("_", " ")
            return f"GitHub's status page shows Actions {state}, no incident posted ({self.url})"
        said = INCIDENT_WORDS.get(self.status, f"GitHub Actions incident ({self.status})")
        return f"{said}: {self.name} ({self.url})"


class GitHubStatus(FrozenModel):
    """What GitHub's status page said about Actions when the evaluator asked."""

    checked_at: AwareDatetime
    actions: ComponentStatus | Literal["unknown"] = Field(description="the Actions component's status")
    incidents: list[GitHubIncident] = Field(default_factory=list)
    error: str | None = Field(default=None, description="why the status is unknown")
    note: str | None = Field(default=None, description="a caveat on a status read: the component found by name")

    @property
    def degraded(self) -> bool:
        """Known to be in trouble: an Actions incident open, or the component not operational."""
        return bool(self.incidents) or self.actions not in ("operational", "unknown")

    @property
    def first(self) -> GitHubIncident:
        """The incident a page names: the open one first reported, else the component's state on the page."""
        if self.incidents:
            return min(self.incidents, key=lambda i: (i.started_at is None, i.started_at))
        return GitHubIncident(name=ACTIONS, status=self.actions, impact="none", url=STATUS_PAGE, kind="component")

    @classmethod
    def unknown(cls, at: datetime, error: str) -> GitHubStatus:
        return cls(checked_at=at, actions="unknown", error=error)


def parse_summary(document: Any, at: datetime) -> GitHubStatus:
    """GitHub's /api/v2/summary.json (Statuspage v2) -> the Actions component's status, its open incidents and its
    scheduled maintenances under way. The component is found by its id; by its name only where the id is not on
    the page, and the status says so. Raises ValueError when the document is not that shape."""
    if not isinstance(document, dict) or not isinstance(document.get("components"), list):
        raise ValueError("expected a Statuspage summary: a JSON object with 'components' and 'incidents'")
    components = [c for c in document["components"] if isinstance(c, dict)]
    actions = next((c for c in components if c.get("id") == ACTIONS_ID), None)
    note = None
    if actions is None:
        actions = next((c for c in components if c.get("name") == ACTIONS), None)
        if actions is None:
            raise ValueError(f"the summary has no component {ACTIONS_ID!r} (GitHub Actions), nor one named {ACTIONS!r}")
        note = f"the Actions component was found by its name: its id {ACTIONS_ID} is not on the page"
    actions_id = actions.get("id")
    incidents = [
        _incident(incident, "incident")
        for incident in _listed(document, "incidents")
        if isinstance(incident, dict)
        and incident.get("status") not in ("resolved", "postmortem")
        and _names_actions(incident, actions_id)
    ] + [
        _incident(maintenance, "maintenance")
        for maintenance in _listed(document, "scheduled_maintenances")
        if isinstance(maintenance, dict)
        and maintenance.get("status") in MAINTENANCE_UNDER_WAY
        and _names_actions(maintenance, actions_id)
    ]
    return GitHubStatus(checked_at=at, actions=actions.get("status"), incidents=incidents, note=note)


def _incident(posted: dict[str, Any], kind: Literal["incident", "maintenance"]) -> GitHubIncident:
    maintenance = kind == "maintenance"
    started = posted.get("started_at") or (posted.get("scheduled_for") if maintenance else None)
    return GitHubIncident(
        name=str(posted.get("name") or ("a maintenance" if maintenance else "an incident")),
        status=str(posted.get("status") or "unknown"),
        impact=str(posted.get("impact") or ("maintenance" if maintenance else "none")),
        url=str(posted.get("shortlink") or STATUS_PAGE),
        started_at=started or posted.get("created_at"),
        kind=kind,
        until=posted.get("scheduled_until") if maintenance else None,
    )


def _names_actions(incident: dict[str, Any], actions_id: object) -> bool:
    """The incident (or maintenance) lists the Actions component, or one of its updates changed it: by the
    component's id (`code` in an update), or by its name where the page gives the component no id."""
    named = [c for c in _listed(incident, "components") if isinstance(c, dict)]
    for update in _listed(incident, "incident_updates"):
        if isinstance(update, dict):
            named += [c for c in _listed(update, "affected_components") if isinstance(c, dict)]
    if not actions_id:
        return any(c.get("name") == ACTIONS for c in named)
    return any(actions_id in (c.get("id"), c.get("code")) for c in named)


def _listed(document: dict[str, Any], key: str) -> list[Any]:
    """The list under `key` (none when absent). Anything else is not a Statuspage document: a ValueError, which
    the adapter turns into an unknown status, where iterating it would raise out of the evaluator's tick."""
    value = document.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"expected a list under {key!r}, found {type(value).__name__}")
    return value
