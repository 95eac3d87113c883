"""The `queuewatch` command line: config checks, silences, status, backtests, job tracking's backfill, the alert
schema, the demo."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from queuewatch.config.load import ConfigError, load_config
from queuewatch.wording import plural
from queuewatch_cli.backfill import add_parser as add_track_parser
from queuewatch_cli.backfill import run as run_track
from queuewatch_cli.capacity.run import add_parser as add_capacity_parser
from queuewatch_cli.silences import silence_add, silence_expire, silence_list


def check_config(paths: Sequence[str]) -> int:
    failed = 0
    for path in paths:
        try:
            config = load_config(path)
        except ConfigError as error:
            print(error, file=sys.stderr)
            failed += 1
            continue
        rules = ", ".join(rule.name for rule in config.resolved_rules)
        print(
            f"{path}: OK: {plural(len(config.runner_types), 'runner type')}, "
            f"{plural(len(config.discovery), 'discovery pattern')}, "
            f"rules: {rules}"
        )
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="queuewatch", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check-config", help="validate config files; exit 1 naming every problem")
    check.add_argument("paths", nargs="+", metavar="FILE")

    commands.add_parser("demo", help="the 114-minute incident, end to end, on an in-process moto")
    commands.add_parser("schema", help="print the alert message's JSON Schema")

    status = commands.add_parser("status", help="alerts pending or firing, silences, the last tick, degraded signals")
    status.add_argument("--table", required=True, help="the stack's state table")
    status.add_argument("--region", default=None)
    status.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    status.add_argument(
        "--metrics-namespace",
        default="Queuewatch",
        help="the evaluator's POWERTOOLS_METRICS_NAMESPACE, where the latest figures are read",
    )
    status.add_argument(
        "--stack", default="queuewatch", help="the stack's name, whose evaluator's metrics hold the latest figures"
    )
    status.add_argument("--no-figures", action="store_true", help="read the state table alone (no GetMetricData)")

    backtest = commands.add_parser(
        "backtest", help="replay the tracked jobs' or CloudWatch's history through the rules: what would have paged"
    )
    backtest.add_argument("--config", required=True, metavar="FILE")
    backtest.add_argument("--compare", metavar="OTHER_FILE", help="a second config: pages only one would send")
    backtest.add_argument("--from", dest="start", required=True, help="ISO time (UTC), or a duration ago: 14d")
    backtest.add_argument("--to", dest="end", default="now", help="ISO time (UTC), 'now' (default), or a duration ago")
    backtest.add_argument("--plot", metavar="FILE.png", help="draw a timeline (needs the 'plot' extra: matplotlib)")
    backtest.add_argument("--region", default=None, help="the default region of runner types that name none")
    backtest.add_argument("--quiet", action="store_true", help="no progress on stderr")
    backtest.add_argument(
        "--jobs-table", metavar="TABLE", help="the stack's jobs table (JobsTable output): replay the tracked jobs"
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
    add_track_parser(commands)
    add_capacity_parser(commands)

    silence = commands.add_parser("silence", help="silence alerts: add, list, expire")
    actions = silence.add_subparsers(dest="action", required=True)
    for action in ("add", "list", "expire"):
        sub = actions.add_parser(action)
        sub.add_argument("--table", required=True, help="the stack's state table")
        sub.add_argument("--region", default=None)
        if action == "add":
            sub.add_argument("--match", action="append", help="runner type name or glob; repeatable")
            sub.add_argument(
                "--all", action="store_true", help="every runner type instead of --match (never queuewatch's own page)"
            )
            sub.add_argument("--rule", help="only this rule's alerts")
            sub.add_argument(
                "--config",
                default=os.environ.get("QUEUEWATCH_CONFIG"),
                help="the stack's config file, to check --rule against (default: $QUEUEWATCH_CONFIG; without it, "
                "--rule must be a rule the table has alerts for)",
            )
            sub.add_argument("--team", help="only this team's runner types")
            sub.add_argument("--for", dest="duration", required=True, help="how long, such as 2h or 30m")
            sub.add_argument("--comment", required=True, help="why; shown to everyone who lists silences")
            sub.add_argument("--author", help="defaults to the current user")
        elif action == "list":
            sub.add_argument("--all", action="store_true", help="include expired silences")
        else:
            sub.add_argument("silence_id")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "check-config":
        return check_config(args.paths)
    if args.command == "schema":
        from queuewatch.alert import alert_json_schema

        print(json.dumps(alert_json_schema(), indent=2))
        return 0
    if args.command == "demo":
        from queuewatch_cli.demo import run_demo

        return run_demo()
    if args.command == "status":
        from queuewatch_cli.status import status

        return status(args)
    if args.command == "backtest":
        from queuewatch_cli.backtest.run import run_backtest

        return run_backtest(args)
    if args.command == "capacity":
        from queuewatch_cli.capacity.run import run_capacity

        return run_capacity(args)
    if args.command == "track":
        return run_track(args)
    handlers = {"add": silence_add, "list": silence_list, "expire": silence_expire}
    return handlers[args.action](args)


if __name__ == "__main__":
    sys.exit(main())
