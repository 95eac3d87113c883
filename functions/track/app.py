"""TrackFunction: one workflow_job event, from the autoscaler's EventBridge bus or GitHub's signed webhook
(a Function URL), applied to the job's item in the JobsTable.

A bus event that cannot be applied raises: Lambda retries it, then sends it to the dead-letter queue.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities import parameters
from aws_lambda_powertools.utilities.typing import LambdaContext

from queuewatch.adapters import job_store
from queuewatch.adapters.clients import AwsClients
from queuewatch.settings import TrackSettings, cached_config
from queuewatch.track import webhook
from queuewatch.track.metrics import record_job
from queuewatch.track.payload import WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.stage import TrackResult, bus_event, parse_bus_event, track

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

logger = Logger()
aws = AwsClients()
SECRET_MAX_AGE = 300  # seconds a warm container keeps the secret: a rotation reaches it within 5 minutes


def clock() -> datetime:
    """The wall clock (tests set their own)."""
    return datetime.now(UTC)


@lru_cache(maxsize=4)
def router_for(path: Path) -> Router:
    return Router.of(cached_config(path))


@logger.inject_lambda_context(log_event=False)  # a webhook body is never logged, whatever the environment says
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    settings = TrackSettings.from_env()
    router = router_for(settings.config_file)
    client = aws.dynamodb(settings.region)

    def apply(job_event: WorkflowJobEvent) -> TrackResult:
        result = track(job_event, router, client, settings.jobs_table, clock())
        record_job(result, namespace=settings.metrics_namespace, stack=settings.stack_name)
        logger.info(
            "tracked",
            extra={
                "job_id": result.job_id,
                "action": result.action,
                "outcome": result.outcome,
                "runner_type": result.runner_type,
            },
        )
        return result

    if "requestContext" in event and "detail-type" not in event:
        return _webhook(event, settings, client, apply)
    apply(parse_bus_event(bus_event(event)))
    return {"ok": True}


def _webhook(
    event: dict[str, Any],
    settings: TrackSettings,
    client: DynamoDBClient,
    apply: Callable[[WorkflowJobEvent], TrackResult],
) -> dict[str, Any]:
    if not settings.webhook_secret_arn:
        return webhook.Response(404, "the webhook way in is off (no WebhookSecretArn)").as_function_url()
    response, _ = webhook.handle(
        webhook.WebhookRequest.of(event),
        secret=lambda: str(parameters.get_secret(settings.webhook_secret_arn, max_age=SECRET_MAX_AGE)),
        claim=lambda delivery: job_store.claim_delivery(client, settings.jobs_table, delivery, clock()),
        release=lambda delivery: job_store.release_delivery(client, settings.jobs_table, delivery),
        apply=apply,
    )
    log = logger.warning if response.status >= 400 else logger.info
    log("webhook", extra={"status": response.status, "reason": response.message})
    return response.as_function_url()
