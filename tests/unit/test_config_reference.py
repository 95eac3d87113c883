"""docs/config.md names every key the config schema takes, with the schema's own default.

The reference is written by hand (each key with its meaning and an example), and this test holds it
to the schema both ways: a key added to the schema without a row fails, and so does a row for a key
that no longer exists or a default that differs from the schema's.
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from queuewatch.base.durations import format_duration
from queuewatch.config import Config
from queuewatch.config.schema import BUILTIN_RULE_DEFAULTS
from queuewatch.config.sources import MetricQuery

REFERENCE = Path(__file__).parents[2] / "docs" / "config.md"
ROW = re.compile(r"^\| `(?P<key>[^`]+)` \|(?P<type>[^|]*)\|(?P<default>[^|]*)\|")
METRIC_QUERY = "<metric query>"


def _models_in(annotation: Any) -> list[tuple[str, type[BaseModel]]]:
    """The models an annotation holds, each with the path suffix that reaches it ([] for a list item)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models_in(typing.get_args(annotation)[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [("", annotation)]
    if origin in (list, tuple):
        return [("[]" + suffix, model) for arg in typing.get_args(annotation) for suffix, model in _models_in(arg)]
    if origin is dict:
        # A dict of models is keyed by a signal name: its values are metric queries, documented once.
        return [(".<signal>", model) for suffix, model in _models_in(typing.get_args(annotation)[1])]
    if origin in (typing.Union, types.UnionType):
        return [found for arg in typing.get_args(annotation) for found in _models_in(arg)]
    return []


def schema_keys(model: type[BaseModel] = Config, prefix: str = "") -> dict[str, Any]:
    """Every key path the schema takes, with its default (PydanticUndefined where it has none)."""
    keys: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        path = f"{prefix}{field.alias or name}"
        default = field.get_default(call_default_factory=True) if field.default_factory else field.default
        keys[path] = default
        for suffix, inner in _models_in(field.annotation):
            if inner is MetricQuery:
                keys[f"{path}{suffix}"] = None
                keys.update(schema_keys(MetricQuery, f"{METRIC_QUERY}."))
            else:
                keys.update(schema_keys(inner, f"{path}{suffix}."))
    return keys


def documented_rows() -> dict[str, tuple[str, str]]:
    rows: dict[str, tuple[str, str]] = {}
    _, heading, section = REFERENCE.read_text(encoding="utf-8").partition("\n## Every key\n")
    assert heading, "docs/config.md has no '## Every key' section"
    for line in section.splitlines():
        found = ROW.match(line)
        if found:
            rows[found["key"]] = (found["type"].strip(), found["default"].strip())
    return rows


def rendered(default: Any, key: str) -> str | None:
    """The default as the reference writes it, or None where the row may say it in words."""
    if default is PydanticUndefined:
        return "required"
    if default is None or default in ([], {}, ""):
        return None
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, int) and any(
        word in key for word in ("for", "interval", "lookback", "window", "baseline", "period", "after", "max_age")
    ):
        return f"`{format_duration(default)}`"
    if isinstance(default, list):
        return "`[" + ", ".join(f'"{item}"' for item in default) + "]`"
    if isinstance(default, BaseModel):
        return None
    return f"`{default}`"


def test_every_schema_key_has_a_row_and_every_row_a_key() -> None:
    keys = set(schema_keys())
    rows = set(documented_rows())
    assert not keys - rows, f"keys the schema takes that docs/config.md does not name: {sorted(keys - rows)}"
    assert not rows - keys, f"rows in docs/config.md for keys the schema does not take: {sorted(rows - keys)}"


def test_each_row_gives_the_schemas_default() -> None:
    rows = documented_rows()
    wrong = {}
    for key, default in schema_keys().items():
        expected = rendered(default, key)
        if expected is not None and expected not in rows[key][1]:
            wrong[key] = (rows[key][1], expected)
    assert not wrong, f"defaults in docs/config.md that differ from the schema's (row, schema): {wrong}"


def test_each_rule_row_gives_the_built_in_default() -> None:
    rows = documented_rows()
    wrong = {}
    for field, default in BUILTIN_RULE_DEFAULTS.items():
        key = "rules[]." + ("for" if field == "for_" else field)
        expected = rendered(default, key)
        if expected is not None and expected not in rows[key][1]:
            wrong[key] = (rows[key][1], expected)
    assert not wrong, f"built-in rule defaults that docs/config.md gives otherwise (row, built-in): {wrong}"


def test_the_walk_reaches_nested_keys() -> None:
    keys = schema_keys()
    # If the walk stopped at the top level, the set comparison above would prove little.
    assert "defaults.rule.thresholds.queue_time" in keys
    assert "runner_types[].queue.name" in keys
    assert f"{METRIC_QUERY}.namespace" in keys
