"""The state table: alert state, pending pages and silences (alert_state.py, silences.py) as items of
one DynamoDB partition. This module maps them to items and back, and nothing more.

One Query reads everything the evaluator needs. Items exist only for what is not
OK, so a quiet fleet reads almost nothing. Every write is conditional on the
version read (optimistic locking), so of two evaluations racing on one item only
one wins, and the loser publishes nothing.

Each evaluation stamps its writes with its own `writer` token. When botocore
retries a write whose first attempt took effect (a timeout or a 5xx after DynamoDB
applied it), the retry fails its condition; if the item found is exactly the one
this writer wrote (or, for a delete, is gone), the write did happen, and it is not
a conflict. Another evaluation's item never matches: that stays a WriteConflict.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

from queuewatch.adapters.aws.item_size import item_size
from queuewatch.adapters.state_table.keys import CURSOR, GROUP, INSTANCE, KNOWN, PARTITION, SILENCE, sort_key
from queuewatch.alerting.alert_state import (
    GroupRecord,
    GroupStatus,
    InstanceKey,
    InstanceState,
    Outbox,
    PagedAs,
    PageKind,
    Status,
    StoredState,
    Topic,
)
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.base.errors import QueuewatchError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

RETAIN_AFTER_END = timedelta(days=14)  # TTL for items that are over
WRITER_TOKEN_LENGTH = 32  # an evaluation's stamp: uuid4().hex
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


class WriteConflict(QueuewatchError):
    """Another evaluation changed the item first, or a newer snapshot was applied."""


def _time(value: str) -> datetime:
    """A stored time: written by _iso, in UTC."""
    return datetime.fromisoformat(value)


def _dt(value: str | None) -> datetime | None:
    return _time(value) if value else None


def _iso(value: datetime) -> str:
    """Every time is stored in UTC, so equal instants are equal strings and their order is the strings' order."""
    return value.astimezone(UTC).isoformat()


def _iso_or_none(value: datetime | None) -> str | None:
    return _iso(value) if value else None


def _micros(value: datetime) -> int:
    """The cursor's instant as a number: DynamoDB compares it exactly, whatever the text's offset."""
    return (value - EPOCH) // timedelta(microseconds=1)


def _ttl(moment: datetime) -> int:
    return int((moment + RETAIN_AFTER_END).timestamp())


def load_state(client: DynamoDBClient, table: str) -> StoredState:
    """Everything in the partition, with a strongly consistent read."""
    state = StoredState()
    kwargs: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": {"S": PARTITION}},
        "ConsistentRead": True,
        "ReturnConsumedCapacity": "TOTAL",
    }
    while True:
        page = client.query(**kwargs)
        state.read_units += float(page.get("ConsumedCapacity", {}).get("CapacityUnits", 0.0))
        for raw in page.get("Items", []):
            _absorb(state, {k: _deserializer.deserialize(v) for k, v in raw.items()})
        if "LastEvaluatedKey" not in page:
            return state
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _absorb(state: StoredState, item: dict[str, Any]) -> None:
    sort_key: str = item["sk"]
    kind, _, key = sort_key.partition("#")
    if kind == CURSOR:
        state.applied_at = _dt(item.get("applied_at"))
    elif kind == KNOWN:  # the digest of the names published for the commands (known_names.py)
        state.names_digest = item.get("digest")
    elif kind == INSTANCE:
        state.instances[InstanceKey.parse(key)] = InstanceState(
            rule=item["rule"],
            runner_type=item["runner_type"],
            status=Status(item["status"]),
            since=_time(item["since"]),
            clear_since=_dt(item.get("clear_since")),
            version=int(item["version"]),
            team=item.get("team"),
            reason=item.get("reason"),
            held_by=tuple(item.get("held_by", ())),
            forecast=bool(item.get("forecast", False)),
            happened=bool(item.get("happened", False)),
        )
    elif kind == GROUP:
        outbox = None
        if "outbox" in item:
            raw = item["outbox"]
            outbox = Outbox(
                notification_id=raw["notification_id"],
                subject=raw["subject"],
                message=raw["message"],
                attributes=json.loads(raw["attributes"]),
                message_structure=raw.get("message_structure"),
                claimed_at=_time(raw["claimed_at"]),
                chat_message=raw.get("chat_message"),
                pending=tuple(Topic(t) for t in raw["pending"]),
                kind=PageKind(raw["kind"]),
            )
        status = item.get("status")
        state.groups[key] = GroupRecord(
            rule=item["rule"],
            group=item["group"],
            status=GroupStatus(status) if status else None,
            started_at=_dt(item.get("started_at")),
            members=_members(item),
            last_notified_at=_dt(item.get("last_notified_at")),
            sequence=int(item["sequence"]),
            version=int(item["version"]),
            outbox=outbox,
            paged_as=_paged_as(item.get("paged_as")),
            forecast_only=bool(item.get("forecast_only", False)),
        )
    elif kind == SILENCE:
        state.silences.append(
            SilenceRecord(
                silence_id=key,
                matchers=tuple(item.get("matchers", [])),
                rule=item.get("rule"),
                team=item.get("team"),
                starts_at=_time(item["starts_at"]),
                ends_at=_time(item["ends_at"]),
                author=item["author"],
                comment=item["comment"],
            )
        )


