"""The config's names as the evaluator runs it (config/known.py), published in the state table for the commands.

One item, `pk = known`, `sk = config`, outside the `queuewatch` partition, so the evaluator's one Query per
tick never reads it. The evaluator puts it once per process and config (a cold start after each deploy),
so the commands learn a deployed config's rules and teams within a tick, with nothing more than the
GetItem they need on the table they already read; the names of 5,000 runner types are compressed, as a
group's members are.
"""

from __future__ import annotations

import hashlib
import zlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from queuewatch.config.known import KnownNames

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

KEY = {"pk": {"S": "known"}, "sk": {"S": "config"}}
MAX_NAMES_BYTES = 300_000
"""The compressed runner type names kept within DynamoDB's 400 KB item; past it they are left out (the
rules and teams, which the commands check, always fit)."""


def _packed(names: frozenset[str]) -> bytes:
    return zlib.compress("\n".join(sorted(names)).encode(), 9)


def digest(names: KnownNames) -> str:
    """What the item says, as one value: the evaluator writes again only when it changes."""
    text = "\x00".join("\n".join(sorted(part)) for part in (names.rules, names.teams, names.runner_types))
    return hashlib.sha256(text.encode()).hexdigest()


def put_known(client: DynamoDBClient, table: str, names: KnownNames, now: datetime) -> None:
    packed = _packed(names.runner_types)
    item: dict[str, Any] = {
        **KEY,
        "rules_z": {"B": _packed(names.rules)},
        "teams_z": {"B": _packed(names.teams)},
        "digest": {"S": digest(names)},
        "written_at": {"S": now.astimezone(UTC).isoformat()},
    }
    if len(packed) <= MAX_NAMES_BYTES:
        item["runner_types_z"] = {"B": packed}
    client.put_item(TableName=table, Item=item)


def _unpacked(raw: Any) -> frozenset[str]:
    text = zlib.decompress(bytes(raw["B"])).decode() if raw else ""
    return frozenset(name for name in text.split("\n") if name)


def read_known(client: DynamoDBClient, table: str) -> tuple[KnownNames, datetime] | None:
    """The names the evaluator last published, and when; None before its first tick."""
    item = client.get_item(TableName=table, Key=KEY, ConsistentRead=True).get("Item")
    if item is None:
        return None
    names = KnownNames(
        rules=_unpacked(item.get("rules_z")),
        teams=_unpacked(item.get("teams_z")),
        runner_types=_unpacked(item.get("runner_types_z")),
    )
    return names, datetime.fromisoformat(item["written_at"]["S"])
