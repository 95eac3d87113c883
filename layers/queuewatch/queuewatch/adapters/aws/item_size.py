"""How big DynamoDB counts an item: the rules of its 400 KB limit, applied to an item as boto3 serializes it.

Attribute names and string values count their UTF-8 bytes, binary values their bytes, a number about one
byte per two significant digits plus one (counted here at its most), booleans and nulls one byte, and each
list or map three bytes plus one byte per element, besides what its elements count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ITEM_LIMIT = 400 * 1024  # bytes: DynamoDB refuses a larger item with a ValidationException
_NUMBER_MOST = 21  # bytes a number takes at most


def item_size(item: Mapping[str, Mapping[str, Any]]) -> int:
    """The size of a serialized item ({"name": {"S": "..."}, ...}) as DynamoDB counts it, never less."""
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def _value_size(value: Mapping[str, Any]) -> int:
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(str(raw).encode())
    if kind == "B":
        return len(raw)
    if kind == "N":
        digits = str(raw).lstrip("-").replace(".", "").strip("0") or "0"
        return min(_NUMBER_MOST, len(digits) // 2 + 2)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(v).encode()) for v in raw)
    if kind == "NS":
        return sum(_value_size({"N": v}) for v in raw)
    if kind == "BS":
        return sum(len(v) for v in raw)
    if kind == "L":
        return 3 + sum(1 + _value_size(v) for v in raw)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in raw.items())
    raise ValueError(f"found a DynamoDB value of type {kind!r}, expected S, N, B, BOOL, NULL, L, M or a set")
