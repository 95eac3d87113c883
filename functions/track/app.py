"""TrackFunction, WebhookFunction and WebhookDeliveriesFunction: each workflow_job event, from the
autoscaler's event bus or from GitHub's webhook directly, applied to the jobs table.

The bus invokes asynchronously: an event that cannot be applied fails the invocation, Lambda retries
it, and past its retries it is kept in the function's dead-letter queue, never dropped. The webhook
checks the signature and queues the event; WebhookDeliveriesFunction applies the queue, which SQS
retries and dead-letters the same way. An event that can never apply is refused and counted
(JobEventsRefused), never retried.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.matcher_config import read_default, read_named
from queuewatch.model.matcher import MatcherConfig, MatcherConfigError
from queuewatch.runtime.settings import TrackSettings, WebhookSettings, cached_config
from queuewatch.track import Router
from queuewatch.track.deliveries import apply_deliveries, received_at
from queuewatch.track.events import WorkflowJobBusEvent
from queuewatch.track.heartbeat import Heartbeat
from queuewatch.track.matching import CachedMatcherConfig, MatcherParameters, matcher_parameters
from queuewatch.track.stage import TrackResult, track
from queuewatch.track.telemetry import record_job, record_webhook
from queuewatch.track.webhook import WebhookRequest, WebhookResponse, receive

logger = Logger()
aws = AwsClients()
SECRET_MAX_AGE_SECONDS = 300  # a rotated secret is picked up within 5 minutes
heartbeat = Heartbeat()  # each job source's last event, written at most once a minute (track/heartbeat.py)


matcher_configs: dict[MatcherParameters, CachedMatcherConfig] = {}  # per container: one SSM read a minute


@lru_cache(maxsize=4)
def _router(config_file: Path, matcher: MatcherConfig | MatcherConfigError | None) -> Router:
    # Keyed by the matcher config read (each read a new object): rebuilt once a minute at most.
    return Router(cached_config(config_file), matcher)


def router_for(settings: TrackSettings, now: datetime) -> Router:
    """The config's routing and the autoscaler's own (its matcher config, where it names one)."""
    config = cached_config(settings.config_file)
    where = matcher_parameters(config, settings.matcher_config_path, settings.autoscaler_prefix)
    if where is None:
        return _router(settings.config_file, None)
    if where not in matcher_configs:
        region = config.autoscaler.region if config.autoscaler else None
        ssm = aws.ssm(region)
        names = list(where.names)
        read = (lambda: read_named(ssm, names)) if where.explicit else (lambda: read_default(ssm, names[0]))
        matcher_configs[where] = CachedMatcherConfig(read)
    return _router(settings.config_file, matcher_configs[where].current(now))


@logger.inject_lambda_context(log_event=False)  # the event is never logged, whatever the environment says
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings = TrackSettings.from_env()
    router = router_for(settings, datetime.now(UTC))
    try:
        bus_event = WorkflowJobBusEvent.model_validate(event)
    except ValidationError as error:
        # Retrying cannot make it parse: counted and said, not dead-lettered.
        first = error.errors(include_input=False, include_url=False)[0]
        reason = f"not a workflow_job bus event: {'.'.join(str(p) for p in first['loc'])}: {first['msg']}"
        result = TrackResult(outcome="refused", action="", job_id=None, reason=reason)
    else:
        result = track(
            bus_event.detail,
            router,
            aws.dynamodb(),
            settings.jobs_table,
            datetime.now(UTC),
            occurred_at=bus_event.time,  # when the event happened, not when it reached us: a queued event's time
            history=settings.history,
            replayed=bus_event.replay_name is not None,  # EventBridge marks an archive's replay: see track()
            slo_table=settings.slo_table or None,
        )
    record_job(result, settings.metrics_namespace, settings.per_runner_type_metrics, stack=settings.stack_name)
    log = logger.warning if result.outcome == "refused" else logger.info
    log("tracked", extra=result.model_dump(mode="json", exclude_none=True))
    # The source delivered when the bus stamped the event (never later than now); a replay is old news.
    now = datetime.now(UTC)
    stamped = None if result.outcome == "refused" or bus_event.replay_name else min(bus_event.time, now)
    dynamodb, matcher_error = aws.dynamodb(), router.matcher_error
    if missed := heartbeat.event_from("bus", dynamodb, settings.jobs_table, stamped or now, matcher_error):
        logger.warning("heartbeat not written", extra={"source": "bus", "reason": missed})
    return result.model_dump(mode="json")


@logger.inject_lambda_context(log_event=False)  # a webhook body holds repository details: never logged
def webhook_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, object]:
    settings = WebhookSettings.from_env()
    try:
        request = WebhookRequest.from_function_url(event)
    except ValueError as error:
        response = WebhookResponse(status=400, message=str(error), refused="parse")
    else:
        secret = parameters.get_secret(settings.webhook_secret_arn, max_age=SECRET_MAX_AGE_SECONDS)
        sqs = aws.sqs(settings.region)
        response = receive(request, str(secret), sqs, settings.webhook_queue_url, datetime.now(UTC))
    record_webhook(response, settings.metrics_namespace, stack=settings.stack_name)  # every refusal, by reason
    log = logger.info if response.status < 400 else logger.warning
    log("webhook", extra={"status": response.status, "reason": response.message, "refused": response.refused})
    return response.for_function_url()


@logger.inject_lambda_context(log_event=False)
def deliveries_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """A batch from the webhook's queue; the records that failed go back to it (a partial batch response)."""
    settings = TrackSettings.from_env()
    now = datetime.now(UTC)
    router = router_for(settings, now)
    applied = apply_deliveries(
        event.get("Records") or [],
        router,
        aws.dynamodb(),
        settings.jobs_table,
        now,
        history=settings.history,
        slo_table=settings.slo_table or None,
    )
    for delivery, result in applied.results:
        record_job(result, settings.metrics_namespace, settings.per_runner_type_metrics, stack=settings.stack_name)
        log = logger.warning if result.outcome == "refused" else logger.info
        log("tracked", extra={"delivery": delivery, **result.model_dump(mode="json", exclude_none=True)})
    for delivery, reason in applied.errors:
        logger.error("not applied, retried", extra={"delivery": delivery, "reason": reason})
    # The source delivered when the webhook received its latest event (never later than now).
    received = [moment for record in event.get("Records") or [] if (moment := received_at(record))]
    if received and (
        missed := heartbeat.event_from(
            "webhook", aws.dynamodb(), settings.jobs_table, min(max(received), now), router.matcher_error
        )
    ):
        logger.warning("heartbeat not written", extra={"source": "webhook", "reason": missed})
    return applied.response()
