"""Queue-time SLOs, pure: which jobs an SLO counts, when a job turns good or bad, and the burn rates.

The conventions every side shares (the track stage's counters, the collector's waiting jobs, the
evaluator, the report and the backtest):

- A job is **good** when it started less than `queue_time_under` after it was queued, at its start: as the
  key's name says, a start at exactly `queue_time_under` (2m00s for `2m`) is not under it, and is late
  (`boundary` says so wherever an SLO is explained).
- A job is **bad** from the moment it has waited `queue_time_under`: at `queued_at + queue_time_under`,
  whether it has started since or still waits (a waiting job's badness is known then, so an outage in
  which nothing starts burns budget while it lasts). A job cancelled before it started is bad if it was
  cancelled after that moment, and counted nowhere if cancelled sooner.
- Counts are kept per hour of that moment, and per minute within the hour (a `Tally`). A window of W
  seconds (whole minutes) at `now` holds exactly the W/60 whole minutes ending at now's minute, [m - W, m)
  where m is the start of now's minute: each whole hour inside it by its total, its ragged edges by minute.
- A burn rate is the window's bad fraction over the budget's (1 - objective): 1 spends the budget exactly
  over the SLO's window. A window with no counted jobs burns at 0.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from queuewatch.base.durations import format_duration
from queuewatch.model.rules import Priority

MINUTE = 60
"""Seconds per minute count: a window's edges are exact to it."""
HOUR = 3600
"""Seconds per hour count: a window reads its whole hours from these, its edges from minutes."""

Notify = Literal["page", "ticket"]


@dataclass(frozen=True)
class BurnAlert:
    """One multi-window pair: fires when both windows burn at `factor` or more and the long one holds at
    least the SLO's `min_jobs` (the short one only confirms that the budget still burns)."""

    name: str
    factor: float
    long_window: int
    short_window: int
    notify: Notify


DEFAULT_BURN_ALERTS = (
    BurnAlert("fast", 14.4, 3600, 300, "page"),
    BurnAlert("slow", 6.0, 6 * 3600, 1800, "page"),
    BurnAlert("ticket", 1.0, 3 * 86400, 6 * 3600, "ticket"),
)
"""The SRE Workbook's (chapter 5) pairs for a 30-day window: 2% of the budget in an hour, 5% in six hours,
10% in three days."""


@dataclass(frozen=True)
class Slo:
    """An SLO with its defaults applied."""

    name: str
    match: tuple[str, ...]
    exclude: tuple[str, ...]
    teams: tuple[str, ...]  # runner types of these teams; empty: whatever their team
    labels: tuple[str, ...]  # jobs carrying all these labels (lower case); empty: whatever their labels
    objective: float  # the fraction of jobs that must be good, such as 0.99
    queue_time_under: int  # seconds
    window: int  # seconds
    team: str
    priority: Priority
    ticket_priority: Priority
    runbook_url: str | None
    min_jobs: int
    page_when_waiting_over: int | None  # the hard ceiling: one job waiting longer pages
    burn_alerts: tuple[BurnAlert, ...]

    @property
    def budget(self) -> float:
        """The fraction of jobs allowed to be bad."""
        return 1.0 - self.objective

    def selects(self, runner_type: str | None, team: str | None, labels: Iterable[str]) -> bool:
        """Whether a job of this runner type (and its team), carrying these labels, counts for the SLO."""
        if runner_type is None:
            return False
        if not any(fnmatch.fnmatchcase(runner_type, p) for p in self.match):
            return False
        if any(fnmatch.fnmatchcase(runner_type, p) for p in self.exclude):
            return False
        if self.teams and team not in self.teams:
            return False
        return not self.labels or set(self.labels) <= {label.lower() for label in labels}

    @property
    def longest_burn_window(self) -> int:
        return max((max(a.long_window, a.short_window) for a in self.burn_alerts), default=0)


Outcome = Literal["good", "bad"]


def outcome_of(
    queued_at: datetime, started_at: datetime | None, completed_at: datetime | None, threshold: int
) -> tuple[Outcome, datetime] | None:
    """A finished or started job's outcome and the moment it was decided; None: it counts nowhere (still
    waiting: the collector counts it; or cancelled before it turned bad)."""
    turned_bad = queued_at + timedelta(seconds=threshold)
    if started_at is not None:
        return ("good", started_at) if started_at < turned_bad else ("bad", turned_bad)
    if completed_at is not None and completed_at >= turned_bad:
        return "bad", turned_bad
    return None


def boundary(threshold: int) -> str:
    """The boundary as check-config's --explain and the `slo` report say it."""
    said = format_duration(threshold)
    return (
        f"a job that starts under {said} after it was queued is good; one that starts at {said} exactly or later, "
        f"or still waits at {said}, is late"
    )


