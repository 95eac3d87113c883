"""`queuewatch track backfill`: the autoscaler's EventBridge archive replayed into the track rule (backfill.py)."""

from __future__ import annotations

from queuewatch_cli.commands.track.backfill import add_arguments, run
from queuewatch_cli.common.command import Command

COMMAND = Command("track", "job tracking: backfill from the autoscaler's archive", add_arguments, run)
