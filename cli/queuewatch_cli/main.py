"""The `queuewatch` command line: config checks, silences, status, history, backtests, capacity, SLO reports
(slo), job tracking's backfill (track), the alert schema, where an alert goes (routes), a stack's outputs
(stack-output), the stack parameters a config decides (deploy-parameters), the demo and a local stack."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from queuewatch_cli.common.failures import BAD_REQUEST, DEBUG_ENV, EXIT_CODES, failure
from queuewatch_cli.registry import COMMANDS

BY_NAME = {command.name: command for command in COMMANDS}


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (and exit 2), not the usage block."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(BAD_REQUEST)


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = Parser(
        prog="queuewatch",
        description=__doc__,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_to(commands)
    return parser


def run(args: argparse.Namespace) -> int:
    return BY_NAME[args.command].run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """The command; any error is one line on stderr and an exit code (common/failures.py), never a traceback."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help, or a usage error already said in one line
        return done.code if isinstance(done.code, int) else BAD_REQUEST
    try:
        return run(args)
    except Exception as error:
        if os.environ.get(DEBUG_ENV):
            raise
        found = failure(error)
        if found.message:
            print(f"queuewatch: {found.message}", file=sys.stderr)
        return found.code
    except KeyboardInterrupt:
        print("queuewatch: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
