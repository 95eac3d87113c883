"""The state history of each alert: one item per change of an instance's status (pending, firing, resolved,
back to ok) and per change of what holds it back (silenced, unsilenced), with the figures that made it, kept
as long as the sent log (sent_log.KEEP).

The items live in a partition per alert, `transition#<rule>#<runner type>`, so the evaluator's one Query
of the `queuewatch` partition never reads them and `queuewatch history --alert` reads one Query. The
evaluator writes one for each instance change its tick wrote, once the tick's pages are out
(evaluate/stage.py), keyed by the tick's observation time and the new status, and only if absent: a
retried or repeated evaluation of the same tick finds it there and records nothing twice; a tick that
lost its race for the instances records nothing. A tick that dies between its instance writes and
these puts leaves those changes unrecorded (its retry finds nothing left to change).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from queuewatch.adapters.state_table.keys import TRANSITION_PREFIX
from queuewatch.adapters.state_table.sent_log import KEEP

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

PREFIX = TRANSITION_PREFIX
SILENCES_LISTED = 10

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


@dataclass(frozen=True)
class Transition:
    at: datetime  # the observation that made the change
    rule: str
    runner_type: str
    status: str  # pending, firing, resolved (from firing), ok (a pending alert that cleared), silenced, unsilenced
    previous: str  # ok, pending or firing
    queue_size: float | None = None
    queue_time: float | None = None  # seconds
    breached: tuple[str, ...] = ()  # the signals over their thresholds
    silenced_by: tuple[str, ...] = ()  # what holds it back then (silence ids, window:<name>); unsilenced: what held it
    team: str | None = None


def partition(rule: str, runner_type: str) -> str:
    return f"{PREFIX}{rule}#{runner_type}"


def put_transition(client: DynamoDBClient, table: str, transition: Transition) -> bool:
    """Record the change unless it is recorded already; True if this call wrote it."""
    item: dict[str, Any] = {
        "pk": partition(transition.rule, transition.runner_type),
        "sk": f"{transition.at.astimezone(UTC).isoformat()}#{transition.status}",
        "status": transition.status,
        "previous": transition.previous,
        "queue_size": transition.queue_size,
        "queue_time": transition.queue_time,
        "breached": list(transition.breached) or None,
        "silenced_by": list(transition.silenced_by[:SILENCES_LISTED]) or None,
        "team": transition.team,
        "expires_at": int((transition.at + KEEP).timestamp()),
    }
    try:
        client.put_item(
            TableName=table,
            Item={k: _serializer.serialize(v) for k, v in _decimal_safe(item).items() if v is not None},
            ConditionExpression="attribute_not_exists(sk)",
        )
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
            raise
        return False
    return True


def _decimal_safe(item: dict[str, Any]) -> dict[str, Any]:
    """DynamoDB's serializer takes no floats: figures go as text-exact Decimals."""
    return {k: Decimal(repr(v)) if isinstance(v, float) else v for k, v in item.items()}


def read_transitions(client: DynamoDBClient, table: str, rule: str, runner_type: str) -> list[Transition]:
    """The alert's changes, oldest first: one paged Query of its partition."""
    kwargs: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": partition(rule, runner_type)}},
    }
    found: list[Transition] = []
    while True:
        page = client.query(**kwargs)
        for raw in page.get("Items", []):
            item = {k: _deserializer.deserialize(v) for k, v in raw.items()}
            found.append(
                Transition(
                    at=datetime.fromisoformat(item["sk"].rsplit("#", 1)[0]),
                    rule=rule,
                    runner_type=runner_type,
                    status=item["status"],
                    previous=item["previous"],
                    queue_size=float(item["queue_size"]) if "queue_size" in item else None,
                    queue_time=float(item["queue_time"]) if "queue_time" in item else None,
                    breached=tuple(item.get("breached", [])),
                    silenced_by=tuple(item.get("silenced_by", [])),
                    team=item.get("team"),
                )
            )
        if "LastEvaluatedKey" not in page:
            return found
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
