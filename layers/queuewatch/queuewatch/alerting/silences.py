"""Silences: who keeps which alerts from paging, until when, and whether one matches an alert."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from queuewatch.model.rules import HEALTH_RULE, selects

GITHUB_HOLD = "github-incident"
"""What an alert's history names as holding it back while `github_status.on_incident: hold` waits GitHub out."""
SUPERSEDED_BY = "superseded-by:"
"""Before a rule's name: what an alert's history names as holding back its page while that higher-priority
rule's page on the same runner type supersedes it."""


@dataclass(frozen=True)
class SilenceRecord:
    silence_id: str
    # Runner type globs, read as a rule's `match` reads them (rules.selects): `linux-x64` is the key in every
    # region, `linux-x64@us-west-2` one copy. Empty matches every runner type (`silence add --all`).
    matchers: tuple[str, ...]
    rule: str | None
    team: str | None
    starts_at: datetime
    ends_at: datetime
    author: str
    comment: str

    def active(self, now: datetime) -> bool:
        """Held within [start, end): a scheduled silence holds nothing back before its start."""
        return self.starts_at <= now < self.ends_at

    def scheduled(self, now: datetime) -> bool:
        return now < self.starts_at and not self.cancelled

    @property
    def cancelled(self) -> bool:
        """Ended before it started (expired while scheduled): it never held anything back."""
        return self.ends_at <= self.starts_at

    def covers(self, runner_type: str) -> bool:
        return not self.matchers or any(selects(m, runner_type) for m in self.matchers)

    def matches(self, rule: str, runner_type: str, team: str, now: datetime) -> bool:
        if not self.active(now):
            return False
        # queuewatch's own page (collection failing) is silenced only by a silence that names its rule:
        # one for "every alert" must never hide that the watcher itself is blind.
        if rule == HEALTH_RULE and self.rule != HEALTH_RULE:
            return False
        if self.rule and self.rule != rule:
            return False
        if self.team and self.team != team:
            return False
        return self.covers(runner_type)
