"""Checks across entries: duplicate names, the reserved rule, rules that never apply or page twice."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping
from typing import Any

from queuewatch.config.coverage import near_a_discovery_glob, near_miss
from queuewatch.config.names import RUNNER_TYPE
from queuewatch.config.schema import Config
from queuewatch.config.silent import did_you_mean
from queuewatch.model.rules import HEALTH_RULE

Location = tuple[str | int, ...]


def cross_checks(data: Mapping[str, Any]) -> list[tuple[Location, str]]:
    """Duplicate names, the reserved rule name, rules without thresholds, nothing to watch."""
    problems: list[tuple[Location, str]] = []

    def entries(key: str) -> list[tuple[int, Mapping[str, Any]]]:
        value = data.get(key)
        return [(i, e) for i, e in enumerate(value) if isinstance(e, Mapping)] if isinstance(value, list) else []

    for key in ("runner_types", "rules", "slos"):
        seen: dict[object, int] = {}
        for index, entry in entries(key):
            name = entry.get("name")
            if isinstance(name, str) and name in seen:
                problems.append(((key, index, "name"), f"{name!r} is already {key}[{seen[name]}]"))
            elif isinstance(name, str):
                seen[name] = index
    defaults = data.get("defaults")
    default_rule = defaults.get("rule") if isinstance(defaults, Mapping) else None
    inherited = default_rule.get("thresholds") if isinstance(default_rule, Mapping) else None
    default_team = default_rule.get("team") if isinstance(default_rule, Mapping) else None
    for index, entry in entries("rules"):
        if entry.get("team") is None and default_team is None:
            # An error, not a team made up: a page routed to a team nobody subscribed to is never seen.
            problems.append(
                (
                    ("rules", index, "name"),
                    f"rule {entry.get('name')!r} has no team: queuewatch has no built-in one, and a page routed to "
                    "no team reaches nobody; expected team: in this rule, or defaults.rule.team for every rule",
                )
            )
        if entry.get("name") == HEALTH_RULE:
            problems.append((("rules", index, "name"), f"{HEALTH_RULE!r} is reserved for queuewatch's own health page"))
        thresholds = entry.get("thresholds", inherited)
        if not isinstance(thresholds, Mapping) or all(thresholds.get(k) is None for k in ("queue_time", "queue_size")):
            problems.append(
                (("rules", index, "thresholds"), "expected queue_time, queue_size or both (here or in defaults.rule)")
            )
    for index, entry in entries("slos"):
        if entry.get("team") is None and default_team is None:
            problems.append(
                (
                    ("slos", index, "name"),
                    f"SLO {entry.get('name')!r} has no team: its pages would reach nobody; expected team: in this "
                    "SLO, or defaults.rule.team",
                )
            )
    rule_names = sorted({str(entry.get("name")) for _, entry in entries("rules")} | {HEALTH_RULE})
    for index, window in entries("maintenance_windows"):
        named = window.get("rules")
        for position, name in enumerate(named if isinstance(named, list) else []):
            if isinstance(name, str) and name not in rule_names:
                problems.append(
                    (
                        ("maintenance_windows", index, "rules", position),
                        f"window {window.get('name')!r} names no rule of this config: found {name!r}"
                        f"{did_you_mean(name, rule_names)}, expected one of {', '.join(rule_names)}",
                    )
                )
    if not data.get("runner_types") and not data.get("discovery") and not data.get("autoscaler"):
        problems.append(
            (("runner_types",), "expected at least one runner type, a discovery entry, or autoscaler: {prefix: ...}")
        )
    return problems


_PLAIN_GLOB = re.compile(r"^[^?\[\]]*$")  # literal characters and '*' only


def _covers(exclude: str, pattern: str) -> bool:
    """True if every name `pattern` selects is also excluded by `exclude`.

    Exact for literal names and '*' globs: a '*'-only glob covers another such glob
    exactly when it matches that glob's text. Patterns with '?' or '[...]' are never
    claimed to be covered, so the check errs towards accepting a config.
    """
    return bool(_PLAIN_GLOB.match(exclude) and _PLAIN_GLOB.match(pattern)) and fnmatch.fnmatchcase(pattern, exclude)


def _sample_name(pattern: str) -> str:
    """A runner type name the pattern selects: each wildcard stands for 'x'."""
    return re.sub(r"\[!?([^\]]).*?\]", r"\1", pattern).replace("*", "x").replace("?", "x")


def rule_coverage_problems(config: Config) -> list[tuple[Location, str]]:
    """Rules that can never apply (unreachable) and pairs that page twice for one breach (overlapping).

    Unreachable: the rule's `exclude` removes everything its `match` selects; or the
    config has no `discovery` and the rule selects none of `runner_types`.
    Overlapping: two rules with the same thresholds, `breach_when` and priority select
    one runner type queuewatch can watch: a configured one, or, when discovery may find
    any name, a name both rules' patterns select.
    """
    problems: list[tuple[Location, str]] = []
    names = [spec.name for spec in config.runner_types]
    rules = config.resolved_rules
    for index, rule in enumerate(rules):
        covered = [p for p in rule.match if any(_covers(e, p) for e in rule.exclude)]
        if len(covered) == len(rule.match):
            problems.append(
                (
                    ("rules", index, "exclude"),
                    f"rule {rule.name!r} can never apply: exclude {list(rule.exclude)} removes everything "
                    f"match {list(rule.match)} selects; expected exclude to leave some runner types",
                )
            )
        elif not config.discovery and not any(rule.applies_to(name) for name in names):
            problems.append(
                (
                    ("rules", index, "match"),
                    f"rule {rule.name!r} can never apply: match {list(rule.match)}"
                    + (f" minus exclude {list(rule.exclude)}" if rule.exclude else "")
                    + " selects none of runner_types, and there is no discovery entry to find more"
                    + "".join(near_miss(p, names) for p in rule.match)
                    + "; expected a name or glob of a configured runner type",
                )
            )
    candidates = list(names)
    if config.discovery:
        # A glob that nearly spells a known one is a typo, said as such (coverage.py); a name invented from it
        # ('x-gup-x') is no runner type to report an overlap on, and the fix that overlap asks would hide it.
        samples = {
            (_sample_name(p), p)
            for rule in rules
            for p in rule.match
            if not (near_miss(p, names) or near_a_discovery_glob(p, config))
        }
        known = set(names)
        candidates += sorted(
            {s for s, p in samples if fnmatch.fnmatchcase(s, p) and RUNNER_TYPE.match(s) and s not in known}
        )
    for later in range(len(rules)):
        for earlier in range(later):
            first, second = rules[earlier], rules[later]
            if (first.priority, first.condition()) != (second.priority, second.condition()):
                continue
            shared = [name for name in candidates if first.applies_to(name) and second.applies_to(name)]
            if not shared:
                continue
            more = f" (and {len(shared) - 1} more)" if len(shared) > 1 else ""
            problems.append(
                (
                    ("rules", later),
                    f"rule {second.name!r} overlaps rules[{earlier}] {first.name!r} on runner type "
                    f"{shared[0]!r}{more}: both page at {first.priority.value} when {first.condition()}, "
                    "so one breach pages twice; expected match/exclude that give each runner type one such "
                    "rule, or different thresholds or priorities (to escalate)",
                )
            )
    return problems


def label_set_problems(config: Config) -> list[tuple[Location, str]]:
    """Label sets no job can ever reach: the first runner type that takes a job wins (track/routing.py), so a
    set whose every job an earlier runner type's set takes gives its runner type none of them. An earlier
    set takes them all when it holds every label of this one, or, both exact_match, is the same set.
    Indexed by label, so 5,000 runner types are checked without comparing each pair. Under the webhook's
    `random` or `all` queue selection, runner types that share labels are the point (pools one job may go to):
    a tracked job counts under the first of them, once, and their queues are judged each on its own."""
    problems: list[tuple[Location, str]] = []
    if config.defaults.queue_selection_strategy != "first":
        return problems
    exact_sets: dict[frozenset[str], int] = {}  # the first runner type with this exact set
    holding: dict[str, set[int]] = {}  # label -> indexes of earlier sets (not exact) that hold it
    wide_sets: list[int] = []  # the runner type of each such set, by the index above
    for index, spec in enumerate(config.runner_types):
        own: list[tuple[frozenset[str], bool]] = []
        for position, (labels, exact) in enumerate(spec.all_label_sets):
            wanted = frozenset(label.lower() for label in labels)
            holders = sorted((holding.get(label, set()) for label in wanted), key=len)  # the rarest label first
            takers = set.intersection(*holders) if holders else set()
            taker = min((wide_sets[i] for i in takers), default=None)
            if exact and wanted in exact_sets:
                taker = min(exact_sets[wanted], taker if taker is not None else index)
            if taker is not None and taker != index:
                where: Location = (
                    ("runner_types", index, "labels")
                    if spec.labels is not None
                    else ("runner_types", index, "label_sets", position)
                )
                problems.append(
                    (
                        where,
                        f"runner type {spec.name!r} never gets a job for labels {sorted(wanted)}: "
                        f"runner_types[{taker}] {config.runner_types[taker].name!r} comes first and takes every "
                        "one of them; expected each label set to name jobs only one runner type serves (order "
                        "the more specific runner type first, or set exact_match)",
                    )
                )
            own.append((wanted, exact))
        for wanted, exact in own:  # a runner type's own sets never shadow each other
            if exact:
                exact_sets.setdefault(wanted, index)
            else:
                for label in wanted:
                    holding.setdefault(label, set()).add(len(wide_sets))
                wide_sets.append(index)
    return problems
