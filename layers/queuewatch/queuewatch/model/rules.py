"""Alert rules with their defaults applied, and judging one runner type against one: breached, clear, or cannot tell."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from queuewatch.base.durations import format_duration
from queuewatch.model.demand_paths import SIGNAL_WORDS
from queuewatch.model.signals import CROSS_CHECKED, SIGNAL_ORIGIN, SignalName
from queuewatch.model.snapshot import QUALIFIER, RunnerTypeSnapshot, runner_type_key

if TYPE_CHECKING:
    from queuewatch.model.forecast.outlook import Lateness, Outlook

HEALTH_RULE = "queuewatch-health"
"""The reserved rule of queuewatch's own page: collection failing, signals missing."""
COLLECTOR = "collector"
UNSERVED_JOBS = "jobs:unserved"  # the monitor's instance for tracked jobs no runner type serves (":": no clash)
UNJUDGED = "rules:unjudged"  # the monitor's instance for watched runner types no rule judges (evaluate/unjudged.py)
JOB_SOURCE = "source"  # and "source:<bus|webhook>" for a job source gone quiet
UNTRACKED_JOBS = "jobs:untracked"  # and for scale-up requests aging while no job is tracked queued for them
"""The health instance that stands for collection itself. Health instances share the runner types' key
space (`queuewatch-health#<name>`), so no runner type may take this name. ("discovery:<region>" holds a
':', which no runner type name can.)"""
RESERVED_RUNNER_TYPES = frozenset({COLLECTOR})
SLO_RULE_PREFIX = "slo:"  # an SLO's rules: slo:<name> (its pages) and slo:<name>:ticket (no rule name holds ':')
TICKET_SUFFIX = ":ticket"

AlertKind = Literal["page", "ticket", "monitor"]
"""What an alert is to whoever gets it, the `kind` message attribute routes read: queuewatch's own page is
`monitor`, an SLO's ticket pair `ticket`, every other alert (rules, path rules, an SLO's paging pairs) `page`."""
ALERT_KINDS: tuple[AlertKind, ...] = ("page", "ticket", "monitor")


def alert_kind(rule_name: str) -> AlertKind:
    if rule_name == HEALTH_RULE:
        return "monitor"
    if rule_name.startswith(SLO_RULE_PREFIX) and rule_name.endswith(TICKET_SUFFIX):
        return "ticket"
    return "page"


class Priority(StrEnum):
    P0 = "P0"
    P1 = "P1"
    P2 = "P2"
    P3 = "P3"

    @property
    def severity(self) -> str:
        return {"P0": "critical", "P1": "critical", "P2": "warning", "P3": "info"}[self.value]


@dataclass(frozen=True)
class Rule:
    """A rule with its defaults applied: every field has a value."""

    name: str
    match: tuple[str, ...]
    exclude: tuple[str, ...]
    queue_time_threshold: int | None
    queue_size_threshold: int | None
    breach_when: Literal["all", "any"]
    pending_for: int
    keep_firing_for: int
    repeat_interval: int
    priority: Priority
    team: str
    runbook_url: str | None
    dashboard_url: str | None
    group_by: Literal["all", "team", "runner_type"]
    title: str | None = None  # the page's title; None: "Jobs are queueing (<rule>)"
    # What the thresholds judge: the build queue's (or the jobs') size and time, or, for the rules of the
    # autoscaler's other queues (demand_paths.py), that queue's count and oldest age. A path rule judges a
    # runner type only where its queue was found: no reading at all there means no such queue.
    size_signal: SignalName = SignalName.QUEUE_SIZE
    time_signal: SignalName = SignalName.QUEUE_TIME
    path: bool = False
    forecast_horizon: int | None = None  # page ahead on the forecast (queuewatch/model/forecast): how far; None: never

    def applies_to(self, runner_type: str) -> bool:
        """A pattern without '@' selects a runner type key wherever it is watched (`linux-x64` selects
        `linux-x64@eu-west-1` too); one with '@' selects by the whole identity, one region's copy."""
        return any(selects(p, runner_type) for p in self.match) and not any(
            selects(p, runner_type) for p in self.exclude
        )

    def condition(self) -> str:
        """The thresholds as pages and config errors word them: 'queue size > 0 and queue time > 1m'."""
        parts = []
        if self.queue_size_threshold is not None:
            parts.append(f"{SIGNAL_WORDS[self.size_signal]} > {self.queue_size_threshold}")
        if self.queue_time_threshold is not None:
            parts.append(f"{SIGNAL_WORDS[self.time_signal]} > {format_duration(self.queue_time_threshold)}")
        return (" and " if self.breach_when == "all" else " or ").join(parts)


