"""Which stacks an operator command acts on, found by name: `--stack NAME` (or `NAME@REGION`), repeatable.

Each stack's state table, region, dashboard and metrics namespace come from its CloudFormation outputs
(template.yaml's Outputs), so nobody copies a generated table name. Without --stack, the default is the
environment's QUEUEWATCH_STACK (comma-separated), then the `stacks:` of ~/.config/queuewatch/config.yaml
(or $XDG_CONFIG_HOME/queuewatch/config.yaml), as amtool keeps its URL:

    stacks: [queuewatch@us-east-1, queuewatch@eu-west-1]

`--table` names one state table directly and skips the lookup (the stack's name then only names its metrics).
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import yaml
from botocore.exceptions import ClientError

from queuewatch.base.errors import QueuewatchError

STACK_ENV = "QUEUEWATCH_STACK"
DEFAULT_NAMESPACE = "Queuewatch"
STACK_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,127}$")  # CloudFormation's rule for stack names
REGION_NAME = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")


LOCAL_STACK = "queuewatch-demo"
"""The stack `queuewatch local up` registers on its moto server (and the demo names in the commands it prints)."""


class UsageError(QueuewatchError):
    """A flag, or the default standing in for it, is wrong; nothing was read or written."""


class StackNotFound(QueuewatchError):
    """The stack named is not there, or is not a queuewatch stack."""


@dataclass(frozen=True)
class StackRef:
    name: str
    region: str | None  # None: --region, or the default region

    @classmethod
    def parse(cls, text: str, source: str) -> StackRef:
        name, _, region = text.strip().partition("@")
        if not STACK_NAME.match(name):
            raise UsageError(f"{source}: found {text!r}, expected a stack name (letters, digits, '-') or NAME@REGION")
        if region and not REGION_NAME.match(region):
            raise UsageError(f"{source}: found region {region!r} in {text!r}, expected one such as us-east-1")
        return cls(name, region or None)


@dataclass(frozen=True)
class Target:
    """One stack, as the commands need it."""

    stack: str
    region: str
    table: str
    dashboard: str | None = None
    namespace: str = DEFAULT_NAMESPACE
    jobs_table: str | None = None  # the JobsTableName output: absent where tracking is off
    slo_table: str | None = None  # the SloTableName output: the SLOs' counters, where tracking is on

    @property
    def label(self) -> str:
        return f"{self.stack}@{self.region}"


def config_file(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "queuewatch" / "config.yaml"


def default_refs(environ: Mapping[str, str] | None = None) -> list[StackRef]:
    """QUEUEWATCH_STACK, else the config file's `stacks:`; none: []."""
    env = os.environ if environ is None else environ
    if env.get(STACK_ENV, "").strip():
        return [StackRef.parse(part, STACK_ENV) for part in env[STACK_ENV].split(",") if part.strip()]
    path = config_file(env)
    if not path.is_file():
        return []
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as error:
        raise UsageError(f"{path}: not readable YAML: {str(error).splitlines()[0]}") from error
    unknown = sorted(set(document) - {"stacks"}) if isinstance(document, dict) else ["(not a mapping)"]
    stacks = document.get("stacks") if isinstance(document, dict) else None
    if isinstance(stacks, str):
        stacks = [stacks]
    if unknown or not isinstance(stacks, list) or not all(isinstance(s, str) for s in stacks):
        raise UsageError(f"{path}: expected only `stacks: [NAME or NAME@REGION, ...]`, found {document!r}")
    return [StackRef.parse(s, f"{path}: stacks") for s in stacks]


def describe_outputs(cloudformation: Any, name: str) -> dict[str, str]:
    """The stack's outputs by key; StackNotFound when the region holds no such stack."""
    try:
        [stack] = cloudformation.describe_stacks(StackName=name)["Stacks"]
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ValidationError":
            raise
        region = cloudformation.meta.region_name
        raise StackNotFound(f"--stack {name}: no stack of that name in {region} (name it NAME@REGION)") from error
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def find_stack(ref: StackRef, region: str | None, client: Callable[[str, str | None], Any]) -> Target:
    """The stack's table, region, dashboard and namespace from its outputs."""
    cloudformation = client("cloudformation", ref.region or region)
    outputs = describe_outputs(cloudformation, ref.name)
    table = outputs.get("StateTableName")
    where = cloudformation.meta.region_name
    if not table:
        raise StackNotFound(
            f"--stack {ref.name}: the stack in {where} has no StateTableName output; is it a queuewatch stack?"
        )
    return Target(
        ref.name,
        where,
        table,
        outputs.get("DashboardName"),
        outputs.get("MetricsNamespace", DEFAULT_NAMESPACE),
        outputs.get("JobsTableName") or None,
        outputs.get("SloTableName") or None,
    )


def boto_client(service: str, region: str | None) -> Any:
    return boto3.client(service, region_name=region)  # type: ignore[call-overload]


def targets(
    args: argparse.Namespace,
    client: Callable[[str, str | None], Any] = boto_client,
    environ: Mapping[str, str] | None = None,
) -> list[Target]:
    """The stacks the command acts on, each once."""
    table: str | None = getattr(args, "table", None)
    refs = [StackRef.parse(text, "--stack") for text in (getattr(args, "stack", None) or [])]
    if table is not None:
        if len(refs) > 1:
            raise UsageError("--table: names one state table; with several --stack, leave --table out")
        region = refs[0].region if refs and refs[0].region else args.region
        if region is None:
            region = client("dynamodb", None).meta.region_name  # raises NoRegionError if there is none
        namespace = getattr(args, "metrics_namespace", None) or DEFAULT_NAMESPACE
        return [Target(refs[0].name if refs else "queuewatch", region, table, None, namespace)]
    refs = refs or default_refs(environ)
    if not refs:
        raise UsageError(
            f"--stack: none given; expected --stack NAME (or NAME@REGION, repeatable), or a default in "
            f"${STACK_ENV} or {config_file(environ)} (stacks: [NAME]), or --table TABLE"
        )
    found: dict[str, Target] = {}
    for ref in refs:
        target = find_stack(ref, args.region, client)
        found.setdefault(target.label, target)
    return list(found.values())


def targets_of_one(args: argparse.Namespace) -> list[Target]:
    """The one stack a command that reads one stack's tables acts on (backtest, capacity, check-config --stack)."""
    found = targets(args)
    if len(found) > 1:
        raise UsageError(f"--stack: {getattr(args, 'command', 'the command')} reads one stack's tables; name one")
    return found


def add_stack_arguments(parser: argparse.ArgumentParser) -> None:
    """--stack (repeatable), --region, --table: every operator command's way to its stacks."""
    parser.add_argument(
        "--stack",
        action="append",
        metavar="NAME[@REGION]",
        help=f"the queuewatch stack, found by its CloudFormation outputs; repeatable (default: ${STACK_ENV}, "
        "or stacks: in ~/.config/queuewatch/config.yaml)",
    )
    parser.add_argument("--region", default=None, help="the region of stacks named without @REGION")
    parser.add_argument("--table", default=None, help="a state table by name instead of --stack")


def on_table[T](target: Target, call: Callable[[Any, str], T], client: Callable[[str, str | None], Any]) -> T:
    """`call(dynamodb, table)` for the target; a table that is not there is one line naming it."""
    dynamodb = client("dynamodb", target.region)
    try:
        return call(dynamodb, target.table)
    except ClientError as error:
        if error.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
            raise
        raise StackNotFound(
            f"--table: found no table {target.table!r} in {target.region} (--region); expected the stack's "
            "StateTableName (or name the stack: --stack NAME)"
        ) from error
