"""pydantic's validation errors in the config's own words: what was written, and what to write instead.

pydantic says what its Python types expected ("a valid dictionary or instance of QueueRef"); the person
reading the message wrote YAML. Each kind of error pydantic reports is translated here once, so that every
key of the config gets the same kind of message, with the fix written as YAML where one can be guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from queuewatch.base.wording import plural

_PLAIN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:-]*$")


def yaml_value(value: object) -> str:
    """`value` as it would be written in a YAML flow: plain when nothing in it means something to YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return (
            value
            if _PLAIN.match(value) and value.lower() not in {"true", "false", "null", "yes", "no"}
            else ("'" + value.replace("'", "''") + "'")
        )
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {yaml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "[" + ", ".join(_quoted(v) for v in value) + "]"
    return repr(value)


def _quoted(value: object) -> str:
    # In a list, a glob is always quoted: a '*' opening a plain YAML value is an alias.
    return "'" + value.replace("'", "''") + "'" if isinstance(value, str) else yaml_value(value)


def _found(value: object) -> str:
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "an empty list" if not value else f"a list ({plural(len(value), 'item')})"
    return repr(value)


def _choices(expected: str) -> list[str]:
    return re.findall(r"'([^']*)'", expected)


def _one_of(error: Mapping[str, Any], key: str) -> str:
    import difflib  # only bad files need suggestions: kept off the cold start

    choices = _choices(str(error.get("ctx", {}).get("expected", "")))
    found = error.get("input")
    text = str(found)
    close = [c for c in choices if c.lower() == text.strip().lower()] or difflib.get_close_matches(
        text, choices, n=1, cutoff=0.6
    )
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(repr(c) for c in choices)
    return (
        f"found {_found(found)}{hint} expected one of {listed}"
        if hint
        else f"found {_found(found)}, expected one of {listed}"
    )


def _a_list(error: Mapping[str, Any], key: str) -> str:
    found = error.get("input")
    if isinstance(found, str) and "," in found:  # 'self-hosted,linux,x64': one item each
        items = [item.strip() for item in found.split(",") if item.strip()]
        written = "[" + ", ".join(yaml_value(item) if item[:1] != "*" else _quoted(item) for item in items) + "]"
        return f"found {found!r}, a single value where a list goes; write {key}: {written}"
    if isinstance(found, (str, int, float, bool)):
        return f"found {found!r}, a single value where a list goes; write {key}: {yaml_value([found])}"
    return f"found {_found(found)}, expected a list, such as {key}: ['a', 'b']"


def _a_mapping(models: Mapping[str, type[BaseModel]]) -> Callable[[Mapping[str, Any], str], str]:
    def message(error: Mapping[str, Any], key: str) -> str:
        found = error.get("input")
        model = models.get(str(error.get("ctx", {}).get("class_name", "")))
        fields = [f.alias or n for n, f in model.model_fields.items()] if model else []
        if isinstance(found, (str, int, float)) and model is not None:
            for field in fields:  # the first key that takes the value as it is: the one meant
                try:
                    model.model_validate({field: found})
                except ValidationError:
                    continue
                return (
                    f"found {found!r}, a single value where a mapping goes; write {key}: {yaml_value({field: found})}"
                )
        keys = f" with the keys {', '.join(fields)}" if fields else ""
        return f"found {_found(found)}, expected a mapping{keys}"

    return message


_CLOCK_KEYS = {"start", "end"}


def _text(error: Mapping[str, Any], key: str) -> str:
    found = error.get("input")
    if key in _CLOCK_KEYS and isinstance(found, (int, float)) and not isinstance(found, bool):
        if not (isinstance(found, int) and 0 <= found < 24 * 60):
            return f'found {found!r}, a number; expected a 24-hour time HH:MM, quoted, such as {key}: "02:00"'
        # YAML 1.1 reads an unquoted 22:00 as a number in base 60: 22 * 60 + 0 = 1320
        hours, minutes = divmod(found, 60)
        clock = f"{hours:02d}:{minutes:02d}"
        return f'found {found}, YAML\'s reading of an unquoted {hours}:{minutes:02d}; write {key}: "{clock}" (quoted)'
    if isinstance(found, (int, float)) and not isinstance(found, bool):  # YAML read digits as a number
        return f'found {found!r}, a number; write {key}: "{found}" (quoted)'
    return f"found {_found(found)}, expected text: one value, not a list or a mapping"


def _fixed(expected: str) -> Callable[[Mapping[str, Any], str], str]:
    return lambda error, key: f"found {_found(error.get('input'))}, {expected}"


def _bound(word: str, ctx_key: str) -> Callable[[Mapping[str, Any], str], str]:
    return lambda error, key: f"found {_found(error.get('input'))}, expected {word} {error['ctx'][ctx_key]}"


def translator(models: Sequence[type[BaseModel]]) -> Callable[[Mapping[str, Any], str], str | None]:
    """A function from one pydantic error (and the key it is on) to the message, or None for pydantic's own."""
    by_name = {model.__name__: model for model in models}
    messages: dict[str, Callable[[Mapping[str, Any], str], str]] = {
        "literal_error": _one_of,
        "enum": _one_of,
        "list_type": _a_list,
        "model_type": _a_mapping(by_name),
        "dict_type": _a_mapping(by_name),
        "model_attributes_type": _a_mapping(by_name),
        "string_type": _text,
        "int_type": _fixed("expected a whole number"),
        "int_parsing": _fixed("expected a whole number"),
        "int_from_float": _fixed("expected a whole number"),
        "bool_type": _fixed("expected true or false"),
        "bool_parsing": _fixed("expected true or false"),
        "float_parsing": _fixed("expected a number"),
        "float_type": _fixed("expected a number"),
        "greater_than_equal": _bound("at least", "ge"),
        "greater_than": _bound("more than", "gt"),
        "less_than_equal": _bound("at most", "le"),
        "less_than": _bound("less than", "lt"),
        "too_short": lambda error, key: (
            f"found {_found(error.get('input'))}, expected at least {plural(error['ctx']['min_length'], 'item')}"
        ),
        "too_long": lambda error, key: (
            f"found {_found(error.get('input'))}, expected at most {plural(error['ctx']['max_length'], 'item')}"
        ),
    }

    def translate(error: Mapping[str, Any], key: str) -> str | None:
        message = messages.get(str(error["type"]))
        return message(error, key) if message else None

    return translate
