"""The jobs table: one item per tracked job (queuewatch/model/jobs.py's JobRecord).
This module maps them to items and back, and reads and writes them; the layout is queuewatch/model/jobs.py's.

A job's write is conditional on being further along than what is stored, so duplicates, late events
and two invocations racing on one job converge on the furthest state, with no read first. Each write
carries its invocation's `writer` token and the progress it replaced: when botocore retries a write whose
first attempt took effect (its response lost to a timeout or a 5xx), the retry fails its condition, finds
the item this writer wrote, and is answered as applied, with the progress the first attempt replaced.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from queuewatch.model.jobs import (
    BUCKET,
    EXPIRES_AT,
    HISTORY_INDEX,
    JOB_PREFIX,
    PARTITION_KEY,
    PRIOR_PROGRESS,
    QUEUED_AT,
    QUEUED_BUCKET,
    WRITER,
    JobRecord,
    StoredJob,
    bucket_of,
    history_buckets,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

READ_THREADS = 16  # history buckets read at once: independent Queries, I/O-bound
FILTER_LIMIT = 100  # runner types a read names in its filter (DynamoDB's IN takes at most 100 operands)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat()


def _epoch(value: datetime) -> str:
    return str(int(value.timestamp()))


OPTIONAL = ("runner_type", "html_url", QUEUED_AT, "started_at", "completed_at", BUCKET)
"""Attributes a record may lack: a write removes what its record does not have."""


def _attributes(record: JobRecord) -> dict[str, Any]:
    """The item's attributes other than its key, as the record has them."""
    item: dict[str, Any] = {
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
    if record.queued_at is not None:
        item[QUEUED_AT] = {"S": _iso(record.queued_at)}
    if record.started_at is not None:
        item["started_at"] = {"S": _iso(record.started_at)}
    if record.completed_at is not None:
        item["completed_at"] = {"S": _iso(record.completed_at)}
    bucket = bucket_of(record)
    if bucket is not None:
        item[BUCKET] = {"S": bucket}  # in the history index from the moment it is queued for a runner
    return item


def _moment(item: dict[str, Any], name: str) -> datetime | None:
    value = item[name]["S"] if name in item else None
    return datetime.fromisoformat(value).astimezone(UTC) if value else None


def record_from(item: dict[str, Any]) -> JobRecord:
    def text(name: str) -> str | None:
        return item[name]["S"] if name in item else None

    created = _moment(item, "created_at") or datetime.fromtimestamp(0, UTC)
    status = item["status"]["S"]
    return JobRecord(
        job_id=int(item["job_id"]["N"]),
        run_id=int(item["run_id"]["N"]),
        status=status,
        progress=int(item["progress"]["N"]),
        runner_type=text("runner_type"),
        labels=tuple(label["S"] for label in item.get("labels", {}).get("L", [])),
        label_set=item["label_set"]["S"],
        org=item["org"]["S"],
        repo=item["repo"]["S"],
        html_url=text("html_url"),
        created_at=created,
        queued_at=_moment(item, QUEUED_AT),
        started_at=_moment(item, "started_at"),
        completed_at=_moment(item, "completed_at"),
        updated_at=_moment(item, "updated_at") or datetime.fromtimestamp(0, UTC),
        expires_at=datetime.fromtimestamp(int(item[EXPIRES_AT]["N"]), UTC),
    )


NEW_JOB = -1
"""put_job's answer when the job had no item: no event of it had applied before."""


def job_item(record: JobRecord, writer: str) -> dict[str, Any]:
    """The whole item put_job stores for a job it had no item of: the key, the record's attributes, and the
    writer's token with the progress it replaced (none). For seeding a history in bulk, as the track stage
    would have left it."""
    return {
        PARTITION_KEY: {"S": f"{JOB_PREFIX}{record.job_id}"},
        **_attributes(record),
        PRIOR_PROGRESS: {"N": str(NEW_JOB)},
        WRITER: {"S": writer},
    }


def put_job(
    client: DynamoDBClient, table: str, record: JobRecord, writer: str, *, expect: StoredJob | None = None
) -> int | StoredJob | None:
    """Store the job's state if it is further along than the stored one, and the stored one is as expected:
    with no `expect`, absent or holding the record's queued_at; else exactly `expect`'s progress and queued_at.

    Answers the progress the job had before (NEW_JOB if none), read atomically with the write; or, when the
    write did not take effect, what is stored (the caller decides: a duplicate, or a write to rebase on it),
    or None if the job's item is gone. `writer` is the invocation's token (see the module's docstring)."""
    attributes = _attributes(record)
    names = {"#progress": "progress", "#prior": PRIOR_PROGRESS}
    values: dict[str, Any] = {":progress": {"N": str(record.progress)}, ":new_job": {"N": str(NEW_JOB)}}
    assignments = ["#prior = if_not_exists(#progress, :new_job)", f"{WRITER} = :writer"]
    values[":writer"] = {"S": writer}
    for index, (name, value) in enumerate(sorted(attributes.items())):
        names[f"#a{index}"], values[f":a{index}"] = name, value
        assignments.append(f"#a{index} = :a{index}")
    removed = [name for name in OPTIONAL if name not in attributes]
    for index, name in enumerate(removed):
        names[f"#r{index}"] = name
    expression = "SET " + ", ".join(assignments)
    if removed:
        expression += " REMOVE " + ", ".join(f"#r{index}" for index in range(len(removed)))
    if expect is not None or record.queued_at is not None:
        names["#queued_at"] = QUEUED_AT
    if expect is None:
        names["#pk"] = PARTITION_KEY
        if record.queued_at is None:
            condition = "attribute_not_exists(#pk) OR #progress < :progress"
        else:
            condition = "attribute_not_exists(#pk) OR (#progress < :progress AND #queued_at = :queued_at)"
            values[":queued_at"] = attributes[QUEUED_AT]
    else:
        condition = "#progress = :expected AND #progress < :progress AND "
        values[":expected"] = {"N": str(expect.progress)}
        if expect.queued_at is None:
            condition += "attribute_not_exists(#queued_at)"
        else:
            condition += "#queued_at = :expected_queued_at"
            values[":expected_queued_at"] = {"S": _iso(expect.queued_at)}
    try:
        answer = client.update_item(
            TableName=table,
            Key={PARTITION_KEY: {"S": f"{JOB_PREFIX}{record.job_id}"}},
            UpdateExpression=expression,
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=values,
            ReturnValues="ALL_OLD",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
            raise
        found: dict[str, Any] | None = error.response.get("Item")  # type: ignore[assignment]
        if not found:
            return None
        if found.get(WRITER, {}).get("S") == writer:
            # This writer's own write: an earlier attempt of this call took effect and its answer was lost.
            return int(found.get(PRIOR_PROGRESS, {}).get("N", NEW_JOB))
        stored = record_from(found) if "job_id" in found else None
        if stored is None:
            return None
        return StoredJob(progress=stored.progress, status=stored.status, queued_at=_moment(found, QUEUED_AT))
    before = answer.get("Attributes", {}).get("progress", {}).get("N")
    return NEW_JOB if before is None else int(before)


def _query(client: DynamoDBClient, table: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
    paginator = client.get_paginator("query")
    for page in paginator.paginate(TableName=table, IndexName=HISTORY_INDEX, **kwargs):
        yield from page.get("Items", [])


def queued_jobs(client: DynamoDBClient, table: str) -> Iterator[JobRecord]:
    """Every job queued now, longest queued first: one partition of the history index, paged (1 MB a page,
    about 2,000 jobs)."""
    for item in _query(
        client,
        table,
        KeyConditionExpression="#bucket = :queued",
        ExpressionAttributeNames={"#bucket": BUCKET},
        ExpressionAttributeValues={":queued": {"S": QUEUED_BUCKET}},
    ):
        yield record_from(item)


def read_history(
    client: DynamoDBClient,
    table: str,
    start: datetime,
    end: datetime,
    runner_types: Collection[str | None] | None = None,
    *,
    queued_now: Iterable[JobRecord] | None = None,
) -> Iterator[JobRecord]:
    """Every job queued for a runner in [start, end), each once in its latest state, by when it was queued
    (in no particular order across runner types): for `runner_types` only (None for a job no runner type
    serves), or all of them. One paged Query per UTC day and history shard those runner types hash to, plus
    the jobs queued now: a fixed number of calls whatever the fleet, read units by the jobs in the span.
    A runner type is matched without case, as GitHub compares labels (the caller tells a candidate's jobs
    from a watched one's). Jobs waiting for approval, or that never left it, are not in it. `queued_now`:
    the jobs queued now, if the caller has just read them (queued_jobs), so that partition is not read twice
    in a tick."""
    wanted = set(runner_types) if runner_types is not None else None
    # A discovered runner type is stored in lower case (a candidate): it is read under either spelling.
    folded = {name.lower() if name is not None else None for name in wanted} if wanted is not None else None
    span = {":start": {"S": _iso(start)}, ":end": {"S": _iso(end)}}
    condition = "#bucket = :bucket AND #queued_at BETWEEN :start AND :end"
    names = {"#bucket": BUCKET, "#queued_at": QUEUED_AT}
    filtered: dict[str, Any] = {}
    named = sorted({spelling for name in wanted or () if name is not None for spelling in (name, name.lower())})
    if wanted is not None and None not in wanted and len(named) <= FILTER_LIMIT:
        # Read units count before the filter; the answer, and what crosses the network, after it.
        filtered["FilterExpression"] = "#runner_type IN (" + ", ".join(f":rt{i}" for i in range(len(named))) + ")"
        names["#runner_type"] = "runner_type"
        filtered["ExpressionAttributeValues"] = {**span, **{f":rt{i}": {"S": n} for i, n in enumerate(named)}}

    def bucket(name: str) -> list[JobRecord]:
        values = filtered.get("ExpressionAttributeValues", span)
        kwargs = {k: v for k, v in filtered.items() if k != "ExpressionAttributeValues"}
        items = _query(
            client,
            table,
            KeyConditionExpression=condition,
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={**values, ":bucket": {"S": name}},
            **kwargs,
        )
        return [record_from(item) for item in items]

    def keep(record: JobRecord) -> bool:
        # BETWEEN includes its end; the span does not.
        if record.queued_since >= end:
            return False
        return folded is None or (record.runner_type.lower() if record.runner_type is not None else None) in folded

    # The queued jobs first: a job only ever moves from there to a day's bucket, so one that moves between
    # the reads is found twice (and given once, as it was last read), never missed.
    now_queued = bucket(QUEUED_BUCKET) if queued_now is None else queued_now
    queued = {record.job_id: record for record in now_queued if start <= record.queued_since and keep(record)}
    days = history_buckets(start, end, wanted)
    with ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="history") as pool:
        for first in range(0, len(days), READ_THREADS):  # a round at a time: memory holds one round's jobs
            for records in pool.map(bucket, days[first : first + READ_THREADS]):
                for record in records:
                    if keep(record):
                        queued.pop(record.job_id, None)
                        yield record
    yield from queued.values()
