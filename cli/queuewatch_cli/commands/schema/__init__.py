"""`queuewatch schema`: the alert message's JSON Schema, as subscribers validate it."""

from __future__ import annotations

import argparse
import json

from queuewatch_cli.common.command import Command


def add_arguments(_schema: argparse.ArgumentParser) -> None:
    """No flags."""


def run(_args: argparse.Namespace) -> int:
    from queuewatch.alerting.alert import alert_json_schema

    print(json.dumps(alert_json_schema(), indent=2))
    return 0


COMMAND = Command("schema", "print the alert message's JSON Schema", add_arguments, run)
