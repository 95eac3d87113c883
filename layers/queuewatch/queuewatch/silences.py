"""Silences: who keeps which alerts from paging, until when, and whether one matches an alert."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime

from queuewatch.rules import HEALTH_RULE


@dataclass(frozen=True)
class SilenceRecord:
    silence_id: str
    matchers: tuple[str, ...]  # runner type globs; empty matches every runner type (`silence add --all`)
    rule: str | None
    team: str | None
    starts_at: datetime
    ends_at: datetime
    author: str
    comment: str

    def active(self, now: datetime) -> bool:
        return self.starts_at <= now < self.ends_at

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
        return not self.matchers or any(fnmatch.fnmatchcase(runner_type, m) for m in self.matchers)