def _paged_as(raw: dict[str, Any] | None) -> PagedAs | None:
    if raw is None:
        return None
    return PagedAs(
        priority=raw["priority"],
        team=raw["team"],
        teams=tuple(raw["teams"]),
        title=raw["title"],
        group_by=raw["group_by"],
        runbook_url=raw.get("runbook_url"),
        dashboard_url=raw.get("dashboard_url"),
        jobs_queued=None if raw.get("jobs_queued") is None else int(raw["jobs_queued"]),
        jobs_queued_basis=raw.get("jobs_queued_basis"),
        likely_cause=raw.get("likely_cause"),
        episode_priority=raw.get("episode_priority"),
    )


@contextmanager
def _conditional(conflict: str, took_effect: Callable[[Any], bool] = lambda _found: False) -> Iterator[None]:
    """A failed condition is a WriteConflict, unless the item found (None: none) shows the write took effect."""
    try:
        yield
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ConditionalCheckFailedException":
            raise
        if not took_effect(error.response.get("Item")):
            raise WriteConflict(conflict) from error


def _put(
    client: DynamoDBClient,
    table: str,
    item: dict[str, Any],
    condition: str,
    values: dict[str, Any],
    writer: str | None = None,
) -> None:
    clean = {k: v for k, v in {**item, "writer": writer}.items() if v is not None}
    serialized = {k: _serializer.serialize(v) for k, v in clean.items()}
    kwargs: dict[str, Any] = {
        "TableName": table,
        "Item": serialized,
        "ConditionExpression": condition,
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }
    if values:
        kwargs["ExpressionAttributeValues"] = {k: _serializer.serialize(v) for k, v in values.items()}
    # Found exactly as this writer wrote it: an earlier attempt of this very write took effect.
    with _conditional(f"{item['sk']} changed underneath", lambda found: writer is not None and found == serialized):
        client.put_item(**kwargs)


def _delete(
    client: DynamoDBClient,
    table: str,
    sort_key: str,
    condition: str,
    values: dict[str, Any],
    writer: str | None = None,
) -> None:
    # Gone, as this delete wanted: an earlier attempt (or a twin of this tick) removed it.
    with _conditional(f"{sort_key} changed underneath", lambda found: writer is not None and found is None):
        client.delete_item(
            TableName=table,
            Key={"pk": {"S": PARTITION}, "sk": {"S": sort_key}},
            ConditionExpression=condition,
            ExpressionAttributeValues={k: _serializer.serialize(v) for k, v in values.items()},
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )


