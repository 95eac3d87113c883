"""`queuewatch backtest`: recorded CloudWatch history, or the tracked jobs', replayed through the evaluator's
own plan (run.py); its flags in arguments.py."""

from __future__ import annotations

import argparse

from queuewatch_cli.commands.backtest.arguments import add_arguments
from queuewatch_cli.common.command import Command
from queuewatch_cli.common.stacks import default_refs, targets_of_one


def run_command(args: argparse.Namespace) -> int:
    from queuewatch_cli.commands.backtest.run import run_backtest

    if args.stack or default_refs():  # the stack's region is the default region of runner types naming none
        [target] = targets_of_one(args)
        args.region = args.region or target.region
        args.jobs_table = args.jobs_table or target.jobs_table  # its tracked jobs, where tracking is on
        args.stack_region = target.region  # where its jobs table is, whatever the profile's region
    return run_backtest(args)


COMMAND = Command(
    "backtest",
    "replay the tracked jobs' or CloudWatch's history through the rules: what would have paged",
    add_arguments,
    run_command,
)
