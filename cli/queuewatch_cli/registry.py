"""Every command of `queuewatch`, in the order --help lists them: main.py builds the parser from this list and
runs the command named, so a command exists only by being here (tests/unit/test_cli_registry.py holds it)."""

from __future__ import annotations

from queuewatch_cli.commands import (
    backtest,
    build,
    capacity,
    check_config,
    demo,
    history,
    routes,
    schema,
    silence,
    slo,
    stack_output,
    status,
    track,
)
from queuewatch_cli.common.command import Command

COMMANDS: tuple[Command, ...] = (
    check_config.COMMAND,
    *demo.COMMANDS,
    schema.COMMAND,
    status.COMMAND,
    history.COMMAND,
    backtest.COMMAND,
    track.COMMAND,
    *build.COMMANDS,
    capacity.COMMAND,
    slo.COMMAND,
    routes.COMMAND,
    stack_output.COMMAND,
    silence.COMMAND,
)
