"""`queuewatch stack-output`: one output of a deployed stack, printed alone, for the next command of a deploy.

The several-stacks deploy hands the first stack's AlertTopicArn to the second; this reads it with the boto3
queuewatch already has, so the deploy needs no AWS CLI.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable
from typing import Any

from queuewatch_cli.common.stacks import StackRef, UsageError, boto_client, describe_outputs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stack", required=True, metavar="NAME[@REGION]", help="the stack")
    parser.add_argument("--region", default=None, help="the stack's region, when --stack names none")
    parser.add_argument("output", metavar="OUTPUT", help="the output's key, such as AlertTopicArn")


def run_stack_output(
    args: argparse.Namespace,
    client: Callable[[str, str | None], Any] = boto_client,
    out: Callable[[str], None] = print,
) -> int:
    ref = StackRef.parse(args.stack, "--stack")
    outputs = describe_outputs(client("cloudformation", ref.region or args.region), ref.name)
    if args.output not in outputs:
        near = difflib.get_close_matches(args.output, sorted(outputs), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        known = ", ".join(sorted(outputs))
        raise UsageError(f"stack-output: {ref.name} has no output {args.output!r}{hint} expected one of: {known}")
    out(outputs[args.output])
    return 0
