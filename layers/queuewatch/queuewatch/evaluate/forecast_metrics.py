"""The forecast's EMF metrics, for the dashboard: per stack each tick, the runner types whose pool reaches its
maximum within the horizon, those predicted to queue past a rule's queue time, those without a forecast; per
runner type, ForecastHeadroom (seconds until its pool reaches its maximum; 0: at it), only while that is within
its horizon, as QueueSize is only while jobs wait (CloudWatch bills a custom metric for every hour it has data)."""

from __future__ import annotations

from collections.abc import Collection

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from queuewatch.model.forecast.board import ForecastBoard
from queuewatch.runtime.settings import RunnerTypeMetrics


def record_forecasts(
    board: ForecastBoard | None,
    namespace: str,
    runner_type_metrics: RunnerTypeMetrics = "queued",
    *,
    stack: str,
    alerting: Collection[str] = (),
) -> None:
    """Nothing without a board (no rule with `forecast:`). `alerting`: the runner types firing or pending, the
    only ones given a metric of their own under `alerting`."""
    if board is None:
        return
    tick = EphemeralMetrics(namespace=namespace)
    tick.add_dimension(name="Stack", value=stack)
    tick.add_metric(name="RunnerTypesFullSoon", unit=MetricUnit.Count, value=len(board.full_soon))
    tick.add_metric(name="RunnerTypesForecastLate", unit=MetricUnit.Count, value=len(board.late))
    tick.add_metric(name="RunnerTypesWithoutForecast", unit=MetricUnit.Count, value=board.unforecast)
    tick.flush_metrics()
    if runner_type_metrics == "off":
        return
    for forecast in board.full_soon:
        if runner_type_metrics == "alerting" and forecast.name not in alerting:
            continue
        per_type = EphemeralMetrics(namespace=namespace)
        per_type.add_dimension(name="Stack", value=stack)
        per_type.add_dimension(name="RunnerType", value=forecast.name)
        per_type.add_metric(name="ForecastHeadroom", unit=MetricUnit.Seconds, value=forecast.full_in_seconds or 0.0)
        per_type.flush_metrics()
