"""`queuewatch check-config --explain FILE`: the rules as the evaluator applies them, and what each selects;
then every alert the config can raise, who holds back whom, and which team each goes to.

Every setting says where it came from: the rule itself, `defaults.rule`, or queuewatch's built-in default,
so that nothing pages by a value nobody wrote down.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from queuewatch.base.durations import format_duration
from queuewatch.base.wording import plural
from queuewatch.config.forecast import meaning as forecast_meaning
from queuewatch.config.schema import Config, RuleSpec
from queuewatch.config.silent import common_key
from queuewatch.evaluate.holds.inhibit import inhibits
from queuewatch.evaluate.slo import page_rule_name, ticket_rule_name
from queuewatch.model.rules import HEALTH_RULE, Rule
from queuewatch.model.slo import boundary

_ORIGIN = {"rule": "", "defaults.rule": "  (from defaults.rule)", "built-in": "  (built-in default)", "unset": ""}


def explain(config: Config) -> list[str]:
    lines: list[str] = []
    for spec, rule in zip(config.rules, config.resolved_rules, strict=True):
        lines += _rule(config, spec, rule)
    lines += _monitor(config)
    lines += [f"slo {slo.name}: {boundary(slo.queue_time_under)}" for slo in config.resolved_slos]
    lines += alert_lines(config)
    lines += team_lines(config)
    lines += escalation_lines(config)
    return lines


NO_RECEIVER = "nobody"
"""The receiver column where the config's routes send an alert nowhere."""


@dataclass(frozen=True)
class Raised:
    """One alert the config can raise: its kind, name, priority, the `team` its message carries, the other
    teams its `teams` attribute names (a runner type's own team), and the receiver it reaches."""

    kind: str
    name: str
    priority: str
    team: str
    also: tuple[str, ...]
    receiver: str = NO_RECEIVER


def raised_alerts(config: Config) -> list[Raised]:
    """Every alert the config can raise, in the order a reader meets them in the file, each with the receivers
    the config's routes give it (the filter policies `make build` subscribes: config.routing)."""
    return [replace(alert, receiver=_receivers(config, alert)) for alert in _raised(config)]


def _receivers(config: Config, alert: Raised) -> str:
    if alert.team == EACH_OWN_TEAM:
        return "by each runner type's team (queuewatch routes test --team T)"
    kind = {"slo ticket": "ticket", "monitor": "monitor"}.get(alert.kind, "page")
    attributes: dict[str, str | list[str]] = {
        "team": alert.team,
        "teams": [alert.team, *alert.also],
        "priority": alert.priority,
        "kind": kind,
    }
    reached = config.routing.destinations(attributes)
    return ", ".join(receiver.name for receiver in reached) or NO_RECEIVER


EACH_OWN_TEAM = "each runner type's own"


def _raised(config: Config) -> list[Raised]:
    out: list[Raised] = []
    for rule in config.resolved_rules:
        team = EACH_OWN_TEAM if rule.group_by == "team" else rule.team
        out.append(Raised("rule", rule.name, rule.priority.value, team, _other_teams(config, rule)))
    for rule in config.path_rules:  # judged on every runner type's job-retry or dead-letter queue
        out.append(Raised("path", rule.name, rule.priority.value, rule.team, _other_teams(config, rule)))
    for slo in config.resolved_slos:
        pages = [a.name for a in slo.burn_alerts if a.notify == "page"]
        if slo.page_when_waiting_over is not None:
            pages.append(f"waiting over {format_duration(slo.page_when_waiting_over)}")
        tickets = [a.name for a in slo.burn_alerts if a.notify == "ticket"]
        if pages:
            name = f"{page_rule_name(slo.name)} ({', '.join(pages)})"
            out.append(Raised("slo page", name, slo.priority.value, slo.team, ()))
        if tickets:
            name = f"{ticket_rule_name(slo.name)} ({', '.join(tickets)})"
            out.append(Raised("slo ticket", name, slo.ticket_priority.value, slo.team, ()))
    monitor_team = config.monitor.team or config.resolved_rules[0].team
    out.append(Raised("monitor", HEALTH_RULE, config.monitor.priority.value, monitor_team, ()))
    return out


