"""`queuewatch slo`: each SLO over its window (report.py), and `--plot`, its error budget burning down (plot.py)."""

from __future__ import annotations

from queuewatch_cli.commands.slo.report import add_arguments, run
from queuewatch_cli.common.command import Command

COMMAND = Command("slo", "each SLO over its window: achieved, budget left, burn rates now", add_arguments, run)
