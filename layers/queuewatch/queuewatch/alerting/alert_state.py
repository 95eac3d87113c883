"""Alert state, pure: the state machine per instance, the paging decision per group, and what is stored.

Instance: one rule judging one runner type. OK -> PENDING (breached, waiting
`for`) -> FIRING -> (clear for `keep_firing_for`) -> OK, which is the resolve.
An OK instance is stored as nothing. Group: the page that lists the firing
instances of one rule and group key; it decides when to page, repeat, resolve,
or stay quiet for silences, and holds the page it is sending in its outbox.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum

from queuewatch.alerting.silences import SilenceRecord


@dataclass(frozen=True, order=True)
class InstanceKey:
    """One alert instance: a rule and the runner type it judges (or, for the health rule, what it watches)."""

    rule: str
    runner_type: str

    def __str__(self) -> str:
        return f"{self.rule}#{self.runner_type}"  # how logs, results and the state table name it

    @classmethod
    def parse(cls, text: str) -> InstanceKey:
        rule, separator, runner_type = text.partition("#")
        if not (separator and rule and runner_type):
            raise ValueError(f"found {text!r}, expected an instance key 'rule#runner_type'")
        return cls(rule, runner_type)


class Status(StrEnum):
    PENDING = "pending"
    FIRING = "firing"


@dataclass(frozen=True)
class InstanceState:
    rule: str
    runner_type: str
    status: Status
    since: datetime  # entered PENDING, or started FIRING
    clear_since: datetime | None = None  # FIRING, but clear from then on
    version: int = 0
    # The runner type's team when last observed: silences and pages keep it on a tick that does not see it.
    team: str | None = None
    # The monitor's instances: what it could not see, and why, as of the tick it turned pending or firing
    # (kept unchanged while it holds, so a steady tick writes nothing); `queuewatch status` shows it.
    reason: str | None = None
    # What holds it back from paging as of the last tick that stepped it: silence ids, `window:<name>`,
    # `github-incident`. Kept so a change of it is a change of state: the alert's history records it once.
    held_by: tuple[str, ...] = ()
    # The predictive page (evaluate/forecasts.py): `forecast`, its last breach stood on the rule's forecast alone;
    # `happened`, the plain condition breached since it left OK. A forecast that never happened resolves as
    # "did not happen"; one that did is the same incident as the queue that formed.
    forecast: bool = False
    happened: bool = False

    @property
    def key(self) -> InstanceKey:
        return InstanceKey(self.rule, self.runner_type)


def step(
    previous: InstanceState | None,
    breached: bool | None,
    now: datetime,
    *,
    rule: str,
    runner_type: str,
    pending_for: int,
    keep_firing_for: int,
) -> InstanceState | None:
    """The next state; None is OK. An unknown verdict (missing data) holds the state as it is."""
    if breached is None:
        return previous
    if previous is None:
        if not breached:
            return None
        status = Status.FIRING if pending_for == 0 else Status.PENDING
        return InstanceState(rule=rule, runner_type=runner_type, status=status, since=now)
    if previous.status is Status.PENDING:
        if not breached:
            return None
        if (now - previous.since).total_seconds() >= pending_for:
            return replace(previous, status=Status.FIRING, since=now)
        return previous
    # FIRING
    if breached:
        return replace(previous, clear_since=None) if previous.clear_since else previous
    clear_since = previous.clear_since or now
    if (now - clear_since).total_seconds() >= keep_firing_for:
        return None
    return replace(previous, clear_since=clear_since) if previous.clear_since is None else previous


class GroupStatus(StrEnum):
    FIRING = "firing"  # paged, not yet resolved
    SILENCED = "silenced"  # still firing, but every firing member is silenced


class PageKind(StrEnum):
    NEW = "new"  # first page of an episode
    UPDATE = "update"  # more runner types joined a paged alert
    REPEAT = "repeat"  # still firing after repeat_interval
    RESOLVED = "resolved"


@dataclass(frozen=True)
class GroupDecision:
    page: PageKind | None  # None: send nothing
    status: GroupStatus | None  # None: the group is over; its item goes
    started_at: datetime | None
    members: tuple[str, ...]  # runner types the page lists (for a resolve: the ones last paged)
    superseded: bool = False  # a resolve because a higher-priority page holds back every member still firing
    forecast_only: bool = False  # the episode stands on forecasts alone so far (GroupRecord.forecast_only)


def decide_group(
    status: GroupStatus | None,
    started_at: datetime | None,
    notified: tuple[str, ...],
    last_notified_at: datetime | None,
    firing: Set[str],
    silenced: Set[str],
    now: datetime,
    repeat_interval: int,
    inhibited: Set[str] = frozenset(),
) -> GroupDecision:
    """`silenced`: members a silence (or a maintenance window) holds back; `inhibited`: members a
    higher-priority page on the same runner type holds back. A page whose every member still firing is
    inhibited is closed as superseded: the higher page is the one incident for that problem."""
    paging = tuple(sorted(firing - silenced - inhibited))
    if paging:
        if status is None:
            return GroupDecision(PageKind.NEW, GroupStatus.FIRING, now, paging)
        if status is GroupStatus.SILENCED:
            # A released hold resumes the episode it held: the same incident is told it still fires.
            resumed = PageKind.UPDATE if set(paging) - set(notified) else PageKind.REPEAT
            return GroupDecision(resumed, GroupStatus.FIRING, started_at, paging)
        if set(paging) - set(notified):
            return GroupDecision(PageKind.UPDATE, GroupStatus.FIRING, started_at, paging)
        if last_notified_at is None or (now - last_notified_at).total_seconds() >= repeat_interval:
            return GroupDecision(PageKind.REPEAT, GroupStatus.FIRING, started_at, paging)
        # Fewer runner types fire than were paged: remember that quietly, so one that
        # fires again later pages again.
        return GroupDecision(None, status, started_at, paging)
    if status is not None and firing and set(firing) <= set(inhibited):
        # It paged; a higher-priority page now covers all of it: close this one rather than leave two open.
        return GroupDecision(PageKind.RESOLVED, None, started_at, notified, superseded=True)
    if status is GroupStatus.FIRING:
        if firing:  # what still fires is silenced: keep the state, page nobody
            return GroupDecision(None, GroupStatus.SILENCED, started_at, notified)
        return GroupDecision(PageKind.RESOLVED, None, started_at, notified)
    if status is GroupStatus.SILENCED and not firing:
        # It paged before it was silenced: a silence holds back new pages and repeats, never the
        # resolve that closes what every subscriber already got.
        return GroupDecision(PageKind.RESOLVED, None, started_at, notified)
    return GroupDecision(None, status, started_at, notified)


class Topic(StrEnum):
    """The topics a page goes to: every subscriber's, and AWS Chatbot's."""

    ALERT = "alert"
    CHAT = "chat"


@dataclass(frozen=True)
class Outbox:
    """A page written before it is published; cleared only once SNS has accepted it on every topic."""

    notification_id: str
    subject: str
    message: str
    attributes: dict[str, str | list[str]]  # a list goes to SNS as a String.Array
    message_structure: str | None
    claimed_at: datetime
    kind: PageKind
    chat_message: str | None = None  # the chat topic's body, when the stack has a chat topic
    pending: tuple[Topic, ...] = (Topic.ALERT,)  # the topics that have not accepted it yet


@dataclass(frozen=True)
class PagedAs:
    """How the group's last page went out: its resolve is worded the same, whatever the config says by then."""

    priority: str
    team: str
    teams: tuple[str, ...]  # every member's team, for routing
    title: str
    group_by: str
    runbook_url: str | None = None
    dashboard_url: str | None = None
    # The page's jobs total, each job counted once however many queues hold its request, and how it was
    # counted (or why it was not): `queuewatch status` says it, as the page did, since it stores no figures.
    jobs_queued: int | None = None
    jobs_queued_basis: str | None = None
    # The page's likely cause (the autoscaler's own words where its log said why), cut to LIKELY_CAUSE_KEPT:
    # `queuewatch status` shows it as the page led with it.
    likely_cause: str | None = None
    # The highest priority any page of the episode went out at (a repeat may go out lower, during a GitHub
    # incident): the resolve goes out at it, so it reaches every receiver that any of those pages reached.
    episode_priority: str | None = None


