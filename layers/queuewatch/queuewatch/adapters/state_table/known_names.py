"""The config's names as the evaluator runs it (config/known.py), published in the state table for the commands.

One item, `pk = known`, `sk = config`, outside the `queuewatch` partition, so the evaluator's one Query per
tick never reads it (the names of 5,000 runner types are compressed, as a group's members are), and beside
it in that partition a marker of a few bytes, `sk = known`, holding the names' digest, which that Query
does read. The evaluator puts both only when the digest of the config it runs differs from the marker's
(the first tick after a deploy that changes them), so steady ticks write nothing and the commands learn
a deployed config's rules, teams and maintenance windows within a tick, with one GetItem on the table they
already read. The windows go as their config entries in compressed JSON: a few hundred bytes each.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from queuewatch.adapters.state_table.keys import KNOWN, KNOWN_NAMES_KEY, PARTITION
from queuewatch.config.known import KnownNames
from queuewatch.config.maintenance import MaintenanceWindow

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

KEY = KNOWN_NAMES_KEY
MAX_NAMES_BYTES = 300_000
"""The compressed runner type names kept within DynamoDB's 400 KB item; past it they are left out (the
rules and teams, which the commands check, always fit)."""


def _packed(names: frozenset[str]) -> bytes:
    return zlib.compress("\n".join(sorted(names)).encode(), 9)


def _windows_json(names: KnownNames) -> str:
    return json.dumps([w.model_dump(mode="json") for w in names.windows], sort_keys=True)


def digest(names: KnownNames) -> str:
    """What the item says, as one value: the evaluator writes again only when it changes."""
    text = "\x00".join("\n".join(sorted(part)) for part in (names.rules, names.teams, names.runner_types))
    if names.windows:  # absent from the text without windows: a stack's digest stays what it was
        text += "\x00" + _windows_json(names)
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
    if names.windows:
        item["windows_z"] = {"B": zlib.compress(_windows_json(names).encode(), 9)}
    client.put_item(TableName=table, Item=item)
    # The marker last: one that says the names are published is never ahead of them.
    marker = {"pk": {"S": PARTITION}, "sk": {"S": KNOWN}, "digest": item["digest"]}
    client.put_item(TableName=table, Item=marker)


def _unpacked(raw: Any) -> frozenset[str]:
    text = zlib.decompress(bytes(raw["B"])).decode() if raw else ""
    return frozenset(name for name in text.split("\n") if name)


def _windows(raw: Any) -> tuple[MaintenanceWindow, ...]:
    """The published windows; one this command cannot read (a newer evaluator's, a zone unknown here) is left out."""
    if not raw:
        return ()
    found = []
    for entry in json.loads(zlib.decompress(bytes(raw["B"])).decode()):
        try:
            found.append(MaintenanceWindow.model_validate(entry))
        except ValidationError:
            continue
    return tuple(found)


def read_known(client: DynamoDBClient, table: str) -> tuple[KnownNames, datetime] | None:
    """The names the evaluator last published, and when; None before its first tick."""
    item = client.get_item(TableName=table, Key=KEY, ConsistentRead=True).get("Item")
    if item is None:
        return None
    names = KnownNames(
        rules=_unpacked(item.get("rules_z")),
        teams=_unpacked(item.get("teams_z")),
        runner_types=_unpacked(item.get("runner_types_z")),
        windows=_windows(item.get("windows_z")),
    )
    return names, datetime.fromisoformat(item["written_at"]["S"])