def selects(pattern: str, identity: str) -> bool:
    """One meaning for a pattern, in a rule and a silence alike: without '@' it matches the key in every region."""
    name = identity if QUALIFIER in pattern else runner_type_key(identity)
    return fnmatch.fnmatchcase(name, pattern)


@dataclass(frozen=True)
class Verdict:
    """breached is None when missing data leaves the answer open; the state then holds."""

    breached: bool | None
    breached_signals: tuple[str, ...] = ()
    queue_size: float | None = None
    queue_time: float | None = None
    missing: dict[str, str] = field(default_factory=dict)
    # Per breached signal judged on two (signals.CROSS_CHECKED): which of them is over the threshold.
    shown_by: dict[str, Literal["jobs", "queue", "both"]] = field(default_factory=dict)
    # A breach that stands on the rule's forecast alone (evaluate/forecasts.py): the first job predicted late,
    # and the outlook that says so. None: the verdict is the plain one.
    forecast: Lateness | None = None
    outlook: Outlook | None = None


def judge(rule: Rule, runner_type: RunnerTypeSnapshot) -> Verdict:
    checks: list[tuple[SignalName, int]] = []
    if rule.queue_size_threshold is not None:
        checks.append((rule.size_signal, rule.queue_size_threshold))
    if rule.queue_time_threshold is not None:
        checks.append((rule.time_signal, rule.queue_time_threshold))
    if rule.path and rule.size_signal not in runner_type.signals:
        return Verdict(breached=False)  # the runner type has no such queue: nothing to judge
    outcomes: list[bool | None] = []
    breached: list[str] = []
    missing: dict[str, str] = {}
    shown_by: dict[str, Literal["jobs", "queue", "both"]] = {}
    for signal, threshold in checks:
        sources = CROSS_CHECKED.get(signal)  # a path's signals (demand_paths.py) have no second signal
        if sources is not None and all(source in runner_type.signals for source in sources):
            over, origin, why = _worse_of(runner_type, sources, threshold)
            if origin:
                shown_by[signal] = origin
        else:
            over, why = _over(runner_type, signal, threshold)
        outcomes.append(over)
        if why:
            missing[signal] = why
        if over:
            breached.append(str(signal))
    return Verdict(
        breached=_combine(outcomes, rule.breach_when),
        breached_signals=tuple(breached),
        queue_size=runner_type.value(rule.size_signal),
        queue_time=runner_type.value(rule.time_signal),
        missing=missing,
        shown_by=shown_by,
    )


def _over(runner_type: RunnerTypeSnapshot, signal: SignalName, threshold: int) -> tuple[bool | None, str | None]:
    """Over the threshold, or None and why the signal has no value."""
    reading = runner_type.signals.get(signal)
    if reading is None or reading.value is None:
        return None, reading.error if reading and reading.error else "not collected"
    return reading.value > threshold, None


def _worse_of(
    runner_type: RunnerTypeSnapshot, sources: tuple[SignalName, SignalName], threshold: int
) -> tuple[bool | None, Literal["jobs", "queue", "both"] | None, str | None]:
    """The worse of two signals that check each other: over when either is, whatever the other says; clear
    only when both are read and neither is; else open, with why the unread one is blind."""
    over: list[str] = []
    blind: list[str] = []
    for source in sources:
        answer, why = _over(runner_type, source, threshold)
        if answer:
            over.append(SIGNAL_ORIGIN[source])
        elif answer is None:
            blind.append(f"{SIGNAL_ORIGIN[source]}: {why}")
    origin: Literal["jobs", "queue", "both"] | None = (
        "both" if len(over) == 2 else ("jobs" if over == ["jobs"] else "queue") if over else None
    )
    if over:
        return True, origin, None
    return (None, None, "; ".join(blind)) if blind else (False, None, None)


def _combine(outcomes: list[bool | None], breach_when: str) -> bool | None:
    """Three-valued all/any: a known answer wins over missing data wherever it decides the result."""
    if breach_when == "all":
        if False in outcomes:
            return False
        return None if None in outcomes else True
    if True in outcomes:
        return True
    return None if None in outcomes else False
