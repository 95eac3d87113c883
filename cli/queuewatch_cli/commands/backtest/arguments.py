"""`queuewatch backtest`'s flags: the command line's, and the demo's (commands/demo/decisions.py), which parses
the command as a person types it."""

from __future__ import annotations

import argparse


def add_arguments(backtest: argparse.ArgumentParser) -> None:
    backtest.add_argument("--config", required=True, metavar="FILE")
    backtest.add_argument("--compare", metavar="OTHER_FILE", help="a second config: pages only one would send")
    backtest.add_argument("--from", dest="start", required=True, help="ISO time (UTC), or a duration ago: 14d")
    backtest.add_argument("--to", dest="end", default="now", help="ISO time (UTC), 'now' (default), or a duration ago")
    backtest.add_argument("--plot", metavar="FILE.png", help="draw a timeline (needs the 'plot' extra: matplotlib)")
    backtest.add_argument("--region", default=None, help="the default region of runner types that name none")
    backtest.add_argument(
        "--stack",
        action="append",
        metavar="NAME[@REGION]",
        help="the stack whose region and jobs table (JobsTableName output: its tracked jobs are replayed) to use; "
        "one (default: $QUEUEWATCH_STACK, or stacks: in ~/.config/queuewatch/config.yaml)",
    )
    backtest.add_argument("--quiet", action="store_true", help="no progress on stderr")
    backtest.add_argument(
        "--jobs-table",
        metavar="TABLE",
        help="the stack's jobs table (JobsTableName output), named directly: replay the tracked jobs",
    )
    backtest.add_argument(
        "--source",
        choices=("jobs", "cloudwatch"),
        help="the history replayed: the tracked jobs (the default with --jobs-table, as the live rules judge "
        "them) or CloudWatch's queue metrics (the default without)",
    )
    backtest.add_argument(
        "--suggest", action="store_true", help="per rule, propose thresholds and a pending period within --budget"
    )
    backtest.add_argument("--budget", help="--suggest: pages allowed per span, such as 3/day (default 1/week)")
    backtest.add_argument(
        "--incidents", metavar="FILE", help="--suggest: incidents to page, one a line: START [END] [RUNNER_TYPE,...]"
    )
    backtest.add_argument(
        "--forecast",
        nargs="?",
        const="config",
        metavar="HORIZON",
        help="replay each rule with its forecast beside the same rule without it (the tracked jobs): the warning "
        "gained per incident, the forecast pages that did not happen; HORIZON (such as 10m) tries it on every rule "
        "with a queue_time threshold",
    )
    backtest.add_argument(
        "--max",
        type=int,
        metavar="N",
        help="--forecast: the autoscaler's maximum runners for runner types whose config gives no "
        "runners_maximum_count",
    )
    backtest.add_argument(
        "--runner-counts",
        metavar="FILE",
        help="--forecast: the scale-up's Current runners counts, CSV with columns time,runner_type,runners,maximum",
    )
