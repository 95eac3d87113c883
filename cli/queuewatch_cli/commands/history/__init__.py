"""`queuewatch history`: what queuewatch sent over a window (history.py); `--alert`: an alert's state history
(common/alert_history.py, which `status --history` shares)."""

from __future__ import annotations

from queuewatch_cli.commands.history.history import add_arguments, run_history
from queuewatch_cli.common.command import Command

COMMAND = Command(
    "history", "what queuewatch sent: pages, repeats, resolves, failed publishes", add_arguments, run_history
)