def _version_condition(expected: int) -> tuple[str, dict[str, Any]]:
    if expected == 0:
        return "attribute_not_exists(sk)", {}
    return "version = :expected", {":expected": expected}


def advance_cursor(
    client: DynamoDBClient,
    table: str,
    applied_at: datetime,
    writer: str | None = None,
    *,
    implausible_after: datetime | None = None,
) -> None:
    """Claim the tick: fails if a newer snapshot was applied already.

    The same snapshot may be applied again, so that Lambda's retry of an evaluation that
    failed halfway finishes its work; applying one snapshot twice changes nothing twice.
    Instants compare as numbers (`applied_us`), never as text. A cursor past `implausible_after`
    (a future observation applied before they were refused) is no claim on anything: it is replaced.
    """
    item = {"pk": PARTITION, "sk": CURSOR, "applied_at": _iso(applied_at), "applied_us": _micros(applied_at)}
    condition = "attribute_not_exists(sk) OR applied_us <= :us"
    values: dict[str, Any] = {":us": _micros(applied_at)}
    if implausible_after is not None:
        condition += " OR applied_us > :implausible"
        values[":implausible"] = _micros(implausible_after)
    _put(client, table, item, condition, values, writer)


def put_instance(
    client: DynamoDBClient,
    table: str,
    state: InstanceState,
    expected_version: int,
    now: datetime,
    writer: str | None = None,
) -> None:
    item = {
        "pk": PARTITION,
        "sk": sort_key(INSTANCE, str(state.key)),
        "rule": state.rule,
        "runner_type": state.runner_type,
        "status": state.status.value,
        "since": _iso(state.since),
        "clear_since": _iso_or_none(state.clear_since),
        "team": state.team,
        **({"reason": state.reason} if state.reason else {}),
        **({"held_by": list(state.held_by)} if state.held_by else {}),
        # Written only where set: an alert of a rule without a forecast keeps its item as it was.
        **({"forecast": True} if state.forecast else {}),
        **({"happened": True} if state.happened else {}),
        "version": expected_version + 1,
        "updated_at": _iso(now),
    }
    condition, values = _version_condition(expected_version)
    _put(client, table, item, condition, values, writer)


def delete_instance(
    client: DynamoDBClient, table: str, key: InstanceKey, expected_version: int, writer: str | None = None
) -> None:
    _delete(client, table, sort_key(INSTANCE, str(key)), "version = :expected", {":expected": expected_version}, writer)


def put_group(
    client: DynamoDBClient,
    table: str,
    group: GroupRecord,
    expected_version: int,
    now: datetime,
    writer: str | None = None,
) -> None:
    condition, values = _version_condition(expected_version)
    _put(client, table, _group_item(group, expected_version, now), condition, values, writer)


def group_item_size(group: GroupRecord, now: datetime) -> int:
    """The size DynamoDB will count for this group's item as put_group writes it, writer stamp included."""
    item = {**_group_item(group, group.version, now), "writer": "w" * WRITER_TOKEN_LENGTH}
    return item_size({k: _serializer.serialize(v) for k, v in item.items() if v is not None})