def alert_lines(config: Config) -> list[str]:
    raised = raised_alerts(config)
    header = ("kind", "alert", "priority", "team", "also in teams", "receiver")
    rows = [header] + [(a.kind, a.name, a.priority, a.team, ", ".join(a.also) or "-", a.receiver) for a in raised]
    widths = [max(len(row[column]) for row in rows) for column in range(len(header) - 1)]
    lines = [
        f"alerts this config can raise ({plural(len(raised), 'alert')}; a page's `team` attribute is its team, "
        "its `teams` attribute adds the teams of the runner types it counts):"
    ]
    lines += [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1]
        for row in rows
    ]
    return lines


def team_lines(config: Config) -> list[str]:
    """Per team, the alerts whose `team` is theirs, and those whose `teams` names them (a GPU pool's dead-letter
    page is the dead-letter rule's team's, and names the pool's team beside it)."""
    raised = raised_alerts(config)
    teams = sorted({a.team for a in raised} | {t for a in raised for t in a.also})
    lines = ["by team (a route on `team` gets the first list; one on `teams` gets both):"]
    for team in teams:
        own = [a.name.split(" (")[0] for a in raised if a.team == team]
        named = [a.name for a in raised if team in a.also]
        lines.append(
            f"  {team}: {', '.join(own) or 'none'}" + (f"; named in the teams of {', '.join(named)}" if named else "")
        )
    return lines


def escalation_lines(config: Config) -> list[str]:
    """Who holds back whom: on a runner type where a rule of a higher priority fires, a lower one's page is
    held back (evaluate/holds/inhibit.py): the same kind of rule for the same team; rules of one priority both
    page."""
    rules = [*config.resolved_rules, *config.path_rules]
    lines: list[str] = []
    for holder in rules:
        for held in rules:
            # the same problem (holds/inhibit.py): the same kind of rule, on a runner type, for the same team
            if holder is held or holder.size_signal != held.size_signal or not inhibits(holder, held):
                continue
            shared = [
                spec.name
                for spec in config.runner_types
                if holder.applies_to(spec.name)
                and held.applies_to(spec.name)
                and (spec.team or holder.team) == (spec.team or held.team)
            ]
            discovered = [
                f"discovery[{i}]"
                for i, entry in enumerate(config.discovery)
                if (entry.team or holder.team) == (entry.team or held.team)
                and common_key(holder.match, holder.applies_to, entry.match, entry.selects)
                and common_key(held.match, held.applies_to, entry.match, entry.selects)
                and common_key(holder.match, holder.applies_to, held.match, held.applies_to)
            ]
            if not shared and not discovered:
                continue
            where = (
                [", ".join(shared[:3]) + (f" (and {len(shared) - 3} more)" if len(shared) > 3 else "")]
                if shared
                else []
            )
            where += [f"the runner types {' and '.join(discovered)} finds that both select"] if discovered else []
            lines.append(
                f"  {holder.name} ({holder.priority.value}) holds back {held.name} ({held.priority.value}) on "
                + "; ".join(where)
            )
    head = "escalation (while a rule pages a runner type, the pages of lower priority on it are held back):"
    return [head, *(lines or ["  none: no two rules of different priorities select one runner type"])]


def _other_teams(config: Config, rule: Rule) -> tuple[str, ...]:
    """The teams, other than the rule's, of the runner types it can select: named ones and discovery's."""
    teams = {spec.team for spec in config.runner_types if spec.team and rule.applies_to(spec.name)}
    teams |= {
        entry.team
        for entry in config.discovery
        if entry.team and common_key(entry.match, entry.selects, rule.match, rule.applies_to)
    }
    return tuple(sorted(teams - {rule.team}))


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
        ("forecast", forecast_meaning(rule), "forecast"),
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
        if not common_key(entry.match, entry.selects, entry.match, entry.selects):
            lines.append(f"  not discovery[{index}] ({pattern} in {region}): its {kept} leaves no runner type to find")
            continue
        if not common_key(entry.match, entry.selects, rule.match, rule.applies_to):
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


def _copies(config: Config, index: int) -> str:
    """How a later region's (or account's) copies of a key are named: `<key>@<region>` where an earlier entry
    elsewhere finds the same key (docs/config.md: a runner key in several regions or accounts)."""
    entry = config.discovery[index]
    here = (entry.region or config.defaults.region, entry.account_id or config.defaults.account_id)
    earlier = [
        (i, other)
        for i, other in enumerate(config.discovery[:index])
        if (other.region or config.defaults.region, other.account_id or config.defaults.account_id) != here
        and common_key(entry.match, entry.selects, other.match, other.selects)
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
