"""The predictive page's judging, pure: each runner type's outlook once a tick, and a rule's forecast on top of
its plain verdict.

A rule with `forecast: H` breaches as a forecast where its plain verdict (rules.judge) is clear and a job waiting
now or queued within H is predicted to wait past its queue_time (docs/forecast.md). How it composes with the
plain verdict (docs/guarantees.md, "The forecast"):
- a plain breach stands: the forecast never clears, softens or relabels what has happened;
- an open plain verdict (a signal unread) stays open: the forecast neither clears it nor pages on it, so the
  alert holds as it is, and the monitor names what is blind;
- only a known clear is turned into a breach, marked as a forecast (Verdict.forecast).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime

from queuewatch.model.forecast.launch import LaunchCeilings
from queuewatch.model.forecast.outlook import NoOutlook, Outlook, fleet_launch_slope, outlook
from queuewatch.model.rules import Rule, Verdict
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot

NO_HORIZON = NoOutlook("no rule with `forecast:` selects it")


def horizons(rules: Iterable[Rule], runner_types: Iterable[RunnerTypeSnapshot]) -> dict[str, int]:
    """Per runner type a forecast rule selects: the largest horizon of those rules, which its outlook spans."""
    forecasting = [rule for rule in rules if rule.forecast_horizon is not None and not rule.path]
    found: dict[str, int] = {}
    if not forecasting:
        return found
    for runner_type in runner_types:
        spans = [rule.forecast_horizon for rule in forecasting if rule.applies_to(runner_type.name)]
        if spans:
            found[runner_type.name] = max(span for span in spans if span is not None)
    return found


def outlooks(
    rules: Iterable[Rule], runner_types: Iterable[RunnerTypeSnapshot], at: datetime, ceilings: LaunchCeilings
) -> dict[str, Outlook | NoOutlook]:
    """Each forecast runner type's outlook this tick, over its horizon; the launch ceilings' slope from the
    arrival rates of every runner type whose inputs were read (the ceilings are the fleet's, not a pool's)."""
    listed = list(runner_types)
    spans = horizons(rules, listed)
    if not spans:
        return {}
    rates = [rt.forecast.arrived / rt.forecast.window_seconds for rt in listed if rt.forecast is not None]
    slope = fleet_launch_slope(rates, ceilings)
    found: dict[str, Outlook | NoOutlook] = {}
    for runner_type in listed:
        horizon = spans.get(runner_type.name)
        if horizon is None:
            continue
        found[runner_type.name] = _outlook(runner_type, horizon, at, slope)
    return found


def _outlook(runner_type: RunnerTypeSnapshot, horizon: int, at: datetime, slope: float) -> Outlook | NoOutlook:
    inputs = runner_type.forecast
    if inputs is None:
        return NoOutlook("its forecast inputs were not read this tick")
    waiting = _first(runner_type, SignalName.JOBS_QUEUED, SignalName.QUEUE_SIZE)
    if waiting is None:
        return NoOutlook("the jobs waiting for it now were not read")
    oldest = _first(runner_type, SignalName.OLDEST_JOB_AGE, SignalName.QUEUE_TIME)
    return outlook(
        inputs,
        waiting=int(waiting),
        oldest_seconds=oldest,
        at=at,
        horizon_seconds=float(horizon),
        launch_slope=slope,
    )


def _first(runner_type: RunnerTypeSnapshot, *names: SignalName) -> float | None:
    """The tracked jobs' figure where read (the forecast's own source), else the rule's signal."""
    return next((value for name in names if (value := runner_type.value(name)) is not None), None)


def with_forecast(rule: Rule, verdict: Verdict, found: Mapping[str, Outlook | NoOutlook], runner_type: str) -> Verdict:
    """The rule's verdict with its forecast applied: a known clear becomes a forecast breach where a job waiting
    now or queued within the rule's horizon is predicted to wait past its queue_time; anything else is kept."""
    if rule.forecast_horizon is None or rule.queue_time_threshold is None or verdict.breached is not False:
        return verdict
    projected = found.get(runner_type)
    if not isinstance(projected, Outlook):
        return verdict
    late = projected.lateness(rule.queue_time_threshold)
    if late is None or late.queued_in_seconds > rule.forecast_horizon:
        return verdict
    return replace(verdict, breached=True, forecast=late, outlook=projected)
