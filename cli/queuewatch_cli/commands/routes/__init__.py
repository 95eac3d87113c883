"""`queuewatch routes test`: where an alert goes, read from the config's routes (routes.py)."""

from __future__ import annotations

from queuewatch_cli.commands.routes.routes import add_arguments, run_routes
from queuewatch_cli.common.command import Command

COMMAND = Command("routes", "the config's receivers and routes: routes test", add_arguments, run_routes)
