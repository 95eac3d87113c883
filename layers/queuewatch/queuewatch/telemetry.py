"""EMF metrics: for each tick, a heartbeat, alert counts, and queue size and time per runner type; for each
tracked job, its arrival, queue time and run time per runner type; for each webhook delivery, taken or refused
and why."""

from __future__ import annotations

from aws_lambda_powertools.metrics import EphemeralMetrics, Metrics, MetricUnit

from queuewatch.demand_paths import PATH_METRICS, PATH_SIGNALS
from queuewatch.evaluate import EvaluationResult
from queuewatch.jobs import github_hosted
from queuewatch.settings import RunnerTypeMetrics
from queuewatch.signals import SignalName
from queuewatch.snapshot import Snapshot
from queuewatch.track.stage import TrackResult
from queuewatch.track.webhook import WebhookResponse

DIMENSION_VALUE_LIMIT = 1024  # CloudWatch's longest dimension value


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
