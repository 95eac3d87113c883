"""`queuewatch stack-output`: one output of a deployed stack, printed alone (outputs.py)."""

from __future__ import annotations

from queuewatch_cli.commands.stack_output.outputs import add_arguments, run_stack_output
from queuewatch_cli.common.command import Command

COMMAND = Command(
    "stack-output", "print one output of a deployed stack, such as AlertTopicArn", add_arguments, run_stack_output
)
