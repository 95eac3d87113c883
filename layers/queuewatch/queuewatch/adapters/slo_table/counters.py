"""The SLO counters table: good and bad jobs per SLO per hour, and per minute within it (queuewatch/model/slo.py
says which).

Two kinds of item, in one table keyed `pk` (S) and `sk` (S):

- an hour's counter: `pk = slo#<slo name>`, `sk = <hour start, ISO-8601 UTC>#h`, its jobs `good` and `bad`
  (N), and the same jobs by minute: `g<MM>` and `b<MM>` for the minute MM of the hour (under 1 KB even with
  every minute counted, so one write unit). Kept a little past the SLO's longest window. Every window of an
  SLO is one Query of its partition, whatever the fleet and the job volume: the hours from the longest
  window's first (3 days: 73 items, about 50 KB at every minute counted, one page), whole hours counted by
  their totals, the windows' ragged edges by their minutes.
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

from queuewatch.model.slo import HOUR, MINUTE, Counts, Tally, floor_to

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

COUNTER_PREFIX = "slo#"
MARK_PREFIX = "counted#"
MARK_SORT = "-"
EXPIRES_AT = "expires_at"
HOUR_SUFFIX = "#h"  # after the hour's start in an hour counter's sort key
MAX_TRANSACTION = 100  # DynamoDB's items per transaction: the mark and 99 SLOs


@dataclass(frozen=True)
class Contribution:
    """One job's count for one SLO."""

    slo: str
    outcome: Literal["good", "bad"]
    at: datetime  # the moment it turned good or bad
    keep_until: datetime  # the counter's expiry: past the SLO's longest window


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def hour_key(start: datetime) -> str:
    return f"{_iso(start)}{HOUR_SUFFIX}"


def count_job(
    client: DynamoDBClient, table: str, job_id: int, contributions: Sequence[Contribution], mark_until: datetime
) -> bool:
    """Add the job's contributions, once per job: True if this call counted it, False if it was counted
    already. `mark_until` is when the job's mark may expire: after any event of the job can still arrive."""
    if not contributions:
        return False
    if len(contributions) >= MAX_TRANSACTION:
        raise ValueError(f"job {job_id}: {len(contributions)} SLOs, expected at most {MAX_TRANSACTION - 1}")
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
    for contribution in contributions:
        minute = f"{contribution.outcome[0]}{contribution.at.astimezone(UTC).minute:02d}"
        items.append(
            {
                "Update": {
                    "TableName": table,
                    "Key": {
                        "pk": {"S": f"{COUNTER_PREFIX}{contribution.slo}"},
                        "sk": {"S": hour_key(floor_to(contribution.at, HOUR))},
                    },
                    "UpdateExpression": "ADD #outcome :one, #minute :one SET #expires = :expires",
                    "ExpressionAttributeNames": {
                        "#outcome": contribution.outcome,
                        "#minute": minute,
                        "#expires": EXPIRES_AT,
                    },
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


def read_tally(client: DynamoDBClient, table: str, slo: str, longest: int, now: datetime) -> Tally:
    """The SLO's counts for any window up to `longest` seconds at `now`: one paged Query of its partition,
    from the hour holding the window's start (the hours with their minutes)."""
    tally = Tally()
    first = floor_to(now - timedelta(seconds=longest), HOUR)
    for item in _query(client, table, slo, hour_key(first), hour_key(now)):
        if not item["sk"]["S"].endswith(HOUR_SUFFIX):
            continue  # not an hour's counter: nothing else of this layout sorts here, and nothing else is read
        start = datetime.fromisoformat(item["sk"]["S"].removesuffix(HOUR_SUFFIX)).astimezone(UTC)
        tally.hours[start] = _counts(item, "good", "bad")
        for minute in {int(name[1:]) for name in item if name[:1] in "gb" and name[1:].isdigit()}:
            at = start + timedelta(seconds=minute * MINUTE)
            tally.minutes[at] = _counts(item, f"g{minute:02d}", f"b{minute:02d}")
    return tally


def _counts(item: dict[str, Any], good: str, bad: str) -> Counts:
    return Counts(int(item.get(good, {}).get("N", "0")), int(item.get(bad, {}).get("N", "0")))


def _query(client: DynamoDBClient, table: str, slo: str, start: str, end: str) -> Iterator[dict[str, Any]]:
    paginator = client.get_paginator("query")
    for page in paginator.paginate(
        TableName=table,
        KeyConditionExpression="pk = :pk AND sk BETWEEN :start AND :end",
        ExpressionAttributeValues={":pk": {"S": f"{COUNTER_PREFIX}{slo}"}, ":start": {"S": start}, ":end": {"S": end}},
    ):
        yield from page.get("Items", [])
