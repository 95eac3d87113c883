"""The log of what queuewatch sent: one item per page and topic and outcome, in the state table, expiring.

The items live in partitions of their own, one per UTC day (`sent#2026-11-23`), so the evaluator's one
Query of the `queuewatch` partition never reads them; `queuewatch history` reads one Query per day.

Each item's key is fixed by what it records, and it is written only if absent, so a retried or repeated
evaluation never logs one page twice: a page that reached its topic is keyed by the moment it was made
and its notification id (a second publish of it, after a lost clearing write, finds its item there); a
refused publish is keyed by the tick that tried (the next tick's try is a new attempt, logged anew).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from queuewatch.adapters.state_table.keys import SENT_PREFIX

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

PREFIX = SENT_PREFIX
KEEP = timedelta(days=30)
LISTED = 50  # runner types an item lists; a fleet-wide page's thousands are counted, not listed
ERROR_CHARACTERS = 500
SENT, FAILED = "sent", "failed"

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


@dataclass(frozen=True)
class SentEntry:
    at: datetime  # when the publish was tried
    page_at: datetime  # when the page was made
    notification_id: str
    kind: str  # new, update, repeat, resolved
    outcome: str  # sent or failed
    topic: str  # alert or chat
    rule: str
    group: str
    priority: str
    team: str
    runner_types: tuple[str, ...]  # at most LISTED
    runner_types_affected: int
    subject: str
    error: str | None = None

    @property
    def moment(self) -> datetime:
        """What the key orders by: a sent page's making, a failed try's tick."""
        return self.page_at if self.outcome == SENT else self.at


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


def _key(entry: SentEntry) -> dict[str, str]:
    moment = entry.moment.astimezone(UTC)
    return {
        "pk": f"{PREFIX}{moment:%Y-%m-%d}",
        "sk": f"{_iso(moment)}#{entry.notification_id}#{entry.topic}#{entry.outcome}",
    }


def put_entry(client: DynamoDBClient, table: str, entry: SentEntry) -> bool:
    """Log the outcome unless it is logged already; True if this call wrote it."""
    item: dict[str, Any] = {
        **_key(entry),
        "at": _iso(entry.at),
        "page_at": _iso(entry.page_at),
        "notification_id": entry.notification_id,
        "kind": entry.kind,
        "outcome": entry.outcome,
        "topic": entry.topic,
        "rule": entry.rule,
        "group": entry.group,
        "priority": entry.priority,
        "team": entry.team,
        "runner_types": list(entry.runner_types[:LISTED]) or None,
        "runner_types_affected": entry.runner_types_affected,
        "subject": entry.subject,
        "error": entry.error[:ERROR_CHARACTERS] if entry.error else None,
        "expires_at": int((entry.at + KEEP).timestamp()),
    }
    try:
        client.put_item(
            TableName=table,
            Item={k: _serializer.serialize(v) for k, v in item.items() if v is not None},
            ConditionExpression="attribute_not_exists(sk)",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
            raise
        return False
    return True


def _entry(item: dict[str, Any]) -> SentEntry:
    return SentEntry(
        at=datetime.fromisoformat(item["at"]),
        page_at=datetime.fromisoformat(item["page_at"]),
        notification_id=item["notification_id"],
        kind=item["kind"],
        outcome=item["outcome"],
        topic=item["topic"],
        rule=item["rule"],
        group=item["group"],
        priority=item["priority"],
        team=item["team"],
        runner_types=tuple(item.get("runner_types", [])),
        runner_types_affected=int(item["runner_types_affected"]),
        subject=item["subject"],
        error=item.get("error"),
    )


def read_entries(client: DynamoDBClient, table: str, start: datetime, end: datetime) -> list[SentEntry]:
    """Every outcome tried in [start, end), oldest first: one Query per UTC day (a page made the day before
    and sent after midnight is in that day's partition, so the day before `start` is read too)."""
    entries: list[SentEntry] = []
    day = (start.astimezone(UTC) - timedelta(days=1)).date()
    while day <= end.astimezone(UTC).date():
        kwargs: dict[str, Any] = {
            "TableName": table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": {"S": f"{PREFIX}{day:%Y-%m-%d}"}},
        }
        while True:
            page = client.query(**kwargs)
            for raw in page.get("Items", []):
                entry = _entry({k: _deserializer.deserialize(v) for k, v in raw.items()})
                if start <= entry.at < end:
                    entries.append(entry)
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        day += timedelta(days=1)
    return sorted(entries, key=lambda e: (e.at, e.notification_id, e.topic))
