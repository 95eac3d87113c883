"""TrackFunction and WebhookFunction: each workflow_job event, from the autoscaler's event bus or from
GitHub's webhook directly, applied to the jobs table.

The bus invokes asynchronously: an event that cannot be applied fails the invocation, Lambda retries
it, and past its retries it is kept in the function's dead-letter queue, never dropped.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from queuewatch.adapters.clients import AwsClients
from queuewatch.settings import SettingsError, TrackSettings, cached_config
from queuewatch.telemetry import record_job
from queuewatch.track import Router
from queuewatch.track.events import WorkflowJobBusEvent
from queuewatch.track.stage import track
from queuewatch.track.webhook import WebhookRequest, receive

logger = Logger()
aws = AwsClients()
SECRET_MAX_AGE_SECONDS = 300  # a rotated secret is picked up within 5 minutes


@lru_cache(maxsize=4)
def router_for(config_file: Path) -> Router:
    """The config's routing, made once per container."""
    return Router(cached_config(config_file))


@logger.inject_lambda_context(log_event=False)  # the event is never logged, whatever the environment says
@event_parser(model=WorkflowJobBusEvent)
def lambda_handler(event: WorkflowJobBusEvent, context: LambdaContext) -> dict[str, Any]:
    settings = TrackSettings.from_env()
    router = router_for(settings.config_file)
    result = track(
        event.detail,
        router,
        aws.dynamodb(),
        settings.jobs_table,
        datetime.now(UTC),
        occurred_at=event.time,  # when the event happened, not when it reached us: a queued event's time
        history=settings.history,
        replayed=event.replay_name is not None,  # EventBridge marks an archive's replay: see track()
    )
    record_job(result, settings.metrics_namespace, settings.per_runner_type_metrics, stack=settings.stack_name)
    logger.info("tracked", extra=result.model_dump(mode="json", exclude_none=True))
    return result.model_dump(mode="json")


@logger.inject_lambda_context(log_event=False)  # a webhook body holds repository details: never logged
def webhook_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, object]:
    settings = TrackSettings.from_env()
    if settings.webhook_secret_arn is None:
        raise SettingsError("WEBHOOK_SECRET_ARN: the webhook needs the secret GitHub signs its deliveries with")
    try:
        request = WebhookRequest.from_function_url(event)
    except ValueError as error:
        logger.warning("refused", extra={"status": 400, "reason": str(error)})
        return {"statusCode": 400, "body": str(error)}
    secret = parameters.get_secret(settings.webhook_secret_arn, max_age=SECRET_MAX_AGE_SECONDS)
    router = router_for(settings.config_file)
    response = receive(
        request, str(secret), router, aws.dynamodb(), settings.jobs_table, datetime.now(UTC), history=settings.history
    )
    if response.result is not None:
        record_job(
            response.result, settings.metrics_namespace, settings.per_runner_type_metrics, stack=settings.stack_name
        )
    log = logger.info if response.status < 400 else logger.warning
    log("webhook", extra={"status": response.status, "reason": response.message})
    return response.for_function_url()
