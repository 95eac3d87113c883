"""The jobs table: one item per tracked job (track/jobs.py's JobRecord).
This module maps them to items and back, and nothing more; the layout is track/schema.py's.

A job's write is conditional on being further along than what is stored, so duplicates, late events
and two invocations racing on one job converge on the furthest state, with no read first.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from queuewatch.track.jobs import JobRecord
from queuewatch.track.schema import (
    EXPIRES_AT,
    JOB_PREFIX,
    PARTITION_KEY,
    QUEUED_INDEX,
    QUEUED_KEY,
    QUEUED_SORT_KEY,
    QUEUED_VALUE,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


def _epoch(value: datetime) -> str:
    return str(int(value.timestamp()))


def _item(record: JobRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        PARTITION_KEY: {"S": f"{JOB_PREFIX}{record.job_id}"},
        "job_id": {"N": str(record.job_id)},
        "run_id": {"N": str(record.run_id)},
        "status": {"S": record.status},
        "progress": {"N": str(record.progress)},
        "labels": {"L": [{"S": label} for label in record.labels]},
        "label_set": {"S": record.label_set},
        "org": {"S": record.org},
        "repo": {"S": record.repo},
        "created_at": {"S": _iso(record.created_at)},
        "updated_at": {"S": _iso(record.updated_at)},
        EXPIRES_AT: {"N": _epoch(record.expires_at)},
    }
    if record.runner_type is not None:
        item["runner_type"] = {"S": record.runner_type}
    if record.html_url:
        item["html_url"] = {"S": record.html_url}
    if record.started_at is not None:
        item["started_at"] = {"S": _iso(record.started_at)}
    if record.completed_at is not None:
        item["completed_at"] = {"S": _iso(record.completed_at)}
    if record.queued:
        item[QUEUED_KEY] = {"S": QUEUED_VALUE}  # in the sparse index only while queued
    return item


def record_from(item: dict[str, Any]) -> JobRecord:
    def text(name: str) -> str | None:
        return item[name]["S"] if name in item else None

    def moment(name: str) -> datetime | None:
        value = text(name)
        return datetime.fromisoformat(value).astimezone(UTC) if value else None

    return JobRecord(
        job_id=int(item["job_id"]["N"]),
        run_id=int(item["run_id"]["N"]),
        status=item["status"]["S"],
        progress=int(item["progress"]["N"]),
        runner_type=text("runner_type"),
        labels=tuple(label["S"] for label in item.get("labels", {}).get("L", [])),
        label_set=item["label_set"]["S"],
        org=item["org"]["S"],
        repo=item["repo"]["S"],
        html_url=text("html_url"),
        created_at=moment("created_at") or datetime.fromtimestamp(0, UTC),
        started_at=moment("started_at"),
        completed_at=moment("completed_at"),
        updated_at=moment("updated_at") or datetime.fromtimestamp(0, UTC),
        expires_at=datetime.fromtimestamp(int(item[EXPIRES_AT]["N"]), UTC),
    )


NEW_JOB = -1
"""put_job's answer when the job had no item: no event of it had applied before."""


def put_job(client: DynamoDBClient, table: str, record: JobRecord) -> int | None:
    """Store the job's state if it is further along than the stored one. The progress the job had
    before (NEW_JOB if none), read atomically with the write; None when the write did not take effect (a
    duplicate, or an event that arrived after a later one)."""
    try:
        answer = client.put_item(
            TableName=table,
            Item=_item(record),
            ConditionExpression="attribute_not_exists(#pk) OR progress < :progress",
            ExpressionAttributeNames={"#pk": PARTITION_KEY},
            ExpressionAttributeValues={":progress": {"N": str(record.progress)}},
            ReturnValues="ALL_OLD",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
            return None
        raise
    before = answer.get("Attributes", {}).get("progress", {}).get("N")
    return NEW_JOB if before is None else int(before)


def queued_jobs(client: DynamoDBClient, table: str) -> Iterator[JobRecord]:
    """Every job queued now, oldest first: the sparse index, paged (1 MB a page, about 2,000 jobs)."""
    paginator = client.get_paginator("query")
    pages = paginator.paginate(
        TableName=table,
        IndexName=QUEUED_INDEX,
        KeyConditionExpression="#queued = :queued",
        ExpressionAttributeNames={"#queued": QUEUED_KEY},
        ExpressionAttributeValues={":queued": {"S": QUEUED_VALUE}},
    )
    for page in pages:
        for item in page.get("Items", []):
            yield record_from(item)


def create_jobs_table(client: DynamoDBClient, table: str) -> None:
    """The table as template.yaml declares it; for the local demo, tests and benchmarks."""
    client.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": PARTITION_KEY, "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": PARTITION_KEY, "AttributeType": "S"},
            {"AttributeName": QUEUED_KEY, "AttributeType": "S"},
            {"AttributeName": QUEUED_SORT_KEY, "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": QUEUED_INDEX,
                "KeySchema": [
                    {"AttributeName": QUEUED_KEY, "KeyType": "HASH"},
                    {"AttributeName": QUEUED_SORT_KEY, "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
    )
