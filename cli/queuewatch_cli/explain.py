"""`queuewatch check-config --explain FILE`: the rules as the evaluator applies them, and what each selects.

Every setting says where it came from: the rule itself, `defaults.rule`, or queuewatch's built-in default,
so that nothing pages by a value nobody wrote down.
"""

from __future__ import annotations

from queuewatch.config.schema import Config, RuleSpec
from queuewatch.durations import format_duration
from queuewatch.rules import Rule
from queuewatch.wording import plural

_ORIGIN = {"rule": "", "defaults.rule": "  (from defaults.rule)", "built-in": "  (built-in default)", "unset": ""}


def explain(config: Config) -> list[str]:
    lines: list[str] = []
    for spec, rule in zip(config.rules, config.resolved_rules, strict=True):
        lines += _rule(config, spec, rule)
    lines += _monitor(config)
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
    for entry in config.discovery:
        region = entry.region or config.defaults.region
        pattern = entry.queue_name_pattern.replace("{prefix}", entry.prefix)
        kept = f"match {list(entry.match)}" + (f", exclude {list(entry.exclude)}" if entry.exclude else "")
        team = f", team {entry.team}" if entry.team and entry.team != rule.team else ""
        lines.append(
            f"  and, when discovered, the runner types of {pattern} in {region} ({kept}{team}) that the rule's "
            f"match {list(rule.match)}{exclude and ' minus' + exclude[1:]} selects"
        )
    return lines


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
