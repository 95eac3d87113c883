"""The track stage's EMF metrics: for each tracked job, its arrival, queue time and run time per runner type;
for each webhook delivery, taken or refused and why."""

from __future__ import annotations

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from queuewatch.model.jobs import github_hosted
from queuewatch.runtime.settings import RunnerTypeMetrics
from queuewatch.track.stage import TrackResult
from queuewatch.track.webhook import WebhookResponse

DIMENSION_VALUE_LIMIT = 1024  # CloudWatch's longest dimension value


def record_job(
    result: TrackResult, namespace: str, runner_type_metrics: RunnerTypeMetrics = "queued", *, stack: str
) -> None:
    """One job's news, per runner type: arrivals (the triage's surge), queue time, run time. A job that no
    runner type takes is counted by its labels, since jobs waiting for labels no runner serves are a finding.
    `off` (the JobMetrics parameter, as the track settings read it) publishes none: each is a custom metric
    billed for every hour it gets data."""
    if result.outcome == "refused":
        # Never retried, so counted: one metric per stack, whatever JobMetrics says.
        refused = EphemeralMetrics(namespace=namespace)
        refused.add_dimension(name="Stack", value=stack)
        refused.add_metric(name="JobEventsRefused", unit=MetricUnit.Count, value=1)
        refused.flush_metrics()
        return
    if result.outcome != "applied" or result.history or runner_type_metrics == "off":
        return  # a duplicate or late event: counted when it first applied; a replay of the past: not now
    if result.candidate:
        return  # a discovered name the collector has not confirmed: maybe no runner type at all (GitHub-hosted)
    metrics = EphemeralMetrics(namespace=namespace)
    metrics.add_dimension(name="Stack", value=stack)
    if result.runner_type is None:
        if result.arrived and not github_hosted((result.label_set or "").split(",")):
            metrics.add_dimension(name="LabelSet", value=(result.label_set or "-")[:DIMENSION_VALUE_LIMIT])
            metrics.add_metric(name="JobsUnmatched", unit=MetricUnit.Count, value=1)
            metrics.flush_metrics()
        return
    metrics.add_dimension(name="RunnerType", value=result.runner_type)
    if result.arrived:
        metrics.add_metric(name="JobsQueued", unit=MetricUnit.Count, value=1)
    if result.queue_seconds is not None:
        metrics.add_metric(name="JobQueueTime", unit=MetricUnit.Seconds, value=result.queue_seconds)
    if result.run_seconds is not None:
        metrics.add_metric(name="JobRunTime", unit=MetricUnit.Seconds, value=result.run_seconds)
    if metrics.metric_set:
        metrics.flush_metrics()


def record_webhook(response: WebhookResponse, namespace: str, *, stack: str) -> None:
    """Each delivery the webhook's URL answered: refused, by reason, or taken. A refusal is never retried by
    GitHub and stores nothing, so it is counted here; WebhookSignatureRefusalsAlarm and WebhookPayloadRefusalsAlarm
    judge the refused share of them."""
    metrics = EphemeralMetrics(namespace=namespace)
    metrics.add_dimension(name="Stack", value=stack)
    if response.refused is not None:
        metrics.add_dimension(name="Reason", value=response.refused)
        metrics.add_metric(name="WebhookDeliveriesRefused", unit=MetricUnit.Count, value=1)
    elif response.status < 300:
        metrics.add_metric(name="WebhookDeliveriesTaken", unit=MetricUnit.Count, value=1)
    if metrics.metric_set:
        metrics.flush_metrics()
