"""`backtest --forecast`: the rules with their forecast, replayed beside the same rules without it, over the
same ticks; scored as warning gained and pages that did not happen.

Both replays are the evaluator's own plan (replay.py): the forecast's pages are those the evaluator would have
sent. The plain rule's pages are the incidents: each is the queue that formed. Against each, the forecast's
episode of the same rule that was open when the plain rule paged, on a runner type of it, is the same incident
paged earlier (the forecast page and the queue are one episode); the minutes between the two first pages are
the warning gained. A forecast episode no plain page overlaps is one that did not happen: the forecast fell
back and no queue formed.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from queuewatch.base.durations import format_duration
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.wording import moment
from queuewatch.config import Config
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.backtest.replay import Episode, Replay
from queuewatch_cli.commands.backtest.report import names


def with_horizon(config: Config, horizon: int | None) -> Config:
    """The config with every rule's forecast set to `horizon` (None: removed): the plain rule, or `--forecast
    10m` tried on a config that has none. A rule without a queue_time threshold never has one."""
    document = config.model_dump(by_alias=True, exclude_none=True)
    document.get("defaults", {}).get("rule", {}).pop("forecast", None)
    for spec, rule in zip(document.get("rules", []), config.resolved_rules, strict=True):
        spec.pop("forecast", None)
        if horizon is not None and rule.queue_time_threshold is not None:
            spec["forecast"] = horizon
    return Config.model_validate(document)


def forecasting_rules(config: Config) -> list[str]:
    return [rule.name for rule in config.resolved_rules if rule.forecast_horizon is not None]


@dataclass(frozen=True)
class Warned:
    """One incident (a plain page) and the forecast's page of it."""

    incident: Episode
    forecast: Episode | None  # None: the forecast's replay had no episode open then (it cannot page later)

    @property
    def gained_seconds(self) -> float:
        if self.forecast is None:
            return 0.0
        return max(0.0, (self.incident.started_at - self.forecast.started_at).total_seconds())


@dataclass
class Score:
    rule: str
    horizon: int | None
    warned: list[Warned] = field(default_factory=list)
    did_not_happen: list[Episode] = field(default_factory=list)
    forecast_pages: int = 0

    @property
    def gains(self) -> list[float]:
        return [w.gained_seconds for w in self.warned]


def _overlap(a: Episode, b: Episode, until: datetime) -> bool:
    return (
        a.started_at <= (b.resolved_at or until)
        and b.started_at <= (a.resolved_at or until)
        and bool(a.runner_types & b.runner_types)
    )


def score(
    rule: str, horizon: int | None, forecast: Sequence[Episode], plain: Sequence[Episode], until: datetime
) -> Score:
    mine = [e for e in forecast if e.rule == rule]
    incidents = [e for e in plain if e.rule == rule]
    result = Score(rule, horizon, forecast_pages=len(mine))
    for incident in incidents:
        open_then = [
            e
            for e in mine
            if e.started_at <= incident.started_at <= (e.resolved_at or until)
            and e.runner_types & incident.runner_types
        ]
        result.warned.append(Warned(incident, min(open_then, key=lambda e: e.started_at, default=None)))
    result.did_not_happen = [e for e in mine if not any(_overlap(e, i, until) for i in incidents)]
    return result


@dataclass
class ForecastReplays:
    """The forecast config's replay and the plain one's, fed the same ticks."""

    config: Config
    forecast: Replay
    plain: Replay

    @classmethod
    def of(cls, config: Config) -> ForecastReplays:
        if not forecasting_rules(config):
            raise QueuewatchError(
                "--forecast: no rule of the config has `forecast:` (and a queue_time threshold): give a horizon, "
                "--forecast 10m, to try one on every rule with a queue_time threshold"
            )
        return cls(config, Replay(config), Replay(with_horizon(config, None)))

    def run(self, ticks: Iterable[Snapshot]) -> None:
        for snapshot in ticks:
            self.forecast.tick(snapshot, snapshot.collected_at)
            self.plain.tick(snapshot, snapshot.collected_at)

    def scores(self, until: datetime) -> list[Score]:
        return [
            score(rule.name, rule.forecast_horizon, self.forecast.episodes, self.plain.episodes, until)
            for rule in self.config.resolved_rules
            if rule.forecast_horizon is not None
        ]


def forecast_lines(
    scores: Sequence[Score], start: datetime, end: datetime, unforecast: Sequence[str] = ()
) -> list[str]:
    lines = [
        f"forecast from {moment(start)} to {moment(end)}: each rule with its forecast against the same rule without"
    ]
    if unforecast:
        lines.append(
            f"  no forecast for {len(unforecast)} runner type(s), their maximum unknown (runners_maximum_count in "
            f"the config, --max N, or --runner-counts FILE): {names(unforecast)}"
        )
    for result in scores:
        horizon = format_duration(result.horizon or 0)
        lines.append(
            f"rule {result.rule} (forecast {horizon}): {len(result.warned)} incident(s) the plain rule paged, "
            f"{result.forecast_pages} page(s) with the forecast"
        )
        for warned in result.warned:
            incident = warned.incident
            where = f"{moment(incident.started_at)}  {names(incident.runner_types)}"
            if warned.forecast is None:
                lines.append(f"    {where}: no forecast page before it")
                continue
            gained = warned.gained_seconds
            said = (
                f"paged {format_duration(gained)} earlier, at {moment(warned.forecast.started_at)}"
                if gained
                else ("paged at the same minute")
            )
            lines.append(f"    {where}: the forecast {said}")
        if result.gains:
            gains = result.gains
            lines.append(
                f"  warning gained: median {format_duration(statistics.median(gains))}, least "
                f"{format_duration(min(gains))}, most {format_duration(max(gains))}"
            )
        lines.append(f"  forecast pages no incident followed (did not happen): {len(result.did_not_happen)}")
        for episode in result.did_not_happen:
            ended = moment(episode.resolved_at) if episode.resolved_at else "still open"
            lines.append(f"    {moment(episode.started_at)} -> {ended}  {names(episode.runner_types)}")
    return lines
