"""A rule's `forecast:` checked against the config: what it needs (a queue_time to predict, tracked jobs, each
runner type's maximum) and what it means, for check-config and `--explain` (docs/forecast.md).

Errors where a forecast can never page as written; a warning where what it reads cannot be known from the
config alone (the stack's deploy may track jobs without `autoscaler:`), each with the fix as the config takes it.
"""

from __future__ import annotations

from collections.abc import Iterator

from queuewatch.base.durations import format_duration
from queuewatch.config.coverage import Finding
from queuewatch.config.messages import yaml_value
from queuewatch.config.schema import Config, RuleSpec
from queuewatch.model.rules import Rule
from queuewatch.model.signals import SignalName

SUGGESTED_QUEUE_TIME = "30m"  # a threshold to suggest where a forecast has none: the issue's own example
LISTED = 5  # runner types a message names before "and N more"


def forecast_findings(config: Config) -> list[Finding]:
    return [*_without_queue_time(config), *_without_inputs(config)]


def meaning(rule: Rule) -> str:
    """What the rule's forecast pages on, in words: for --explain and check-config."""
    if rule.forecast_horizon is None:
        return "(none: pages on what has happened only)"
    horizon = format_duration(rule.forecast_horizon)
    if rule.queue_time_threshold is None:
        return f"{horizon}: no queue_time to predict, so it never pages ahead"
    threshold = format_duration(rule.queue_time_threshold)
    said = (
        f"{horizon}: pages when a job waiting now or queued in the next {horizon} is predicted to wait past {threshold}"
    )
    if rule.forecast_horizon > rule.queue_time_threshold:
        # Allowed: a slow build-up is seen before its first late job is queued, at the price of more guesses.
        ahead = format_duration(rule.forecast_horizon + rule.queue_time_threshold)
        said += (
            f"; longer than its queue_time, so it may page up to {ahead} before a wait passes {threshold}, for "
            "jobs not queued yet: the further ahead, the more it rests on the arrival rate alone"
        )
    return said


def _where(index: int, spec: RuleSpec, key: str) -> tuple[str | int, ...]:
    return ("rules", index, key) if getattr(spec, key) is not None else ("defaults", "rule", key)


def _without_queue_time(config: Config) -> Iterator[Finding]:
    for index, (spec, rule) in enumerate(zip(config.rules, config.resolved_rules, strict=True)):
        if rule.forecast_horizon is None or rule.queue_time_threshold is not None:
            continue
        written = {"queue_size": rule.queue_size_threshold} if rule.queue_size_threshold is not None else {}
        fix = yaml_value({**written, "queue_time": SUGGESTED_QUEUE_TIME})
        horizon = format_duration(rule.forecast_horizon)
        if spec.forecast is not None:
            # An error: the rule asks for a page ahead it can never send.
            yield Finding(
                ("rules", index, "forecast"),
                f"rule {rule.name!r} has forecast: {horizon} but no queue_time threshold: the forecast predicts "
                f"when a job would wait past queue_time, so it has nothing to predict; expected a queue_time "
                f"beside it, such as thresholds: {fix} (or no forecast)",
                "error",
            )
        else:
            # A warning: defaults.rule gives every rule the forecast, and this one may be meant to page on size.
            yield Finding(
                ("rules", index, "thresholds") if spec.thresholds is not None else ("rules", index, "name"),
                f"rule {rule.name!r} takes forecast: {horizon} from defaults.rule but has no queue_time threshold: "
                f"it pages on queue size alone, never ahead; to forecast it, write thresholds: {fix}",
                "warning",
            )


def _without_inputs(config: Config) -> Iterator[Finding]:
    """Without `autoscaler:` the config names no job source (the stack may be queue-only: no tracked jobs, no
    forecast) and no scale-up log line to read each runner type's maximum from; a `max_runners` metric is the
    other source of the maximum. One warning, at the first forecast: its fix is one line for every rule."""
    if config.autoscaler is not None:
        return
    forecasting = [
        (index, spec, rule)
        for index, (spec, rule) in enumerate(zip(config.rules, config.resolved_rules, strict=True))
        if rule.forecast_horizon is not None and rule.queue_time_threshold is not None
    ]
    if not forecasting:
        return
    index, spec, rule = forecasting[0]
    unmeasured = [
        runner.name
        for runner in config.runner_types
        if SignalName.MAX_RUNNERS not in config.signals_for(runner.signals)
        and any(r.applies_to(runner.name) for _, _, r in forecasting)
    ]
    maximum = ""
    if unmeasured:
        more = f" and {len(unmeasured) - LISTED} more" if len(unmeasured) > LISTED else ""
        maximum = (
            f"; nor is the maximum of {'runner types' if len(unmeasured) > 1 else 'runner type'} "
            f"{', '.join(unmeasured[:LISTED])}{more} read from anywhere (the "
            "scale-up's log line needs autoscaler:, and no max_runners metric is configured)"
        )
    yield Finding(
        _where(index, spec, "forecast"),
        f"rule {rule.name!r} forecasts, which needs tracked jobs, but this config names no autoscaler: unless the "
        f"stack is deployed with AutoscalerEventBusName or WebhookSecretArn it is queue-only and no runner type "
        f"has a forecast{maximum}; such a rule pages on what has happened alone; expected "
        f"autoscaler: {{prefix: {_prefix(config)}}} at the top of the config",
        "warning",
    )


def _prefix(config: Config) -> str:
    """The upstream module's prefix, as the multi-runner module names a queue (<prefix>-<key>-queued-builds)."""
    for runner in config.runner_types:
        name = runner.queue.name if runner.queue is not None else None
        suffix = f"-{runner.name}-queued-builds"
        if name and name.endswith(suffix) and len(name) > len(suffix):
            return name.removesuffix(suffix)
    return "<the module's prefix>"