LIKELY_CAUSE_KEPT = 1000  # characters of a page's likely cause kept with its group: the item stays small


@dataclass(frozen=True)
class GroupRecord:
    """One group's page as stored: what was paged, when, and the page waiting to be sent."""

    rule: str
    group: str
    status: GroupStatus | None
    started_at: datetime | None
    members: tuple[str, ...]
    last_notified_at: datetime | None
    sequence: int
    version: int = 0
    outbox: Outbox | None = None
    paged_as: PagedAs | None = None  # None: never paged
    # The episode stands on forecasts alone so far: it opened on them and no member's plain condition has
    # breached since. Its resolve says the queue did not happen. False for every episode a plain breach opened
    # or joined: only a forecast episode is ever "did not happen".
    forecast_only: bool = False

    @property
    def key(self) -> str:
        return f"{self.rule}#{self.group}"


@dataclass
class StoredState:
    """Everything the evaluator keeps: the newest tick applied, instances not OK, groups, silences."""

    applied_at: datetime | None = None
    instances: dict[InstanceKey, InstanceState] = field(default_factory=dict)
    groups: dict[str, GroupRecord] = field(default_factory=dict)
    silences: list[SilenceRecord] = field(default_factory=list)
    read_units: float = 0.0
    names_digest: str | None = None  # of the config names last published for the commands (known_names.py)
