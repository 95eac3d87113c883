"""`queuewatch capacity`: what the jobs' history says each runner type needed, and what N runners would give
(run.py, its flags beside it)."""

from __future__ import annotations

import argparse

from queuewatch_cli.commands.capacity.run import add_arguments
from queuewatch_cli.common.command import Command


def run_command(args: argparse.Namespace) -> int:
    from queuewatch_cli.commands.capacity.run import run_capacity
    from queuewatch_cli.common.stacks import UsageError, targets_of_one  # boto3: the pool model's modules stay pure

    if args.table is None:
        [target] = targets_of_one(argparse.Namespace(command=args.command, stack=args.stack, region=args.region))
        if target.jobs_table is None:
            raise UsageError(f"--stack {target.label}: no JobsTableName output: tracking is off there")
        args.table, args.region = target.jobs_table, args.region or target.region
    return run_capacity(args)


COMMAND = Command(
    "capacity",
    "from the jobs' history: what each runner type needed, and how many runners meet a target",
    add_arguments,
    run_command,
)
