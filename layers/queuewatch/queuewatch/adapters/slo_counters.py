"""The SLO counters table: good and bad jobs per SLO per minute and per hour (queuewatch/slo.py says which).

These kinds of item, in one table keyed `pk` (S) and `sk` (S):

- a minute's counter: `pk = slo#<slo name>`, `sk = m#<minute start, ISO-8601 UTC>`, `good` and `bad` (N);
- an hour's counter: `sk = <hour start>#h`, the same jobs again, summed by hour. Both are kept a little past
  the SLO's longest window. A window reads its whole hours and only the minutes of its ragged edges
  (queuewatch/slo.py `minute_spans`): a few Queries of the SLO's partition, whatever the fleet and the job
  volume, their items fixed by the windows (the default pairs: 73 hours, and at most 106 minutes in three
  spans: four Queries).
- a legacy counter: `sk = <5-minute bucket start>`, written before minutes and hours; its key sorts among
  the hours', so the hours' Query reads it too until it leaves every window (a job's mark says which layout
  counted it, so none counts twice).
- a job's mark: `pk = counted#<job id>`, `sk = -`, written in the same transaction as the job's counts, on
  the condition that it does not exist. A job is counted once however many times its events arrive, in
  whatever order, and whether Lambda or botocore retries the write (a retried transaction finds the mark
  and is answered as counted).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from botocore.exceptions import ClientError

from queuewatch.slo import HOUR, MINUTE, Counts, Tally, floor_to, minute_spans

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

COUNTER_PREFIX = "slo#"
MARK_PREFIX = "counted#"
MARK_SORT = "-"
EXPIRES_AT = "expires_at"
MINUTE_SORT = "m#"  # before the minute's start: minutes sort apart, so a span of them is read alone
HOUR_SUFFIX = "#h"  # after the hour's start: hours sort among the legacy buckets, read with them in one Query
LEGACY = ""  # a legacy bucket's key is its start alone
MAX_TRANSACTION = 100  # DynamoDB's items per transaction: the mark and a minute and an hour for 49 SLOs


@dataclass(frozen=True)
class Contribution:
    """One job's count for one SLO."""

    slo: str
    outcome: Literal["good", "bad"]
    at: datetime  # the moment it turned good or bad
    keep_until: datetime  # the counter's expiry: past the SLO's longest window


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def sort_key(kind: str, start: datetime) -> str:
    """A counter's sort key: `m#<minute>`, `<hour>#h`, or `<bucket>` for a legacy bucket."""
    return f"{MINUTE_SORT}{_iso(start)}" if kind == MINUTE_SORT else f"{_iso(start)}{kind}"


