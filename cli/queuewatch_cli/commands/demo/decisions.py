"""The demo's last part: `queuewatch capacity` and `queuewatch backtest --suggest` on the history the demo made.

Called once at the end of the demo, inside its moto, with the jobs table part 2 filled and the CloudWatch history
part 1 put. Each prints a few lines: the demo's history is minutes long, so both say how thin it is.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch_cli.commands.backtest import COMMAND as BACKTEST_COMMAND
from queuewatch_cli.commands.backtest.run import run_backtest
from queuewatch_cli.commands.capacity import COMMAND as CAPACITY_COMMAND
from queuewatch_cli.commands.capacity.run import run_capacity
from queuewatch_cli.devkit.handlers import REPO_ROOT

BRIEF_LINES = 6


def show_decisions(out: Callable[[str], None], config: Path, jobs_table: str, region: str, start: datetime) -> bool:
    """Capacity over the tracked jobs (two hours before the demo's first tick to 20 minutes after), and
    --suggest over the demo's CloudWatch history (its first 8 minutes), with its incident listed. True when
    both answered, and capacity said the history is too thin to conclude from."""
    end = start + timedelta(minutes=20)
    when = ["--from", f"{start - timedelta(hours=2):%Y-%m-%dT%H:%M}", "--to", f"{end:%Y-%m-%dT%H:%M}"]
    capacity = ["capacity", "--table", jobs_table, "--region", region, *when, "--target", "p90<5m"]
    out(f"\n=== queuewatch {' '.join(capacity)}\n(how many runners linux.2xlarge needed: its 14 jobs, tracked)")
    lines: list[str] = []
    sized = run_capacity(_parser().parse_args(capacity), now=end + timedelta(minutes=1), out=lines.append)
    capacity_text = "\n".join(lines)
    shown = [line for line in capacity_text.splitlines() if not line.startswith("    arrivals")]
    for line in shown:
        out(line)

    lines = []
    with tempfile.TemporaryDirectory(prefix="queuewatch-demo-") as folder:  # the demo leaves nothing behind
        incidents = Path(folder) / "incidents.txt"
        incidents.write_text(f"{start:%Y-%m-%dT%H:%M}Z  linux.2xlarge  # the demo's incident\n")
        suggest = ["backtest", "--config", str(config.relative_to(REPO_ROOT)), "--from", f"{start:%Y-%m-%dT%H:%M}"]
        suggest += ["--to", f"{start + timedelta(minutes=8):%Y-%m-%dT%H:%M}", "--suggest", "--budget", "1/week"]
        suggest += ["--incidents", "incidents.txt", "--quiet"]
        out(f"\n=== queuewatch {' '.join(suggest)}\n(thresholds that page the demo's incident and nothing else)")
        args = _parser().parse_args(suggest)
        args.config, args.incidents = str(config), str(incidents)
        suggested = run_backtest(args, AwsClients(), now=end + timedelta(minutes=1), out=lines.append)
    text = "\n".join(lines).splitlines()
    tried = [line for line in text if line.startswith("    ") and " page(s), " in line and "besides" in line]
    for line in text:
        if line not in tried:
            out(line)
    return sized == 0 and "thin:" in capacity_text and suggested == 0 and any("chosen:" in line for line in text)


def _parser() -> argparse.ArgumentParser:
    """The two commands the demo runs on its own history, parsed as the command line parses them."""
    parser = argparse.ArgumentParser(prog="queuewatch")
    commands = parser.add_subparsers(dest="command", required=True)
    CAPACITY_COMMAND.add_to(commands)
    BACKTEST_COMMAND.add_to(commands)
    return parser
