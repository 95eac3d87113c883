"""`queuewatch status`: alerts pending or firing, silences, the last tick, degraded signals (status.py), each
runner type's forecast (forecasts.py) and each SLO's budget (slos.py); `--history`: one alert's state history."""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime

from queuewatch_cli.common.command import Command
from queuewatch_cli.common.stacks import add_stack_arguments, boto_client
from queuewatch_cli.common.times import parse_moment


def add_arguments(status: argparse.ArgumentParser) -> None:
    add_stack_arguments(status)
    status.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    status.add_argument(
        "--metrics-namespace",
        default=None,
        help="with --table: the evaluator's POWERTOOLS_METRICS_NAMESPACE (--stack reads it from the stack)",
    )
    status.add_argument(
        "--config",
        default=os.environ.get("QUEUEWATCH_CONFIG"),
        help="the stack's config, for when a pending alert fires (default: $QUEUEWATCH_CONFIG)",
    )
    status.add_argument("--no-figures", action="store_true", help="read the state table alone (no GetMetricData)")
    status.add_argument(
        "--history",
        metavar="RULE/RUNNER_TYPE",
        help="that alert's state history over the last 24h instead, as history --alert prints it",
    )


def run(args: argparse.Namespace) -> int:
    if args.history is not None:
        from queuewatch_cli.common.alert_history import show_alert_history

        now = datetime.now(UTC)
        args.alert = args.history
        return show_alert_history(args, parse_moment("24h", now, "--since"), now, boto_client, print)
    from queuewatch_cli.commands.status.status import status

    return status(args)


COMMAND = Command("status", "alerts pending or firing, silences, the last tick, degraded signals", add_arguments, run)
