"""The job sources' heartbeats in the jobs table (queuewatch/model/job_sources.py): written by the track stage at
most once a minute per container and source, read by the collector in one BatchGetItem a tick."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from queuewatch.model.job_sources import (
    GAP_PREFIX,
    MATCHER_ERROR_LENGTH,
    SOURCE_PREFIX,
    SOURCES,
    JobSourceBeat,
    Source,
    gap_days,
    normal_gap,
)
from queuewatch.model.jobs import PARTITION_KEY

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

LAST = "last_event_at"
MATCHER_ERROR = "matcher_error"  # why the autoscaler's matcher config could not be read, while it cannot


def _key(source: str) -> dict[str, dict[str, str]]:
    return {PARTITION_KEY: {"S": f"{SOURCE_PREFIX}{source}"}}


def _conditional_failed(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def beat(client: DynamoDBClient, table: str, source: Source, now: datetime, matcher_error: str | None = None) -> None:
    """Record an event from `source` at `now`: never moves the time back, and keeps the gap it ends as that
    day's longest if it is (two conditional writes at most; a lost race changes nothing that matters).
    `matcher_error`: the autoscaler's matcher config could not be read, and why; None clears it."""
    stamp = now.astimezone(UTC).isoformat()
    values: dict[str, Any] = {":now": {"S": stamp}}
    update = "SET #last = :now REMOVE #matcher"
    if matcher_error is not None:
        update = "SET #last = :now, #matcher = :matcher"
        values[":matcher"] = {"S": matcher_error[:MATCHER_ERROR_LENGTH]}
    try:
        answer = client.update_item(
            TableName=table,
            Key=_key(source),
            UpdateExpression=update,
            ConditionExpression="attribute_not_exists(#last) OR #last < :now",
            ExpressionAttributeNames={"#last": LAST, "#matcher": MATCHER_ERROR},
            ExpressionAttributeValues=values,
            ReturnValues="UPDATED_OLD",
        )
    except ClientError as error:
        if _conditional_failed(error):
            return  # a later event was recorded already
        raise
    previous = answer.get("Attributes", {}).get(LAST, {}).get("S")
    if previous is None:
        return
    gap = round((now - datetime.fromisoformat(previous)).total_seconds())
    try:
        client.update_item(
            TableName=table,
            Key=_key(source),
            UpdateExpression="SET #gap = :gap",
            ConditionExpression="attribute_not_exists(#gap) OR #gap < :gap",
            ExpressionAttributeNames={"#gap": f"{GAP_PREFIX}{gap_days(now)[0]}"},
            ExpressionAttributeValues={":gap": {"N": str(gap)}},
        )
    except ClientError as error:
        if not _conditional_failed(error):
            raise


def read_beats(client: DynamoDBClient, table: str, now: datetime, floor: float = 0) -> list[JobSourceBeat]:
    """Every source heard from, with its normal gap over the normal's days, outages left out (`floor`: the
    monitor's job_source_quiet_after): one BatchGetItem."""
    answer = client.batch_get_item(RequestItems={table: {"Keys": [_key(source) for source in SOURCES]}})
    if answer.get("UnprocessedKeys"):  # throttled: unknown is not quiet, and not all-clear either
        raise RuntimeError("the job sources' heartbeats were not read: DynamoDB left keys unprocessed")
    days = set(gap_days(now))
    beats = []
    for item in answer.get("Responses", {}).get(table, []):
        source = item[PARTITION_KEY]["S"].removeprefix(SOURCE_PREFIX)
        daily = {
            k[len(GAP_PREFIX) :]: float(v["N"])
            for k, v in item.items()
            if k.startswith(GAP_PREFIX) and k[len(GAP_PREFIX) :] in days
        }
        normal, outage = normal_gap(daily, floor)
        beats.append(
            JobSourceBeat.model_validate(
                {
                    "source": source,
                    "last_event_at": item[LAST]["S"],
                    "longest_gap_seconds": normal,
                    "outage_gap_seconds": outage,
                    "matcher_error": item.get(MATCHER_ERROR, {}).get("S"),
                }
            )
        )
    return sorted(beats, key=lambda b: b.source)
