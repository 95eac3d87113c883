"""`queuewatch check-config --explain FILE`: the rules as the evaluator applies them, and what each selects.

Every setting says where it came from: the rule itself, `defaults.rule`, or queuewatch's built-in default,
so that nothing pages by a value nobody wrote down.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from queuewatch.config.schema import Config, RuleSpec
from queuewatch.durations import format_duration
from queuewatch.rules import Rule
from queuewatch.slo import boundary
from queuewatch.wording import plural

_ORIGIN = {"rule": "", "defaults.rule": "  (from defaults.rule)", "built-in": "  (built-in default)", "unset": ""}


def explain(config: Config) -> list[str]:
    lines: list[str] = []
    for spec, rule in zip(config.rules, config.resolved_rules, strict=True):
        lines += _rule(config, spec, rule)
    lines += _monitor(config)
    lines += [f"slo {slo.name}: {boundary(slo.queue_time_under)}" for slo in config.resolved_slos]
    return lines


def _rule(config: Config, spec: RuleSpec, rule: Rule) -> list[str]:
    origins = config.rule_origins(spec)
    exclude = f", exclude {list(rule.exclude)}" if rule.exclude else ""
    settings = [
        ("thresholds", rule.condition(), "thresholds"),
        ("breach_when", rule.breach_when, "breach_when"),
        ("for", format_duration(rule.pending_for), "for_"),
        ("keep_firing_for", format_duration(rule.keep_firing_for), "keep_firing_for"),
        ("repeat_interval", format_duration(rule.repeat_interval), "repeat_interval"),
        ("priority", rule.priority.value, "priority"),
        ("team", rule.team, "team"),
        ("group_by", rule.group_by, "group_by"),
        ("runbook_url", rule.runbook_url or "(none)", "runbook_url"),
        ("dashboard_url", rule.dashboard_url or "(none)", "dashboard_url"),
    ]
    lines = [f"rule {rule.name}: match {list(rule.match)}{exclude}"]
    lines += [f"  {key:<16} {value}{_ORIGIN[origins[field]]}" for key, value, field in settings]
    lines.append(f"  {'title':<16} {rule.title or f'Jobs are queueing ({rule.name})  (built-in default)'}")
    windows = [w.name for w in config.maintenance_windows if not w.rules or rule.name in w.rules]
    if windows:  # their teams and runner types narrow them further: check-config's lines above say how
        lines.append(f"  {'windows':<16} {', '.join(windows)}  (maintenance windows that may hold it back)")
    named = [t for t in config.runner_types if rule.applies_to(t.name)]
    if named:
        shown = [f"{t.name} (team {t.team})" if t.team and t.team != rule.team else t.name for t in named]
        lines.append(f"  selects {plural(len(named), 'named runner type')}: {', '.join(shown)}")
    else:
        lines.append("  selects no named runner type")
    for index, entry in enumerate(config.discovery):
        region = entry.region or config.defaults.region
        pattern = entry.queue_name_pattern.replace("{prefix}", entry.prefix)
        kept = f"match {list(entry.match)}" + (f", exclude {list(entry.exclude)}" if entry.exclude else "")
        team = f", team {entry.team}" if entry.team and entry.team != rule.team else ""
        if not _common_keys(entry.match, entry.selects, entry.match, entry.selects):
            lines.append(f"  not discovery[{index}] ({pattern} in {region}): its {kept} leaves no runner type to find")
            continue
        if not _common_keys(entry.match, entry.selects, rule.match, rule.applies_to):
            lines.append(
                f"  not discovery[{index}] ({pattern} in {region}): no runner type its {kept} keeps is one the "
                f"rule's match {list(rule.match)}{exclude and ' minus' + exclude[1:]} selects"
            )
            continue
        lines.append(
            f"  and, when discovered, the runner types of {pattern} in {region} ({kept}{team}) that the rule's "
            f"match {list(rule.match)}{exclude and ' minus' + exclude[1:]} selects{_copies(config, index)}"
        )
    return lines


def _common_keys(
    first: Sequence[str], first_keeps: Callable[[str], bool], second: Sequence[str], second_keeps: Callable[[str], bool]
) -> bool:
    """Whether some runner type key both keep: tried on the likely names, each glob's own and each with the
    other's put in place of its first '*' (a glob stands for 'x' where it is free)."""
    candidates = {_sample(g) for g in (*first, *second)}
    candidates |= {_sample(a.replace("*", b, 1)) for a in first for b in second}
    candidates |= {_sample(b.replace("*", a, 1)) for a in first for b in second}
    return any(first_keeps(key) and second_keeps(key) for key in candidates)


def _sample(glob: str) -> str:
    return re.sub(r"\[!?([^\]]).*?\]", r"\1", glob).replace("*", "x").replace("?", "x")


def _copies(config: Config, index: int) -> str:
    """How a later region's (or account's) copies of a key are named: `<key>@<region>` where an earlier entry
    elsewhere finds the same key (docs/config.md: a runner key in several regions or accounts)."""
    entry = config.discovery[index]
    here = (entry.region or config.defaults.region, entry.account_id or config.defaults.account_id)
    earlier = [
        (i, other)
        for i, other in enumerate(config.discovery[:index])
        if (other.region or config.defaults.region, other.account_id or config.defaults.account_id) != here
        and _common_keys(entry.match, entry.selects, other.match, other.selects)
    ]
    if not earlier:
        return ""
    region, account = here
    named = ", ".join(f"discovery[{i}]" for i, _ in earlier)
    return f"; a key {named} also finds is named <key>@{region}{'.' + account if account else ''} here"


def _monitor(config: Config) -> list[str]:
    monitor = config.monitor
    first = config.resolved_rules[0]

    def origin(field: str) -> str:
        return "" if field in monitor.model_fields_set else _ORIGIN["built-in"]

    team = monitor.team or f"{first.team}  (rule {first.name}'s: monitor.team is not set)"
    return [
        "monitor (queuewatch's own page: collection failing, signals missing):",
        f"  {'priority':<16} {monitor.priority.value}{origin('priority')}",
        f"  {'team':<16} {team}",
        f"  {'for':<16} {format_duration(monitor.for_)}{origin('for_')}",
        f"  {'repeat_interval':<16} {format_duration(monitor.repeat_interval)}{origin('repeat_interval')}",
    ]
