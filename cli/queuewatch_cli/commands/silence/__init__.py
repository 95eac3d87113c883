"""`queuewatch silence add|list|expire|extend`: silences in each named stack's state table (silences.py)."""

from __future__ import annotations

import argparse
import os

from queuewatch_cli.commands.silence.silences import silence_add, silence_expire, silence_extend, silence_list
from queuewatch_cli.common.command import Command
from queuewatch_cli.common.stacks import add_stack_arguments

ACTIONS = {"add": silence_add, "list": silence_list, "expire": silence_expire, "extend": silence_extend}


def add_arguments(silence: argparse.ArgumentParser) -> None:
    actions = silence.add_subparsers(dest="action", required=True)
    for action in ACTIONS:
        sub = actions.add_parser(action)
        add_stack_arguments(sub)
        if action == "add":
            sub.add_argument(
                "--match",
                action="append",
                help="runner type name or glob, as a rule's match: without @REGION, that key in every region; "
                "repeatable",
            )
            sub.add_argument(
                "--all", action="store_true", help="every runner type instead of --match (never queuewatch's own page)"
            )
            sub.add_argument("--rule", help="only this rule's alerts")
            sub.add_argument(
                "--config",
                default=os.environ.get("QUEUEWATCH_CONFIG"),
                help="the stack's config file, to check --rule and --team against (default: $QUEUEWATCH_CONFIG; "
                "without it, they must be ones the table has alerts for)",
            )
            sub.add_argument("--team", help="only this team's runner types")
            sub.add_argument("--for", dest="duration", required=True, help="how long, such as 2h or 30m")
            sub.add_argument(
                "--start",
                help="when it starts: an ISO time (UTC unless it says) or +2h from now (default: now); the preview "
                "shows what it would hold back then",
            )
            sub.add_argument("--comment", required=True, help="why; shown to everyone who lists silences")
            sub.add_argument("--author", help="defaults to the current user")
        elif action == "list":
            sub.add_argument("--all", action="store_true", help="include expired silences")
            sub.add_argument("--expired", action="store_true", help="only expired silences")
            sub.add_argument("--match", metavar="RUNNER_TYPE", help="only silences covering this runner type")
            sub.add_argument("--author", help="only this author's silences")
        else:
            sub.add_argument("silence_id", help="the silence's id, or a prefix naming one")
            if action == "extend":
                sub.add_argument("--by", required=True, help="how much longer, such as 2h (from now if expired)")


def run(args: argparse.Namespace) -> int:
    return ACTIONS[args.action](args)


COMMAND = Command("silence", "silence alerts: add, list, expire, extend", add_arguments, run)
