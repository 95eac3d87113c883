"""DigestFunction: on its own schedule (SloDigestSchedule), each team's weekly SLO digest to the chat topic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.base.errors import QueuewatchError
from queuewatch.digest.stage import DigestTables, send_digests
from queuewatch.runtime.settings import DigestSettings, cached_config

logger = Logger()
aws = AwsClients()
SKEW = timedelta(hours=1)  # a schedule's event is seconds old; one an hour off the clock is refused


def clock() -> datetime:
    return datetime.now(UTC)


@logger.inject_lambda_context(log_event=False)
@event_parser(model=EventBridgeModel)
def lambda_handler(event: EventBridgeModel, context: LambdaContext) -> dict[str, Any]:
    settings = DigestSettings.from_env()
    now = event.time.astimezone(UTC)
    if abs(now - clock()) > SKEW:
        raise QueuewatchError(f"scheduled event time {now.isoformat()} is over {SKEW} from the clock: refused")
    tables = DigestTables(settings.slo_table, settings.jobs_table, settings.state_table)
    sent = send_digests(
        aws.dynamodb(settings.region),
        aws.sns(settings.topic_region),
        settings.chat_topic_arn,
        cached_config(settings.config_file),
        tables,
        now,
        settings.stack_name,
    )
    logger.info("SLO digest sent", extra={"teams": sent})
    return {"teams_sent": sent}
