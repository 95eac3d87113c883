"""EMF metrics of the track stage, in the stack's namespace (the evaluator's), each at most once per job:
JobsQueued, JobQueueTime and JobRunTime per {Stack, RunnerType}; JobsUnmatched per {Stack, LabelSet}."""

from __future__ import annotations

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from queuewatch.track.stage import TrackResult

# CloudWatch's limit on a dimension value.
MAX_DIMENSION_VALUE = 1024


def record_job(result: TrackResult, *, namespace: str, stack: str) -> None:
    found = result.effects
    if result.outcome != "applied" or found is None:
        return
    # Exactly the contract's dimensions: no `service`, which Powertools adds unless told otherwise.
    metrics = EphemeralMetrics(namespace=namespace, service="")
    metrics.add_dimension(name="Stack", value=stack)
    if result.runner_type is None:
        if not found.arrived:
            return
        # A job waiting for labels no watched runner type serves is itself a finding.
        metrics.add_dimension(name="LabelSet", value=(result.label_set or "(none)")[:MAX_DIMENSION_VALUE])
        metrics.add_metric(name="JobsUnmatched", unit=MetricUnit.Count, value=1)
        metrics.flush_metrics()
        return
    metrics.add_dimension(name="RunnerType", value=result.runner_type)
    if found.arrived:
        metrics.add_metric(name="JobsQueued", unit=MetricUnit.Count, value=1)
    if found.queue_time is not None:
        metrics.add_metric(name="JobQueueTime", unit=MetricUnit.Seconds, value=found.queue_time)
    if found.run_time is not None:
        metrics.add_metric(name="JobRunTime", unit=MetricUnit.Seconds, value=found.run_time)
    if found.arrived or found.queue_time is not None or found.run_time is not None:
        metrics.flush_metrics()
