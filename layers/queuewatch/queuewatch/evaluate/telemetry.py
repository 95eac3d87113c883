"""The evaluate stage's EMF metrics: for each tick, a heartbeat, alert counts, and queue size and time per
runner type (and per job-retry and dead-letter path)."""

from __future__ import annotations

from aws_lambda_powertools.metrics import EphemeralMetrics, Metrics, MetricUnit

from queuewatch.evaluate.result import EvaluationResult
from queuewatch.model.demand_paths import PATH_METRICS, PATH_SIGNALS
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch.runtime.settings import RunnerTypeMetrics


def record_tick(
    metrics: Metrics,
    snapshot: Snapshot | None,
    result: EvaluationResult,
    runner_type_metrics: RunnerTypeMetrics = "queued",
    *,
    stack: str,
) -> None:
    # Per stack: stacks side by side in one account and region would otherwise share these metrics,
    # and one stack's heartbeat would keep another's dead evaluator looking healthy.
    metrics.add_dimension(name="Stack", value=stack)
    # The heartbeat alarm treats a missing datapoint as breaching: emit it on every tick that judged the
    # present. A stale tick (older than what was applied) or a lost race judged nothing: no heartbeat.
    if result.outcome in ("applied", "unchanged"):
        metrics.add_metric(name="Heartbeat", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="AlertsFiring", unit=MetricUnit.Count, value=len(result.firing))
    metrics.add_metric(name="RunnerTypesDegraded", unit=MetricUnit.Count, value=len(result.degraded))
    metrics.add_metric(name="PagesSent", unit=MetricUnit.Count, value=len(result.pages_sent))
    metrics.add_metric(name="PagesFailed", unit=MetricUnit.Count, value=len(result.pages_failed))
    if snapshot is None or runner_type_metrics == "off":
        return
    alerting = {key.runner_type for key in (*result.firing, *result.pending)}
    for runner_type in snapshot.runner_types:
        if runner_type_metrics == "alerting" and runner_type.name not in alerting:
            continue
        size = runner_type.value(SignalName.QUEUE_SIZE)
        age = runner_type.value(SignalName.QUEUE_TIME)
        paths = {
            metric: value
            for rule, signals in PATH_SIGNALS.items()
            for metric, signal in zip(PATH_METRICS[rule], signals, strict=True)
            if (value := runner_type.value(signal))
        }
        # Only while jobs wait: CloudWatch bills a custom metric for every hour it gets data, and a
        # fleet's queues are empty most hours. A graph fills the gaps with 0 (FILL(m, 0)).
        if not (size or age or paths):
            continue
        per_type = EphemeralMetrics(namespace=metrics.namespace)
        # Per stack too, like the tick's metrics: the stack's dashboard searches on it.
        per_type.add_dimension(name="Stack", value=stack)
        per_type.add_dimension(name="RunnerType", value=runner_type.name)
        if size is not None:
            per_type.add_metric(name="QueueSize", unit=MetricUnit.Count, value=size)
        if age is not None:
            per_type.add_metric(name="QueueTime", unit=MetricUnit.Seconds, value=age)
        for metric, value in paths.items():  # the job-retry and dead-letter queues, while they hold messages
            unit = MetricUnit.Seconds if metric.endswith("Age") else MetricUnit.Count
            per_type.add_metric(name=metric, unit=unit, value=value)
        per_type.flush_metrics()
