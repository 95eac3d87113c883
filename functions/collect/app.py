"""CollectFunction: on each scheduled tick, read the queues and metrics and return a Snapshot.

Any scheduled invocation AWS documents starts a tick: an EventBridge rule's event, or EventBridge
Scheduler's, with or without an input (queuewatch/runtime/schedule.py says which time each one gives).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from queuewatch.adapters.aws.clients import AwsClients, Deadline
from queuewatch.collect import collect
from queuewatch.runtime.schedule import ScheduleEvent
from queuewatch.runtime.settings import CollectSettings, cached_config
from queuewatch.runtime.wire import encode_snapshot

logger = Logger()
aws = AwsClients()  # made once per container, reused by warm invocations


@logger.inject_lambda_context(log_event=False)  # the event is never logged, whatever the environment says
@event_parser(model=ScheduleEvent)
def lambda_handler(event: ScheduleEvent, context: LambdaContext) -> dict[str, Any]:
    tick = event.tick(now=datetime.now(UTC), request_id=context.aws_request_id)
    logger.set_correlation_id(tick.tick_id)
    settings = CollectSettings.from_env()
    config = cached_config(settings.config_file)
    aws.start_tick(Deadline.for_tick(context.get_remaining_time_in_millis() / 1000))
    snapshot = collect(
        config,
        aws,
        now=tick.at,  # the scheduled time when the event gives one: ticks order by it
        account_id=context.invoked_function_arn.split(":")[4],
        snapshot_id=tick.tick_id,
        jobs_table=settings.jobs_table,  # tracking on: the jobs GitHub holds queued, read in one paged Query
        slo_table=settings.slo_table,  # with SLOs configured: one Query of each SLO's counters
    )
    degraded = [rt.name for rt in snapshot.runner_types if rt.degraded]
    # Queues discovery found and does not watch under their own name (shadowed ones too): said every tick.
    skipped = [f"{d.region}/{q.queue}: {q.reason}" for d in snapshot.discovery for q in d.skipped_queues]
    logger.info(
        "collected", extra={"runner_types": len(snapshot.runner_types), "degraded": degraded, "skipped": skipped}
    )
    return encode_snapshot(snapshot)  # compressed once large; fails loudly if too large for the destination
