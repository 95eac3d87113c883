"""EvaluateFunction: the collector's destination. Judges its result, moves alert state, pages."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import urllib3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from queuewatch.adapters.aws.clients import AwsClients, Deadline
from queuewatch.adapters.github_status import read_github_status
from queuewatch.evaluate import Stack
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.forecast_metrics import record_forecasts
from queuewatch.evaluate.stage import evaluate
from queuewatch.evaluate.telemetry import record_tick
from queuewatch.model.snapshot import Snapshot
from queuewatch.runtime.settings import EvaluateSettings, cached_config
from queuewatch.runtime.wire import DestinationRecord, observation_from

logger = Logger()
metrics = Metrics()
aws = AwsClients()
memory = EvaluatorMemory()  # survives warm invocations: see EvaluatorMemory
http = urllib3.PoolManager(num_pools=1, maxsize=1)  # GitHub's status page, where the stack reads it


def clock() -> datetime:
    """The wall clock: an observation implausibly far from it is refused (tests set their own)."""
    return datetime.now(UTC)


@metrics.log_metrics
@logger.inject_lambda_context(log_event=False)  # the event is never logged, whatever the environment says
@event_parser(model=DestinationRecord)
def lambda_handler(record: DestinationRecord, context: LambdaContext) -> dict[str, Any]:
    logger.set_correlation_id(record.request_context.request_id)
    settings = EvaluateSettings.from_env()
    config = cached_config(settings.config_file)
    observation = observation_from(record)
    stack = Stack(
        name=settings.stack_name,
        table=settings.state_table,
        topic_arn=settings.alert_topic_arn,
        region=settings.region,
        outbox_lease_seconds=settings.outbox_lease_seconds,
        chat_topic_arn=settings.chat_topic_arn,
        metrics_namespace=settings.metrics_namespace,
        account_id=context.invoked_function_arn.split(":")[4],
        queue_body=settings.queue_body,
        dashboard_name=settings.dashboard_name,
    )
    aws.start_tick(Deadline.for_tick(context.get_remaining_time_in_millis() / 1000))
    sns = aws.sns(settings.topic_region)  # the topic may live in another region (docs/SCALE_OUT.md)
    github = None
    if settings.github_status_url:
        github = read_github_status(http, clock(), settings.github_status_url)
        if github.error:
            logger.warning("GitHub's status unknown", extra={"error": github.error})
        if github.note:
            logger.warning("GitHub's status read with a caveat", extra={"note": github.note})
    result = evaluate(
        observation, config, aws.dynamodb(settings.region), sns, stack, memory=memory, clock=clock, github=github
    )
    snapshot = observation if isinstance(observation, Snapshot) else None
    record_tick(metrics, snapshot, result, settings.runner_type_metrics, stack=settings.stack_name)
    alerting = {key.runner_type for key in (*result.firing, *result.pending)}
    record_forecasts(
        result.forecast_board,
        metrics.namespace,
        settings.runner_type_metrics,
        stack=settings.stack_name,
        alerting=alerting,
    )
    log = logger.error if result.pages_failed else logger.info
    log(
        "evaluated",
        extra=result.model_dump(
            mode="json", include={"outcome", "firing", "pages_sent", "pages_failed", "pages_retried", "degraded"}
        ),
    )
    return result.model_dump(mode="json")
