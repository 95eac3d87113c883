"""`queuewatch slo`: each SLO over its window, from the stack's SLO counters and the jobs queued now, by the
conventions the live evaluator judges with (queuewatch/model/slo.py, alerting/slo_reading.py): the objective, what was
achieved, the budget left in jobs and as a share, and each burn pair's rates now."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from queuewatch.adapters.jobs_table.jobs import queued_jobs, read_history
from queuewatch.adapters.slo_table.counters import read_tally
from queuewatch.adapters.state_table.sent_log import read_entries
from queuewatch.alerting.slo_reading import add_waiting
from queuewatch.alerting.slo_summary import lines, longest_window, spenders, summarize
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.digest.stage import fired_alerts
from queuewatch.model.jobs import JobRecord
from queuewatch.model.slo import Tally
from queuewatch_cli.common.stacks import UsageError, boto_client, targets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", default=os.environ.get("QUEUEWATCH_CONFIG"), help="the config (default: $QUEUEWATCH_CONFIG)"
    )
    parser.add_argument(
        "--stack",
        action="append",
        metavar="NAME[@REGION]",
        help="the queuewatch stack, found by its CloudFormation outputs (SloTableName, JobsTableName, "
        "StateTableName) (default: $QUEUEWATCH_STACK, or stacks: in ~/.config/queuewatch/config.yaml)",
    )
    parser.add_argument("--region", default=None, help="the region of a stack named without @REGION")
    parser.add_argument("--slo-table", default=None, help="the SLO counters table by name instead of --stack")
    parser.add_argument("--jobs-table", default=None, help="the jobs table by name instead of --stack")
    parser.add_argument("--json", action="store_true", help="the same, as JSON")
    parser.add_argument(
        "--spent-days",
        type=int,
        default=None,
        help="name the runner types and hours whose late jobs spent the budget over the last N days, read from "
        "the jobs' history (default: the whole window, as far as JobHistoryDays keeps it)",
    )
    parser.add_argument("--top", type=int, default=5, help="how many runner types and hours to name")
    parser.add_argument(
        "--plot",
        metavar="FILE.png",
        help="draw each SLO's budget burning down across its window, with its alerts (needs the 'plot' extra)",
    )
    parser.add_argument(
        "--state-table",
        default=None,
        help="with --plot and the tables by name, the state table: its sent log gives the SLO alerts that went out "
        "(kept 30 days); --stack reads it from the stack",
    )


def run(args: argparse.Namespace, now: datetime | None = None, out: Callable[[str], None] = print) -> int:
    if not args.config:
        raise UsageError("--config: none given; expected the stack's config file (or $QUEUEWATCH_CONFIG)")
    config = load_config(args.config)
    if not config.slos:
        raise UsageError(f"--config: {args.config} declares no slos:")
    from queuewatch_cli.common.plotting import plot_problem

    if args.plot and (problem := plot_problem(args.plot)):
        raise UsageError(f"--plot {args.plot}: {problem}")
    now = now or datetime.now(UTC)
    _find_tables(args)
    dynamodb = boto_client("dynamodb", args.region)
    queued = list(queued_jobs(dynamodb, args.jobs_table))
    counted = [read_tally(dynamodb, args.slo_table, slo.name, longest_window(slo), now) for slo in config.resolved_slos]
    summaries = [
        summarize(slo, config, counts, queued, now) for slo, counts in zip(config.resolved_slos, counted, strict=True)
    ]
    if summaries:
        days = max(slo.window for slo in config.resolved_slos) // 86400
        since = now - timedelta(days=args.spent_days if args.spent_days is not None else days)
        history = list(read_history(dynamodb, args.jobs_table, since, now, queued_now=queued))
        spent = [
            spenders(slo, config, history, now, max(since, now - timedelta(seconds=slo.window)), args.top)
            for slo in config.resolved_slos
        ]
        summaries = [
            replace(summary, spent_by_runner_type=by_type, spent_by_hour=by_hour)
            for (by_type, by_hour), summary in zip(spent, summaries, strict=True)
        ]
    if args.json:
        out(json.dumps([asdict(s) for s in summaries], indent=2))
    else:
        for summary in summaries:
            out("\n".join(lines(summary)))
    if args.plot:
        plot(args, config, dynamodb, counted, queued, now)
        if not args.json:
            out(f"each SLO's budget burning down across its window written to {args.plot}")
    return 0


def _find_tables(args: argparse.Namespace) -> None:
    """The stack's SLO, jobs and state tables and region from its outputs, as every command finds its tables;
    --slo-table with --jobs-table name them instead."""
    if args.slo_table and args.jobs_table:
        return
    if args.slo_table or args.jobs_table:
        raise UsageError("--slo-table and --jobs-table: name both tables, or neither and --stack NAME")
    found = targets(argparse.Namespace(stack=args.stack, region=args.region))
    if len(found) > 1:
        raise UsageError("--stack: slo reads one stack's SLOs; name one")
    [target] = found
    if target.slo_table is None or target.jobs_table is None:
        raise UsageError(f"--stack {target.label}: no SloTableName or JobsTableName output: tracking is off there")
    args.slo_table, args.jobs_table, args.region = target.slo_table, target.jobs_table, target.region
    args.state_table = args.state_table or target.table


def plot(
    args: argparse.Namespace,
    config: Config,
    dynamodb: Any,
    counted: list[Tally],
    queued: list[JobRecord],
    now: datetime,
) -> None:
    """--plot: each SLO's burn-down from the counts just read (and the jobs waiting now, as the summary adds
    them), with the SLO's alerts from the sent log when --state-table names it."""
    from queuewatch_cli.commands.slo.plot import burn_down, draw

    slos = config.resolved_slos
    entries = []
    if args.state_table:
        longest = max(slo.window for slo in slos)
        entries = read_entries(dynamodb, args.state_table, now - timedelta(seconds=longest), now)
    charts = []
    for slo, counts in zip(slos, counted, strict=True):
        tally = counts.copy()
        add_waiting(tally, slo, config, queued, now)
        charts.append(burn_down(slo, tally, now, fired_alerts(entries, slo.name), bool(args.state_table)))
    draw(charts, args.plot)
