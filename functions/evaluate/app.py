"""EvaluateFunction: the collector's destination. Judges its result, moves alert state, pages."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.typing import LambdaContext

from queuewatch.adapters.clients import AwsClients
from queuewatch.destination import DestinationRecord
from queuewatch.evaluate import Target, evaluate, observation_from
from queuewatch.settings import EvaluateSettings, cached_config
from queuewatch.snapshot import Snapshot
from queuewatch.telemetry import record_tick

logger = Logger()
metrics = Metrics()
aws = AwsClients()


@metrics.log_metrics
@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    record = DestinationRecord.model_validate(event)  # raises pydantic's ValidationError, naming the field
    logger.set_correlation_id(record.request_context.request_id)
    settings = EvaluateSettings.from_env()
    config = cached_config(settings.config_file)
    observation = observation_from(record)
    target = Target(
        table=settings.state_table,
        topic_arn=settings.alert_topic_arn,
        stack=settings.stack_name,
        region=settings.region,
        outbox_lease_seconds=settings.outbox_lease_seconds,
        account_id=context.invoked_function_arn.split(":")[4],
    )
    sns = aws.sns(settings.topic_region)  # the topic may live in another region (docs/SCALE_OUT.md)
    result = evaluate(observation, config, aws.dynamodb(settings.region), sns, target)
    record_tick(metrics, observation if isinstance(observation, Snapshot) else None, result)
    log = logger.error if result.pages_failed else logger.info
    log(
        "evaluated",
        extra=result.model_dump(
            mode="json", include={"outcome", "firing", "pages_sent", "pages_failed", "pages_retried", "degraded"}
        ),
    )
    return result.model_dump(mode="json")