def _group_item(group: GroupRecord, expected_version: int, now: datetime) -> dict[str, Any]:
    outbox = None
    if group.outbox:
        outbox = {
            "notification_id": group.outbox.notification_id,
            "subject": group.outbox.subject,
            "message": group.outbox.message,
            "attributes": json.dumps(group.outbox.attributes),
            "message_structure": group.outbox.message_structure,
            "claimed_at": _iso(group.outbox.claimed_at),
            "chat_message": group.outbox.chat_message,
            "pending": [str(t) for t in group.outbox.pending],
            "kind": str(group.outbox.kind),
        }
        outbox = {k: v for k, v in outbox.items() if v is not None}
    return {
        "pk": PARTITION,
        "sk": sort_key(GROUP, group.key),
        "rule": group.rule,
        "group": group.group,
        "status": group.status.value if group.status else None,
        "started_at": _iso_or_none(group.started_at),
        # Compressed: 5,000 names of up to 128 characters are 660 KB as a list, past the item's 400 KB on their
        # own; as written by the upstream module they share most of their text and shrink some tenfold.
        "members_z": zlib.compress("\n".join(group.members).encode(), 9) if group.members else None,
        "last_notified_at": _iso_or_none(group.last_notified_at),
        "sequence": group.sequence,
        "version": expected_version + 1,
        "outbox": outbox,
        "paged_as": _paged_as_item(group.paged_as),
        "forecast_only": True if group.forecast_only else None,
        "updated_at": _iso(now),
        # A group that is over lingers only until its resolve page is out and the TTL passes.
        "expires_at": _ttl(now) if group.status is None else None,
    }


def _members(item: Mapping[str, Any]) -> tuple[str, ...]:
    """The group's members, stored compressed (members_z); a group without members stores none."""
    packed = item.get("members_z")
    if packed is None:
        return ()
    raw = packed.value if hasattr(packed, "value") else packed
    return tuple(zlib.decompress(bytes(raw)).decode().split("\n"))


def _paged_as_item(paged: PagedAs | None) -> dict[str, Any] | None:
    if paged is None:
        return None
    item = {
        "priority": paged.priority,
        "team": paged.team,
        "teams": list(paged.teams),
        "title": paged.title,
        "group_by": paged.group_by,
        "runbook_url": paged.runbook_url,
        "dashboard_url": paged.dashboard_url,
        "jobs_queued": paged.jobs_queued,
        "jobs_queued_basis": paged.jobs_queued_basis,
        "likely_cause": paged.likely_cause,
        "episode_priority": paged.episode_priority,
    }
    return {k: v for k, v in item.items() if v is not None}


def delete_group(
    client: DynamoDBClient, table: str, key: str, expected_version: int, writer: str | None = None
) -> None:
    _delete(client, table, sort_key(GROUP, key), "version = :expected", {":expected": expected_version}, writer)


def put_silence(client: DynamoDBClient, table: str, silence: SilenceRecord) -> None:
    item = {
        "pk": PARTITION,
        "sk": sort_key(SILENCE, silence.silence_id),
        "matchers": list(silence.matchers),
        "rule": silence.rule,
        "team": silence.team,
        "starts_at": _iso(silence.starts_at),
        "ends_at": _iso(silence.ends_at),
        "author": silence.author,
        "comment": silence.comment,
        "expires_at": _ttl(silence.ends_at),
    }
    _put(client, table, item, "attribute_not_exists(sk)", {})


def end_silence(client: DynamoDBClient, table: str, silence_id: str, at: datetime) -> None:
    """Set a silence's end to `at`; raises WriteConflict if there is no such silence."""
    set_silence_end(client, table, silence_id, at)


def set_silence_end(
    client: DynamoDBClient, table: str, silence_id: str, at: datetime, expected_end: datetime | None = None
) -> None:
    """Move a silence's end to `at` (to expire or extend it); WriteConflict if there is no such silence, or
    its end is no longer `expected_end` (someone else moved it since it was read)."""
    condition = "attribute_exists(sk)"
    values: dict[str, Any] = {":at": {"S": _iso(at)}, ":ttl": {"N": str(_ttl(at))}}
    if expected_end is not None:
        condition += " AND ends_at = :expected"
        values[":expected"] = {"S": _iso(expected_end)}
    with _conditional(f"no silence {silence_id!r}" if expected_end is None else f"silence {silence_id!r} changed"):
        client.update_item(
            TableName=table,
            Key={"pk": {"S": PARTITION}, "sk": {"S": sort_key(SILENCE, silence_id)}},
            UpdateExpression="SET ends_at = :at, expires_at = :ttl",
            ConditionExpression=condition,
            ExpressionAttributeValues=values,
        )
