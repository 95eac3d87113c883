"""CollectFunction: on each scheduled tick, read the queues and metrics and return a Snapshot."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from queuewatch.adapters.clients import AwsClients, Deadline
from queuewatch.collect import collect
from queuewatch.settings import CollectSettings, cached_config
from queuewatch.wire import encode_snapshot

logger = Logger()
aws = AwsClients()  # made once per container, reused by warm invocations


@logger.inject_lambda_context(log_event=False)  # the event is never logged, whatever the environment says
@event_parser(model=EventBridgeModel)
def lambda_handler(event: EventBridgeModel, context: LambdaContext) -> dict[str, Any]:
    logger.set_correlation_id(event.id)
    settings = CollectSettings.from_env()
    config = cached_config(settings.config_file)
    aws.start_tick(Deadline.for_tick(context.get_remaining_time_in_millis() / 1000))
    snapshot = collect(
        config,
        aws,
        now=event.time,  # the tick's scheduled time: ticks order by it, and tests pick any clock
        account_id=context.invoked_function_arn.split(":")[4],
        snapshot_id=event.id,
    )
    degraded = [rt.name for rt in snapshot.runner_types if rt.degraded]
    logger.info("collected", extra={"runner_types": len(snapshot.runner_types), "degraded": degraded})
    return encode_snapshot(snapshot)  # compressed once large; fails loudly if too large for the destination
