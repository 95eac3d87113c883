"""Alerts that can never fire or fire twice, found from the config alone: a window or an SLO naming a team the
config has not, an SLO whose globs select nothing or whose window is shorter than its own burn pairs, a rule
that escalates another at the same priority, a rule no runner type discovery can find is ever selected by.

Each message says the fix, written as the config takes it. Errors where the config can never be right as
written; a warning where it may be meant (said beside each).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Callable, Iterator, Sequence

from queuewatch.base.durations import format_duration
from queuewatch.config.coverage import Finding, near_a_discovery_glob, near_miss
from queuewatch.config.known import config_teams
from queuewatch.config.schema import Config
from queuewatch.model.rules import Priority, Rule

_DAY = 86400


def silent_findings(config: Config) -> list[Finding]:
    return [
        *_window_teams(config),
        *_slo_teams(config),
        *_slo_globs(config),
        *_slo_windows(config),
        *_rules_discovery_never_finds(config),
        *_escalations_at_one_priority(config),
    ]


def did_you_mean(found: str, known: Sequence[str]) -> str:
    """'; did you mean 'gpu-infra'?' for the known name `found` nearly spells, or ''."""
    import difflib  # only bad files need suggestions: kept off the cold start

    close = difflib.get_close_matches(found, list(known), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def _window_teams(config: Config) -> Iterator[Finding]:
    # An error: a window holds back only the teams it names, so a team no alert has holds back nothing, and
    # the pages it was written for go out during the maintenance.
    teams = sorted(config_teams(config))
    for index, window in enumerate(config.maintenance_windows):
        for position, team in enumerate(window.teams):
            if team not in teams:
                yield Finding(
                    ("maintenance_windows", index, "teams", position),
                    f"window {window.name!r} holds back team {team!r}, which no alert of this config goes to"
                    f"{did_you_mean(team, teams) or ';'} expected one of {', '.join(teams)}",
                    "error",
                )


def _slo_teams(config: Config) -> Iterator[Finding]:
    teams = sorted(config_teams(config))
    # a job's team is its runner type's own (Config.team_of): a rule's team alone is no job's
    owners = sorted(
        {spec.team for spec in config.runner_types if spec.team} | {d.team for d in config.discovery if d.team}
    )
    for index, spec in enumerate(config.slos):
        # An error: `teams` keeps the jobs of those teams' runner types, so an unknown one keeps no job.
        for position, team in enumerate(spec.teams):
            if team not in owners:
                yield Finding(
                    ("slos", index, "teams", position),
                    f"SLO {spec.name!r} counts the jobs of team {team!r}, which no runner type of this config "
                    f"has: it counts no job and never fires{did_you_mean(team, owners) or ';'} expected one of "
                    f"{', '.join(owners) or 'the teams set on runner_types or discovery entries (none is)'}",
                    "error",
                )
        # A near miss of a known team is a typo (an error); another team may be one only SLOs page (a warning).
        if spec.team is not None and spec.team not in teams:
            hint = did_you_mean(spec.team, teams)
            yield Finding(
                ("slos", index, "team"),
                f"SLO {spec.name!r} pages team {spec.team!r}, which no rule, runner type or discovery entry has"
                + (
                    f"{hint}"
                    if hint
                    else f"; if it is meant, make sure a subscriber takes that team's pages (otherwise one of "
                    f"{', '.join(teams)})"
                ),
                "error" if hint else "warning",
            )


def _slo_globs(config: Config) -> Iterator[Finding]:
    # As a rule's glob (coverage.py): without discovery, a glob selecting none of runner_types never selects
    # anything, an error; with discovery, an error only when no discovery entry keeps what it selects.
    names = [spec.name for spec in config.runner_types]
    for index, slo in enumerate(config.resolved_slos):
        for position, pattern in enumerate(slo.match):
            if any(fnmatch.fnmatchcase(name, pattern) for name in names):
                continue
            hint = near_miss(pattern, names) or _near_a_discovery_glob(pattern, config)
            found = any(common_key([pattern], lambda key: True, d.match, d.selects) for d in config.discovery)
            if found and not hint:
                continue
            where = ("slos", index, "match", position)
            yield Finding(
                where,
                f"SLO {slo.name!r}: {pattern!r} selects none of runner_types"
                + ("" if found else " and no runner type discovery keeps")
                + f"{hint}"
                + ("" if hint else "; expected a name or glob of a runner type it should count"),
                "warning" if found else "error",
            )


def _slo_windows(config: Config) -> Iterator[Finding]:
    # An error: a burn pair judges the budget spent over its long window; one longer than the SLO's own window
    # spends more than the whole budget before it can fire (the default ticket pair's 72h under `window: 2d`).
    for index, slo in enumerate(config.resolved_slos):
        longest = max(slo.burn_alerts, key=lambda pair: pair.long_window)
        if longest.long_window > slo.window:
            days = math.ceil(longest.long_window / _DAY)
            yield Finding(
                ("slos", index, "window"),
                f"SLO {slo.name!r}: its {longest.name} pair burns over {format_duration(longest.long_window)}, "
                f"longer than the window {slo.window // _DAY}d it budgets; it can never fire as meant; write "
                f"window: {days}d or longer (28d, the default, is what the default pairs are made for)",
                "error",
            )


def _rules_discovery_never_finds(config: Config) -> Iterator[Finding]:
    # An error: with discovery and runner types both unable to give the rule a runner type, it never applies.
    # (Without discovery, lint.rule_coverage_problems says it.)
    if not config.discovery:
        return
    names = [spec.name for spec in config.runner_types]
    for index, rule in enumerate(config.resolved_rules):
        if any(rule.applies_to(name) for name in names):
            continue
        if not common_key(rule.match, rule.applies_to, rule.match, rule.applies_to):
            continue  # its exclude removes all its match selects: lint.rule_coverage_problems says so
        if any(common_key(rule.match, rule.applies_to, d.match, d.selects) for d in config.discovery):
            continue
        hints = "".join(near_miss(p, names) or _near_a_discovery_glob(p, config) for p in rule.match)
        kept = "; ".join(f"discovery[{i}] keeps {list(d.match)}" for i, d in enumerate(config.discovery))
        yield Finding(
            ("rules", index, "match"),
            f"rule {rule.name!r} can never apply: match {list(rule.match)} selects none of runner_types and no "
            f"runner type discovery can find ({kept}){hints or '; expected a glob of the runner types it is for'}",
            "error",
        )


def _escalations_at_one_priority(config: Config) -> Iterator[Finding]:
    # An error: a rule with the same team and signals as another and higher thresholds is its escalation, and
    # only a higher priority holds the lower page back (evaluate: inhibits); at one priority both page, two
    # incidents for one problem. (Equal thresholds as well: lint.rule_coverage_problems' overlap.)
    rules = config.resolved_rules
    candidates = _candidates(config)
    for later in range(len(rules)):
        for earlier in range(later):
            first, second = rules[earlier], rules[later]
            if first.priority != second.priority:
                continue
            higher = _escalation(first, second)
            if higher is None:
                continue
            shared = [name for name in candidates if first.applies_to(name) and second.applies_to(name)]
            if not shared:
                continue
            lower = second if higher is first else first
            if higher.priority is not Priority.P0:
                raised = list(Priority)[list(Priority).index(higher.priority) - 1]
                fix = f"write priority: {raised.value} in rule {higher.name!r}"
            else:
                fix = f"write priority: P1 in rule {lower.name!r}"
            yield Finding(
                ("rules", later if higher is second else earlier, "priority"),
                f"rule {higher.name!r} ({higher.condition()}) escalates rule {lower.name!r} ({lower.condition()}) "
                f"on runner type {shared[0]!r} at the same priority {first.priority.value}: equal priorities both "
                f"page, two incidents instead of an escalation; {fix} (a higher priority holds back the lower "
                "one's page)"
                + (
                    ""
                    if first.team == second.team
                    else f"; if teams {first.team} and {second.team} each want a page, exclude one's runner types"
                ),
                # one team: never meant; two teams may each want their own page of one problem
                "error" if first.team == second.team else "warning",
            )


def _escalation(first: Rule, second: Rule) -> Rule | None:
    """The rule of the two that fires only when the other does (same signals, thresholds each at least the
    other's, not all equal), or None when neither is the other's escalation."""
    if first.breach_when != second.breach_when or (first.size_signal, first.time_signal) != (
        second.size_signal,
        second.time_signal,
    ):
        return None
    pairs = [
        (first.queue_time_threshold, second.queue_time_threshold),
        (first.queue_size_threshold, second.queue_size_threshold),
    ]
    if any((a is None) != (b is None) for a, b in pairs):
        return None
    present = [(a, b) for a, b in pairs if a is not None and b is not None]
    if not present or all(a == b for a, b in present):
        return None
    if all(a <= b for a, b in present):
        return second
    if all(a >= b for a, b in present):
        return first
    return None


def _candidates(config: Config) -> list[str]:
    """The runner types queuewatch can watch, as far as the config tells: the named ones, and, with discovery,
    a name each rule glob selects that some discovery entry keeps (a near miss's invented name is none)."""
    names = [spec.name for spec in config.runner_types]
    if not config.discovery:
        return names
    samples = {_sample(p) for rule in config.resolved_rules for p in rule.match}
    found = {s for s in samples if any(d.selects(s) for d in config.discovery)}
    return names + sorted(found - set(names))


def _near_a_discovery_glob(pattern: str, config: Config) -> str:
    meant = near_a_discovery_glob(pattern, config)
    return f"; did you mean {meant!r}? (discovery's glob)" if meant else ""


def common_key(
    first: Sequence[str], first_keeps: Callable[[str], bool], second: Sequence[str], second_keeps: Callable[[str], bool]
) -> bool:
    """Whether some runner type key both keep: tried on the likely names, each glob's own and each with the
    other's put in place of its first '*' (a glob stands for 'x' where it is free)."""
    keys = {_sample(g) for g in (*first, *second)}
    keys |= {_sample(a.replace("*", b, 1)) for a in first for b in second}
    keys |= {_sample(b.replace("*", a, 1)) for a in first for b in second}
    return any(first_keeps(key) and second_keeps(key) for key in keys)


def _sample(pattern: str) -> str:
    """A name the glob selects: each wildcard stands for 'x', a set for its first character."""
    return re.sub(r"\[!?([^\]]).*?\]", r"\1", pattern).replace("*", "x").replace("?", "x")
