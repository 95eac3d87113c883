"""`queuewatch backtest --suggest --forecast`: per rule with a queue_time threshold, the longest forecast horizon
whose pages that did not happen stay within the page budget, and the warning it gains.

Each candidate is the config with that one rule alone (as --suggest's thresholds, suggest.py), its thresholds as
configured and its forecast at one horizon of a ladder; the plain rule (no forecast) is replayed beside them, all
in one pass over the same ticks, through the evaluator's own plan. As for the thresholds, a candidate with no
alert state skips a tick that would plan nothing for it: nothing over the thresholds, and no job predicted late
even over the ladder's longest horizon (a job's predicted wait does not depend on the jobs queued after it, so
a shorter horizon sees no lateness the longest does not). A horizon is scored as `backtest --forecast`
scores it (forecast.py): the plain rule's pages are the incidents, a forecast page no incident followed did not
happen. A longer horizon warns earlier and is wrong more often; the budget says how often is too often.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from queuewatch.base.durations import format_duration
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.wording import moment
from queuewatch.config import Config
from queuewatch.model.forecast.launch import LaunchCeilings
from queuewatch.model.forecast.outlook import Outlook, fleet_launch_slope, outlook
from queuewatch.model.rules import Rule
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.backtest.forecast import Score, score, with_horizon
from queuewatch_cli.commands.backtest.replay import Replay
from queuewatch_cli.commands.backtest.suggest import Budget, parse_budget

HORIZON_LADDER = (60, 120, 300, 600, 900, 1200, 1800, 2700, 3600)  # forecast: 1m to 1h (config/spans.py)


@dataclass
class HorizonChoice:
    rule: str
    scores: list[Score]  # one per horizon of the ladder, shortest first
    incidents: int  # the plain rule's pages
    chosen: Score | None = None


def _alone(config: Config, rule: str, horizon: int | None) -> Config:
    """The config with this rule alone, at this horizon (None: the plain rule)."""
    document = config.model_dump(by_alias=True, exclude_none=True)
    document["rules"] = [spec for spec in document.get("rules", []) if spec["name"] == rule]
    return with_horizon(Config.model_validate(document), horizon)


def suggest_horizons(
    config: Config, ticks: Iterable[Snapshot], start: datetime, end: datetime, allowed: float
) -> list[HorizonChoice]:
    """Every rule with a queue_time threshold, every horizon, one pass over the history."""
    rules = [rule.name for rule in config.resolved_rules if rule.queue_time_threshold is not None]
    if not rules:
        raise QueuewatchError("--suggest --forecast: no rule has a queue_time threshold to forecast")
    replays = {(rule, horizon): Replay(_alone(config, rule, horizon)) for rule in rules for horizon in HORIZON_LADDER}
    plains = {rule: Replay(_alone(config, rule, None)) for rule in rules}
    resolved = {rule.name: rule for rule in config.resolved_rules}
    ceilings = LaunchCeilings()
    for snapshot in ticks:
        slope = fleet_launch_slope(
            (rt.forecast.arrived / rt.forecast.window_seconds for rt in snapshot.runner_types if rt.forecast), ceilings
        )
        for name in rules:
            calm, foreseen = _quiet(resolved[name], snapshot, slope)
            for horizon, replay in [*((h, replays[name, h]) for h in HORIZON_LADDER), (None, plains[name])]:
                # A candidate holding no alert state, on a tick breaching its thresholds nowhere, blind nowhere,
                # and (with a forecast) late nowhere even over the longest horizon, plans nothing: skipped.
                idle = not replay.state.instances and not replay.state.groups
                if idle and calm and (horizon is None or not foreseen):
                    continue
                replay.tick(snapshot, snapshot.collected_at)
    choices = []
    for rule in rules:
        plain = plains[rule].episodes
        scores = [score(rule, h, replays[rule, h].episodes, plain, end) for h in HORIZON_LADDER]
        within = [s for s in scores if len(s.did_not_happen) <= allowed]
        chosen = max(within, key=lambda s: s.horizon or 0, default=None)
        choices.append(HorizonChoice(rule, scores, len([e for e in plain if e.rule == rule]), chosen))
    return choices


def _quiet(rule: Rule, snapshot: Snapshot, slope: float) -> tuple[bool, bool]:
    """(calm: no runner type of the rule over its thresholds or blind; foreseen: one predicted late within the
    longest horizon of the ladder, as the evaluator would project it)."""
    peak_time = peak_size = 0.0
    blind = foreseen = False
    threshold = rule.queue_time_threshold
    for runner_type in snapshot.runner_types:
        if not rule.applies_to(runner_type.name):
            continue
        waited, queued = runner_type.value(SignalName.QUEUE_TIME), runner_type.value(SignalName.QUEUE_SIZE)
        blind = blind or waited is None or queued is None
        peak_time, peak_size = max(peak_time, waited or 0.0), max(peak_size, queued or 0.0)
        if runner_type.forecast is None or threshold is None or foreseen:
            continue
        projected = outlook(
            runner_type.forecast,
            waiting=int(queued or 0),
            oldest_seconds=waited,
            at=snapshot.collected_at,
            horizon_seconds=float(HORIZON_LADDER[-1]),
            launch_slope=slope,
        )
        late = projected.lateness(threshold) if isinstance(projected, Outlook) else None
        foreseen = late is not None and late.queued_in_seconds <= HORIZON_LADDER[-1]
    below = [
        peak <= limit
        for peak, limit in ((peak_time, rule.queue_time_threshold), (peak_size, rule.queue_size_threshold))
        if limit is not None
    ]
    calm = (any(below) if rule.breach_when == "all" else all(below)) and not blind
    return calm, foreseen


def _gained(result: Score) -> str:
    gains = result.gains
    if not gains:
        return "no incident to warn of"
    return f"warning gained median {format_duration(statistics.median(gains))}, least {format_duration(min(gains))}"


def horizon_lines(
    choices: Sequence[HorizonChoice], budget: Budget, allowed: float, start: datetime, end: datetime
) -> list[str]:
    lines = [
        f"suggest a forecast horizon from {moment(start)} to {moment(end)}: budget {budget.text}, so at most "
        f"{allowed:g} forecast page(s) that did not happen"
    ]
    for choice in choices:
        lines.append(f"rule {choice.rule}: {choice.incidents} incident(s) the plain rule paged")
        for result in choice.scores:
            over = "within budget" if len(result.did_not_happen) <= allowed else "over budget"
            lines.append(
                f"    forecast {format_duration(result.horizon or 0)}: {result.forecast_pages} page(s), "
                f"{len(result.did_not_happen)} did not happen, {over}; {_gained(result)}"
            )
        if choice.chosen is None:
            lines.append("  no horizon keeps the pages that did not happen within the budget: leave `forecast:` unset")
            continue
        chosen = choice.chosen
        lines.append(
            f"  chosen: forecast: {format_duration(chosen.horizon or 0)} (the longest within budget): "
            f"{len(chosen.did_not_happen)} page(s) that did not happen; {_gained(chosen)}"
        )
    return lines


def run_horizon_suggest(
    args: argparse.Namespace,
    config: Config,
    ticks: Callable[[], Iterable[Snapshot]],
    start: datetime,
    end: datetime,
    out: Callable[[str], None] = print,
    held_from: datetime | None = None,
) -> int:
    """0 when every rule has a horizon within the budget, 1 when one has none, 2 for bad input."""
    try:
        if getattr(args, "incidents", None):
            raise QueuewatchError(
                "--suggest --forecast takes the plain rule's pages as the incidents: drop --incidents"
            )
        budget = parse_budget(getattr(args, "budget", None) or "1/week")
        held = max(start, held_from or start)
        allowed = budget.allowed((end - held).total_seconds())
        choices = suggest_horizons(config, ticks(), held, end, allowed)
    except QueuewatchError as error:
        print(f"backtest: {error}", file=sys.stderr)
        return 2
    out("\n".join(horizon_lines(choices, budget, allowed, held, end)))
    return 0 if all(c.chosen is not None for c in choices) else 1