def count_job(
    client: DynamoDBClient, table: str, job_id: int, contributions: Sequence[Contribution], mark_until: datetime
) -> bool:
    """Add the job's contributions, once per job: True if this call counted it, False if it was counted
    already. `mark_until` is when the job's mark may expire: after any event of the job can still arrive."""
    if not contributions:
        return False
    if 1 + 2 * len(contributions) > MAX_TRANSACTION:
        raise ValueError(f"job {job_id}: {len(contributions)} SLOs, expected at most {(MAX_TRANSACTION - 1) // 2}")
    items: list[dict[str, Any]] = [
        {
            "Put": {
                "TableName": table,
                "Item": {
                    "pk": {"S": f"{MARK_PREFIX}{job_id}"},
                    "sk": {"S": MARK_SORT},
                    EXPIRES_AT: {"N": str(int(mark_until.timestamp()))},
                },
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        }
    ]
    for contribution, kind, seconds in (
        (c, k, s) for c in contributions for k, s in ((MINUTE_SORT, MINUTE), (HOUR_SUFFIX, HOUR))
    ):
        items.append(
            {
                "Update": {
                    "TableName": table,
                    "Key": {
                        "pk": {"S": f"{COUNTER_PREFIX}{contribution.slo}"},
                        "sk": {"S": sort_key(kind, floor_to(contribution.at, seconds))},
                    },
                    "UpdateExpression": "ADD #outcome :one SET #expires = :expires",
                    "ExpressionAttributeNames": {"#outcome": contribution.outcome, "#expires": EXPIRES_AT},
                    "ExpressionAttributeValues": {
                        ":one": {"N": "1"},
                        ":expires": {"N": str(int(contribution.keep_until.timestamp()))},
                    },
                }
            }
        )
    try:
        # The token makes botocore's retry of a transaction that took effect a no-op (for 10 minutes); past
        # that, the mark's condition refuses it. It names the payload too: another event of the job that
        # counts it otherwise (a config changed between them) is judged by the mark, never refused as a
        # mismatch of a token whose first use may have failed.
        client.transact_write_items(TransactItems=items, ClientRequestToken=request_token(job_id, items))  # type: ignore[arg-type]
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code")
        if code != "TransactionCanceledException":
            raise
        reasons = error.response.get("CancellationReasons", [])
        if reasons and reasons[0].get("Code") == "ConditionalCheckFailed":
            return False  # the mark exists: counted already
        raise
    return True


def request_token(job_id: int, items: Sequence[dict[str, Any]]) -> str:
    """The transaction's idempotency token (at most 36 characters): the job, and a digest of what it writes."""
    digest = hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()
    return f"{job_id}-{digest}"[:36]


def read_tally(client: DynamoDBClient, table: str, slo: str, windows: Sequence[int], now: datetime) -> Tally:
    """What the SLO's windows of these lengths at `now` need: the hours and the legacy buckets from the longest
    window's first hour (one Query: their keys sort together by time), and the minutes of the windows' ragged
    edges (one Query per merged span of them)."""
    first = floor_to(now - timedelta(seconds=max(windows, default=0)), HOUR)
    tally = Tally()
    for item in _query(client, table, slo, _iso(first), f"{_iso(now)}{HOUR_SUFFIX}"):
        key = item["sk"]["S"]
        spans = tally.hours if key.endswith(HOUR_SUFFIX) else tally.legacy
        spans[datetime.fromisoformat(key.removesuffix(HOUR_SUFFIX)).astimezone(UTC)] = _counts(item)
    for start, end in minute_spans(now, windows):
        tally.minutes |= read_items(client, table, slo, MINUTE_SORT, start, end - timedelta(seconds=MINUTE))
    return tally


def read_items(
    client: DynamoDBClient, table: str, slo: str, kind: str, start: datetime, last: datetime
) -> dict[datetime, Counts]:
    """The counters of one kind (MINUTE_SORT, HOUR_SUFFIX or LEGACY) starting in [start, last], by start."""
    low, high = sort_key(kind, start), sort_key(kind, last)
    if kind != MINUTE_SORT:
        high = f"{_iso(last)}{HOUR_SUFFIX}"  # hours and legacy buckets share a range: each is kept by its kind
    counts: dict[datetime, Counts] = {}
    for item in _query(client, table, slo, low, high):
        key = item["sk"]["S"]
        if kind != MINUTE_SORT and key.endswith(HOUR_SUFFIX) != (kind == HOUR_SUFFIX):
            continue
        at = datetime.fromisoformat(key.removeprefix(MINUTE_SORT).removesuffix(HOUR_SUFFIX)).astimezone(UTC)
        counts[at] = _counts(item)
    return counts


def _counts(item: dict[str, Any]) -> Counts:
    return Counts(int(item.get("good", {}).get("N", "0")), int(item.get("bad", {}).get("N", "0")))


def _query(client: DynamoDBClient, table: str, slo: str, start: str, end: str) -> Iterator[dict[str, Any]]:
    paginator = client.get_paginator("query")
    for page in paginator.paginate(
        TableName=table,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :start AND :end",
        ExpressionAttributeValues={":pk": {"S": f"{COUNTER_PREFIX}{slo}"}, ":start": {"S": start}, ":end": {"S": end}},
    ):
        yield from page.get("Items", [])


def create_slo_table(client: DynamoDBClient, table: str) -> None:
    """The table as template.yaml declares it; for the local demo, tests and benchmarks."""
    client.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
