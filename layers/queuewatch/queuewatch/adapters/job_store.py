"""The JobsTable (queuewatch.track.schema): one item per job, written so that events converge.

Each write is conditional: it takes effect only if the item is absent or less far along than the event
(status_rank). Of two events racing on one job, or delivered twice, or out of order, the furthest wins,
and a write that loses its condition is not an error. Any other failure (throttled after botocore's
retries, a network error) raises, so Lambda retries the event and, at the last, sends it to the DLQ.

A webhook delivery is claimed with its own item before it is applied, and released if applying fails,
so a redelivery is dropped while a failed delivery can be delivered again.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from queuewatch.track import schema
from queuewatch.track.transitions import JobWrite, Previous

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DELIVERY_KEY_PREFIX = "delivery#"
# GitHub lets a delivery be redelivered for 3 days; a claim outlives that.
DELIVERY_MEMORY = timedelta(days=4)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def _condition_failed(error: ClientError) -> bool:
    return error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


def apply(client: DynamoDBClient, table: str, write: JobWrite) -> Previous | None:
    """Write the job if the event moves it forward; the stored item before it, or None if it did not."""
    values: dict[str, Any] = {
        ":job_id": {"N": str(write.job_id)},
        ":label_set": {"S": write.label_set},
        ":labels": {"L": [{"S": label} for label in write.labels]},
        ":org": {"S": write.org},
        ":repo": {"S": write.repo},
        ":run_id": {"N": str(write.run_id)},
        ":html_url": {"S": write.html_url},
        ":created_at": {"S": _iso(write.created_at)},
        ":status": {"S": write.status},
        ":rank": {"N": str(write.rank)},
        ":updated_at": {"S": _iso(write.updated_at)},
        ":expires_at": {"N": str(_epoch(write.expires_at))},
    }
    names = {
        "#job_id": schema.JOB_ID,
        "#label_set": schema.LABEL_SET,
        "#labels": schema.LABELS,
        "#org": schema.ORG,
        "#repo": schema.REPO,
        "#run_id": schema.RUN_ID,
        "#html_url": schema.HTML_URL,
        "#created_at": schema.CREATED_AT,
        "#status": schema.STATUS,
        "#rank": schema.STATUS_RANK_ATTRIBUTE,
        "#updated_at": schema.UPDATED_AT,
        "#expires_at": schema.EXPIRES_AT,
        "#queued": schema.QUEUED_ATTRIBUTE,
        "#runner_type": schema.RUNNER_TYPE,
    }
    sets = [f"{name} = {name.replace('#', ':')}" for name in names if name not in ("#queued", "#runner_type")]
    removes: list[str] = []
    if write.status == "queued":
        sets.append("#queued = :queued")
        values[":queued"] = {"S": schema.QUEUED_PARTITION}
    else:
        removes.append("#queued")  # leaves the sparse index the moment the job is no longer queued
    if write.runner_type is None:
        removes.append("#runner_type")
    else:
        sets.append("#runner_type = :runner_type")
        values[":runner_type"] = {"S": write.runner_type}
    for attribute, moment in ((schema.STARTED_AT, write.started_at), (schema.COMPLETED_AT, write.completed_at)):
        if moment is not None:
            names[f"#{attribute}"] = attribute
            sets.append(f"#{attribute} = :{attribute}")
            values[f":{attribute}"] = {"S": _iso(moment)}
    expression = "SET " + ", ".join(sets) + (" REMOVE " + ", ".join(removes) if removes else "")
    try:
        answer = client.update_item(
            TableName=table,
            Key={schema.PK: {"S": schema.job_key(write.job_id)}},
            UpdateExpression=expression,
            ConditionExpression="attribute_not_exists(#rank) OR #rank < :rank",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_OLD",
        )
    except ClientError as error:
        if _condition_failed(error):
            return None  # the stored item is as far along or further: a duplicate, or an event overtaken
        raise
    old = answer.get("Attributes") or {}
    rank = old.get(schema.STATUS_RANK_ATTRIBUTE, {}).get("N")
    started = old.get(schema.STARTED_AT, {}).get("S")
    return Previous(
        rank=None if rank is None else int(rank),
        started_at=None if started is None else datetime.fromisoformat(started),
    )


def claim_delivery(client: DynamoDBClient, table: str, delivery_id: str, now: datetime) -> bool:
    """True if this delivery is new; False if it was claimed before (a redelivery)."""
    try:
        client.put_item(
            TableName=table,
            Item={
                schema.PK: {"S": DELIVERY_KEY_PREFIX + delivery_id},
                schema.EXPIRES_AT: {"N": str(_epoch(now + DELIVERY_MEMORY))},
            },
            ConditionExpression="attribute_not_exists(#pk)",
            ExpressionAttributeNames={"#pk": schema.PK},
        )
    except ClientError as error:
        if _condition_failed(error):
            return False
        raise
    return True


def release_delivery(client: DynamoDBClient, table: str, delivery_id: str) -> None:
    client.delete_item(TableName=table, Key={schema.PK: {"S": DELIVERY_KEY_PREFIX + delivery_id}})


def create_table(client: DynamoDBClient, table: str) -> None:
    """The table as template.yaml declares it; for tests, the local demo and benchmarks."""
    client.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": schema.PK, "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": schema.PK, "AttributeType": "S"},
            {"AttributeName": schema.QUEUED_ATTRIBUTE, "AttributeType": "S"},
            {"AttributeName": schema.CREATED_AT, "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": schema.QUEUED_INDEX,
                "KeySchema": [
                    {"AttributeName": schema.QUEUED_ATTRIBUTE, "KeyType": "HASH"},
                    {"AttributeName": schema.CREATED_AT, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
