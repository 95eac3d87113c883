"""template.yaml as CloudFormation reads it: short tags (!Sub) in their long form (Fn::Sub), its Fn::ForEach
loops unrolled, as the AWS::LanguageExtensions transform does, and its nested applications (templates/) written
into it as one stack: for the build, the moto tables, the tests and the cost model, which read the resources one
logical id at a time."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

FOREACH = "Fn::ForEach::"
APPLICATION = "AWS::Serverless::Application"


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


def inline_applications(template: dict[str, Any], read: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """The template with each nested application (`read` gives its template by Location) written into it.

    Each child's parameters become what the parent passes, its conditions and resources join the parent's (a
    resource without a condition takes its application's), and the parent's `Fn::GetAtt [App, Outputs.Name]`
    become that output's value: the stack as one template, as it was before it was nested. A condition the
    parent also has must read the same; a resource may not be made twice.
    """
    resources: dict[str, Any] = {}
    conditions = dict(template.get("Conditions", {}))
    outputs: dict[str, dict[str, Any]] = {}
    for name, resource in template["Resources"].items():
        if resource["Type"] != APPLICATION:
            _add(resources, name, resource, "Resources")
            continue
        properties = resource["Properties"]
        child = _pass(read(properties["Location"]), properties.get("Parameters", {}))
        for condition, definition in child.get("Conditions", {}).items():
            if conditions.setdefault(condition, definition) != definition:
                raise ValueError(f"{name}: its condition {condition} reads otherwise than the parent's")
        for made, child_resource in child["Resources"].items():
            when = child_resource.get("Condition", resource.get("Condition"))
            _add(resources, made, child_resource if when is None else {**child_resource, "Condition": when}, name)
        outputs[name] = {output: value["Value"] for output, value in child.get("Outputs", {}).items()}
    return _outputs({**template, "Conditions": conditions, "Resources": resources}, outputs)


def _sub_text(value: Any) -> str:
    """A value as Fn::Sub's text names it."""
    if isinstance(value, str):
        return value
    if set(value) == {"Ref"}:
        return f"${{{value['Ref']}}}"
    if set(value) == {"Fn::GetAtt"}:
        return "${" + ".".join(value["Fn::GetAtt"]) + "}"
    raise ValueError(f"cannot write {value!r} into a Fn::Sub")


def _replace(node: Any, value_of: Callable[[dict[str, Any]], Any], named: Callable[[str], Any]) -> Any:
    """`node` with each reference `value_of` knows replaced, and each ${name} of a Sub that `named` knows."""
    if isinstance(node, list):
        return [_replace(item, value_of, named) for item in node]
    if not isinstance(node, dict):
        return node
    if (value := value_of(node)) is not None:
        return value
    if set(node) == {"Fn::Sub"}:
        sub = node["Fn::Sub"]
        text, variables = (sub, None) if isinstance(sub, str) else sub

        def fill(match: re.Match[str]) -> str:
            known = named(match[1])
            return match[0] if known is None else _sub_text(known)

        text = re.sub(r"\$\{([^}!]+)\}", fill, text)
        return {"Fn::Sub": text if variables is None else [text, _replace(variables, value_of, named)]}
    return {key: _replace(value, value_of, named) for key, value in node.items()}


def _pass(child: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
    """The child's conditions, resources and outputs with each parameter as the parent passes it."""

    def value_of(node: dict[str, Any]) -> Any:
        return parameters.get(node["Ref"]) if set(node) == {"Ref"} else None

    return {
        key: _replace(child.get(key, {}), value_of, parameters.get) for key in ("Conditions", "Resources", "Outputs")
    }


def _outputs(template: dict[str, Any], outputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    def output(application: str, attribute: str) -> Any:
        if application not in outputs or not attribute.startswith("Outputs."):
            return None
        return outputs[application][attribute.removeprefix("Outputs.")]

    def value_of(node: dict[str, Any]) -> Any:
        return output(*node["Fn::GetAtt"]) if set(node) == {"Fn::GetAtt"} else None

    def named(name: str) -> Any:
        return output(*name.split(".", 1)) if "." in name else None

    return _replace(template, value_of, named)  # type: ignore[no-any-return]


def read_template(path: Path) -> dict[str, Any]:
    """A template as CloudFormation makes it: its loops unrolled and its nested applications (Location, a path
    beside it) written into it, one logical id per resource. For the tests, the moto tables and the cost model."""

    def read(at: Path) -> dict[str, Any]:
        return expand_loops(yaml.load(at.read_text(encoding="utf-8"), Loader=TemplateLoader))

    return inline_applications(read(path), lambda location: read(path.parent / location))
