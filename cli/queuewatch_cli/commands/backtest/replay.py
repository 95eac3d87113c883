"""Replaying observations through the evaluator's own plan, with the stored state kept in memory.

Each tick calls queuewatch.evaluate.plan.plan, the function the live evaluator calls,
and applies the plan to an in-memory StoredState the way the evaluate stage applies
it to the state table: instance changes put or delete, each group's record put, and a
due page published at once and its outbox cleared (a finished group's item deleted).
Nothing is rendered or sent; every due page is recorded as a PageEvent instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from queuewatch.alerting.alert_state import GroupRecord, InstanceKey, PageKind, StoredState
from queuewatch.config import Config
from queuewatch.evaluate.plan import plan
from queuewatch.evaluate.steps import GroupPlan, Plan
from queuewatch.model.rules import Verdict
from queuewatch.model.snapshot import Observation


@dataclass(frozen=True)
class PageEvent:
    """One page the evaluator would have published."""

    at: datetime
    rule: str
    group: str
    kind: PageKind
    sequence: int
    priority: str
    runner_types: tuple[str, ...]


@dataclass
class Episode:
    """One alert from its first page to its resolve: what the report lists as 'a page'."""

    rule: str
    group: str
    priority: str
    started_at: datetime
    first_breach_at: datetime
    resolved_at: datetime | None = None
    runner_types: set[str] = field(default_factory=set)
    notifications: int = 0  # every page of the episode: new, updates, repeats, the resolve
    peak_queue_size: float | None = None
    peak_queue_time: float | None = None

    @property
    def breach_to_page_seconds(self) -> float:
        return (self.started_at - self.first_breach_at).total_seconds()

    def firing_seconds(self, until: datetime) -> float:
        return ((self.resolved_at or until) - self.started_at).total_seconds()


def apply(state: StoredState, planned: Plan) -> None:
    """Advance the stored state as the evaluate stage's writes would (stage.py, delivery.py), minus I/O."""
    if not planned.changed:
        return
    state.applied_at = planned.context.now  # advance_cursor
    for change in planned.instance_changes:
        if change.new is None:
            state.instances.pop(change.key, None)  # delete_instance
        else:
            expected = change.previous.version if change.previous else 0
            state.instances[change.key] = replace(change.new, version=expected + 1)  # put_instance
    for group in planned.groups:
        stored = _stored_group(group)
        if stored is None:
            state.groups.pop(group.record.key, None)
        else:
            state.groups[group.record.key] = stored


def _stored_group(group: GroupPlan) -> GroupRecord | None:
    """put_group writes version + 1; a due page is then published (Delivery.send): the outbox is cleared
    (version + 2), or, for a group that is over, its item deleted (None)."""
    written = replace(group.record, version=group.expected_version + 1)
    if group.page is None:
        return written
    if written.status is None:
        return None
    return replace(written, outbox=None, version=written.version + 1)


@dataclass
class Replay:
    """The replay of one config: the state it carries from tick to tick, and what it would have paged."""

    config: Config
    keep_pages: bool = False  # every notification, in order (the tests compare them with the live evaluator's)
    state: StoredState = field(default_factory=StoredState)
    pages: list[PageEvent] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    on_tick: Callable[[Plan], None] | None = None  # a hook for the plot, which needs every tick's figures
    _open: dict[str, Episode] = field(default_factory=dict)
    _breach_started: dict[InstanceKey, datetime] = field(default_factory=dict)

    def tick(self, observation: Observation, now: datetime) -> Plan:
        planned = plan(self.config, self.state, observation, now)
        self._note_breaches(planned)
        for group in planned.groups:
            if group.page is not None:
                self._record_page(planned, group)
        self._note_peaks(planned)
        apply(self.state, planned)
        if self.on_tick is not None:
            self.on_tick(planned)
        return planned

    def _note_breaches(self, planned: Plan) -> None:
        """When each instance first breached: it entered PENDING (or FIRING at once, with `for: 0s`)."""
        for change in planned.instance_changes:
            if change.previous is None and change.new is not None:
                self._breach_started[change.key] = change.new.since
            elif change.new is None:
                self._breach_started.pop(change.key, None)

    def _record_page(self, planned: Plan, group: GroupPlan) -> None:
        record, kind, now = group.record, group.page, planned.context.now
        assert kind is not None
        members = group.decision.members
        if self.keep_pages:  # a repeat an hour for weeks, per runner type, is too many to keep by default
            self.pages.append(
                PageEvent(now, record.rule, record.group, kind, record.sequence, group.rule.priority.value, members)
            )
        if kind is PageKind.NEW:
            breaches = [self._breach_started.get(InstanceKey(record.rule, name), now) for name in members]
            episode = Episode(record.rule, record.group, group.rule.priority.value, now, min(breaches, default=now))
            self._open[record.key] = episode
            self.episodes.append(episode)
        current = self._open.get(record.key)
        if current is None:  # pragma: no cover - a page other than NEW always follows a NEW
            return
        episode = current
        episode.notifications += 1
        episode.runner_types.update(members)
        if kind is PageKind.RESOLVED:
            episode.resolved_at = now
            del self._open[record.key]

    def _note_peaks(self, planned: Plan) -> None:
        for episode in self._open.values():
            for name in episode.runner_types:
                verdict = planned.verdicts.get(InstanceKey(episode.rule, name))
                if verdict is not None:
                    _raise_peaks(episode, verdict)


def _raise_peaks(episode: Episode, verdict: Verdict) -> None:
    if verdict.queue_size is not None:
        episode.peak_queue_size = max(episode.peak_queue_size or 0.0, verdict.queue_size)
    if verdict.queue_time is not None:
        episode.peak_queue_time = max(episode.peak_queue_time or 0.0, verdict.queue_time)
