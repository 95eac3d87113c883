"""`queuewatch demo`: the tour of queuewatch on an in-process moto: the harness (harness.py), its parts
(incident.py, tracked.py, escalation.py, slo.py, decisions.py) played by run.py; `demo --config`, the
rehearsal of one's own config (rehearsal.py); and `queuewatch local`, the demo played into a moto server
(local.py). The demo runs the other commands as a person types them: the one package that imports them."""

from __future__ import annotations

import argparse

from queuewatch_cli.commands.demo.local import add_arguments as add_local_arguments
from queuewatch_cli.commands.demo.local import run_local
from queuewatch_cli.common.command import Command


def add_arguments(demo: argparse.ArgumentParser) -> None:
    demo.add_argument("--json", action="store_true", help="also print each page's raw bodies (SNS envelope, JSON)")
    demo.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="rehearse your own config instead: an incident on the runner types it names, each page with the "
        "receivers its routes give it, checked against backtest's replay of the same minutes",
    )


def run_command(args: argparse.Namespace) -> int:
    if args.config:
        from pathlib import Path

        from queuewatch_cli.commands.demo.rehearsal import run_rehearsal

        return run_rehearsal(Path(args.config))
    from queuewatch_cli.commands.demo.run import run_demo

    return run_demo(raw=args.json)


DEMO = Command("demo", "the 114-minute incident, end to end, on an in-process moto", add_arguments, run_command)
LOCAL = Command(
    "local", "a local stack (moto server) to try status, history, silences on", add_local_arguments, run_local
)
COMMANDS = (DEMO, LOCAL)
