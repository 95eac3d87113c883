"""`queuewatch check-config`: validate config files (check.py), with `--explain` (explain.py) and each SLO's
budget (slos.py)."""

from __future__ import annotations

import argparse

from queuewatch_cli.common.command import Command
from queuewatch_cli.common.stacks import UsageError, targets_of_one


def add_arguments(check: argparse.ArgumentParser) -> None:
    check.add_argument("paths", nargs="+", metavar="FILE")
    check.add_argument(
        "--explain",
        action="store_true",
        help="print each rule as applied, where every setting comes from, and which runner types it selects",
    )
    check.add_argument(
        "--stack",
        action="append",
        metavar="NAME[@REGION]",
        help="the stack whose jobs table (its JobsTableName output) gives each SLO's budget in jobs at the last "
        "day's volume, and the last day's jobs that map to no runner type, by label set",
    )
    check.add_argument("--jobs-table", default=None, help="the jobs table by name instead of --stack")
    check.add_argument("--region", default=None, help="the stack's (or the jobs table's) region")


def run(args: argparse.Namespace) -> int:
    from queuewatch_cli.commands.check_config.check import check_config

    if args.stack and args.jobs_table is None:
        [target] = targets_of_one(args)
        if target.jobs_table is None:
            raise UsageError(f"--stack {target.label}: no JobsTableName output: tracking is off there")
        args.jobs_table, args.region = target.jobs_table, target.region
    return check_config(args.paths, explain=args.explain, jobs_table=args.jobs_table, region=args.region)


COMMAND = Command("check-config", "validate config files; exit 1 naming every problem", add_arguments, run)