def waiting_outcome(queued_at: datetime, now: datetime, threshold: int) -> tuple[Outcome, datetime] | None:
    """A job still waiting at `now`: bad from queued_at + threshold, undecided before."""
    turned_bad = queued_at + timedelta(seconds=threshold)
    return ("bad", turned_bad) if now >= turned_bad else None


def floor_to(moment: datetime, seconds: int) -> datetime:
    """The start of the `seconds`-long span (minute, hour) that holds `moment`."""
    epoch = int(moment.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, UTC)


def window_span(now: datetime, seconds: int) -> tuple[datetime, datetime]:
    """The exact window of `seconds` at `now`: [start, end), the whole minutes ending at now's minute."""
    end = floor_to(now, MINUTE)
    return end - timedelta(seconds=seconds), end


@dataclass(frozen=True)
class Counts:
    good: int = 0
    bad: int = 0

    @property
    def total(self) -> int:
        return self.good + self.bad

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.good + other.good, self.bad + other.bad)


@dataclass
class Tally:
    """One SLO's counts as read: per minute and per hour of the moment each job was decided (the same jobs
    in both)."""

    minutes: dict[datetime, Counts] = field(default_factory=dict)
    hours: dict[datetime, Counts] = field(default_factory=dict)

    def add(self, moment: datetime, counts: Counts) -> None:
        """Count jobs decided at `moment` (the collector's waiting jobs), in its minute and its hour."""
        for spans, seconds in ((self.minutes, MINUTE), (self.hours, HOUR)):
            at = floor_to(moment, seconds)
            spans[at] = spans.get(at, Counts()) + counts

    def window(self, now: datetime, seconds: int) -> Counts:
        """The jobs decided in the window of `seconds` at `now`, exact to the minute."""
        total = Counts()
        for counts in self.by_hour(*window_span(now, seconds)).values():
            total += counts
        return total

    def by_hour(self, start: datetime, end: datetime) -> dict[datetime, Counts]:
        """The jobs decided in [start, end) (whole minutes), by the hour holding them: each hour inside the span
        by its total, the span's ragged edges by their minutes."""
        held: dict[datetime, Counts] = {}
        for hour, counts in self.hours.items():
            if start <= hour and hour + timedelta(seconds=HOUR) <= end:
                held[hour] = counts
        for minute, counts in self.minutes.items():
            hour = floor_to(minute, HOUR)
            whole = start <= hour and hour + timedelta(seconds=HOUR) <= end
            if start <= minute < end and not whole:
                held[hour] = held.get(hour, Counts()) + counts
        return held

    def first_counted(self, since: datetime) -> datetime | None:
        """The start of the first minute from `since` holding a counted job."""
        return min((at for at, counts in self.minutes.items() if counts.total and at >= since), default=None)

    def copy(self) -> Tally:
        return Tally(dict(self.minutes), dict(self.hours))


def burn_rate(counts: Counts, slo: Slo) -> float:
    """The window's bad fraction over the budget's; 0 over no jobs."""
    if counts.total == 0:
        return 0.0
    return (counts.bad / counts.total) / slo.budget


@dataclass(frozen=True)
class PairVerdict:
    alert: BurnAlert
    long: Counts
    short: Counts
    long_burn: float
    short_burn: float
    enough_jobs: bool

    @property
    def firing(self) -> bool:
        return self.enough_jobs and self.long_burn >= self.alert.factor and self.short_burn >= self.alert.factor


def judge_pair(slo: Slo, alert: BurnAlert, long: Counts, short: Counts) -> PairVerdict:
    return PairVerdict(
        alert=alert,
        long=long,
        short=short,
        long_burn=burn_rate(long, slo),
        short_burn=burn_rate(short, slo),
        enough_jobs=long.total >= slo.min_jobs,
    )


def judge_slo(slo: Slo, tally: Tally, now: datetime) -> list[PairVerdict]:
    """Every burn alert of the SLO on its tally (the started jobs' and the waiting ones')."""
    return [
        judge_pair(slo, alert, tally.window(now, alert.long_window), tally.window(now, alert.short_window))
        for alert in slo.burn_alerts
    ]


def budget_left(counts: Counts, slo: Slo) -> tuple[float, float]:
    """The budget left over the window's counted jobs: in jobs, and as a fraction of the budget (negative
    once overspent). Over no jobs the whole (empty) budget is left."""
    allowed = slo.budget * counts.total
    if allowed == 0:
        return 0.0, 1.0
    return allowed - counts.bad, (allowed - counts.bad) / allowed
