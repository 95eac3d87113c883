"""What the holds read: the silences, the windows open, GitHub's status and what the config does with it (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.github_status import GitHubStatusSettings
from queuewatch.config.maintenance import MaintenanceWindow
from queuewatch.model.github_status import GitHubStatus


@dataclass(frozen=True)
class HoldInputs:
    now: datetime
    silences: tuple[SilenceRecord, ...] = ()
    windows_open: tuple[MaintenanceWindow, ...] = ()  # the config's maintenance windows open at `now`
    github: GitHubStatus | None = None  # GitHub's status page as read this tick; None: not read
    github_settings: GitHubStatusSettings | None = None  # the config's `github_status`
    github_held: bool = False  # the last known read held alerts back: GitHub was in an incident then
