"""template.yaml as CloudFormation reads it: short tags (!Sub) in their long form (Fn::Sub), and its Fn::ForEach
loops unrolled, as the AWS::LanguageExtensions transform does: for the build, the moto tables, the tests and the
cost model, which read the resources one logical id at a time."""

from __future__ import annotations

import re
from typing import Any

import yaml

FOREACH = "Fn::ForEach::"


class TemplateLoader(yaml.SafeLoader):
    """A template in short form (!Sub) or long form (Fn::Sub), read as the long form."""


def _long_form(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        assert isinstance(node, yaml.MappingNode)
        value = loader.construct_mapping(node, deep=True)
    if suffix in ("Ref", "Condition"):  # CloudFormation's long forms of these two have no "Fn::"
        return {suffix: value}
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{suffix}": value}


TemplateLoader.add_multi_constructor("!", _long_form)


def expand_loops(template: dict[str, Any]) -> dict[str, Any]:
    """The template with every Fn::ForEach unrolled and every Fn::FindInMap of literal keys looked up.

    Covers what template.yaml uses: literal collections (a list of strings); the identifier as ${Identifier}
    or &{Identifier} in a key, as `Ref: Identifier`, and in Fn::Sub's text; loops inside loops; FindInMap with
    an optional DefaultValue. A loop over a
    parameter's list is refused: its items are known only at deploy time.
    """
    mappings = template.get("Mappings", {})
    return {key: _look_up(_unroll(value, key), mappings) for key, value in template.items()}


def _unroll(node: Any, where: str) -> Any:
    if isinstance(node, list):
        return [_unroll(item, where) for item in node]
    if not isinstance(node, dict):
        return node
    unrolled: dict[str, Any] = {}
    for key, value in node.items():
        if not key.startswith(FOREACH):
            _add(unrolled, key, _unroll(value, f"{where}.{key}"), where)
            continue
        loop = f"{where}.{key}"
        if not (isinstance(value, list) and len(value) == 3):
            raise ValueError(f"{loop}: a loop is [identifier, collection, fragment], got {value!r}")
        identifier, collection, fragment = value
        if not (isinstance(collection, list) and all(isinstance(item, str) for item in collection)):
            raise ValueError(f"{loop}: only a literal list of strings can be unrolled here, got {collection!r}")
        for item in collection:
            for made_key, made in _unroll(_substitute(fragment, identifier, item), loop).items():
                _add(unrolled, made_key, made, loop)
    return unrolled


def _add(into: dict[str, Any], key: str, value: Any, where: str) -> None:
    if key in into:
        raise ValueError(f"{where}: {key} is made twice")
    into[key] = value


def _substitute(node: Any, identifier: str, item: str) -> Any:
    """The fragment for one item, where CloudFormation puts it: the keys, `Ref: Identifier`, and Fn::Sub's text
    (a Sub left with no variable is the plain string it names, as the transform resolves it)."""
    if isinstance(node, list):
        return [_substitute(value, identifier, item) for value in node]
    if not isinstance(node, dict):
        return node
    if node == {"Ref": identifier}:
        return item
    if set(node) == {"Fn::Sub"}:
        sub = node["Fn::Sub"]
        if isinstance(sub, str):
            text = _fill(sub, identifier, item)
            return text if "${" not in text else {"Fn::Sub": text}
        text, variables = sub
        return {"Fn::Sub": [_fill(text, identifier, item), _substitute(variables, identifier, item)]}
    return {_fill(key, identifier, item): _substitute(value, identifier, item) for key, value in node.items()}


def _fill(text: str, identifier: str, item: str) -> str:
    """${Identifier} as the item; &{Identifier} as the item's letters and digits alone."""
    text = text.replace(f"${{{identifier}}}", item)
    return text.replace(f"&{{{identifier}}}", re.sub(r"[^A-Za-z0-9]", "", item))


def _look_up(node: Any, mappings: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_look_up(item, mappings) for item in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"Fn::FindInMap"}:
        args = node["Fn::FindInMap"]
        keys, default = args[:3], args[3]["DefaultValue"] if len(args) == 4 else None
        if all(isinstance(key, str) for key in keys):
            name, top, second = keys
            found = mappings[name].get(top, {}).get(second)
            if found is None and default is None:
                raise ValueError(f"Fn::FindInMap: {name} has no {top}.{second} and no DefaultValue")
            return found if found is not None else default
    return {key: _look_up(value, mappings) for key, value in node.items()}
