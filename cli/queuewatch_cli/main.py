"""The `queuewatch` command line: config checks, silences, status, history, backtests, capacity, SLO reports
(slo), job tracking's backfill (track), the alert schema, where an alert goes (routes), a stack's outputs
(stack-output), the stack parameters a config decides (deploy-parameters), the demo and a local stack."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NoReturn

from queuewatch.base.wording import plural
from queuewatch.config.load import ConfigError, check_config_file
from queuewatch.config.reach import config_reach
from queuewatch.model.jobs import JobRecord
from queuewatch_cli.backfill import add_parser as add_track_parser
from queuewatch_cli.backfill import run as run_track
from queuewatch_cli.backtest.arguments import add_parser as add_backtest_parser
from queuewatch_cli.build import add_parsers as add_build_parsers
from queuewatch_cli.build import run as run_build
from queuewatch_cli.capacity.run import add_parser as add_capacity_parser
from queuewatch_cli.failures import BAD_REQUEST, DEBUG_ENV, EXIT_CODES, failure
from queuewatch_cli.history import add_parser as add_history_parser
from queuewatch_cli.history import run_history
from queuewatch_cli.local import add_parser as add_local_parser
from queuewatch_cli.local import run_local
from queuewatch_cli.outputs import add_parser as add_output_parser
from queuewatch_cli.outputs import run_stack_output
from queuewatch_cli.routes import add_parser as add_routes_parser
from queuewatch_cli.routes import run_routes
from queuewatch_cli.silences import silence_add, silence_expire, silence_extend, silence_list
from queuewatch_cli.slo_report import add_parser as add_slo_parser
from queuewatch_cli.stacks import Target, UsageError, add_stack_arguments, boto_client, default_refs, targets
from queuewatch_cli.windows import window_lines


def check_config(
    paths: Sequence[str],
    explain: bool = False,
    now: datetime | None = None,
    jobs_table: str | None = None,
    region: str | None = None,
) -> int:
    failed = 0
    for path in paths:
        try:
            checked = check_config_file(path)
        except ConfigError as error:
            print(error.checked(), file=sys.stderr)
            failed += 1
            continue
        config = checked.config
        for warning in checked.render_warnings():  # seen, but never a failure: each might be meant
            print(warning, file=sys.stderr)
        rules = ", ".join(rule.name for rule in config.resolved_rules)
        print(
            f"{path}: OK: {plural(len(config.runner_types), 'runner type')}, "
            f"{plural(len(config.discovery), 'discovery pattern')}, "
            f"rules: {rules}" + (f"; {plural(len(checked.warnings), 'warning')} above" if checked.warnings else "")
        )
        jobs = _last_day(jobs_table, region, now)
        if config.slos:
            from queuewatch_cli.slo_check import jobs_per_day, slo_lines

            volume = jobs_per_day(config, jobs) if jobs is not None else (None, None)
            print("\n".join(slo_lines(config, *volume)))
        if jobs is not None:
            from queuewatch_cli.unrouted import unrouted_lines

            print("\n".join(unrouted_lines(jobs)))
        print("\n".join(config_reach(config).lines()))
        for line in window_lines(config, now or datetime.now(UTC)):
            print(line)
        if explain:
            from queuewatch_cli.explain import explain as explained

            print("\n".join(explained(config)))
    return 1 if failed else 0


def _last_day(jobs_table: str | None, region: str | None, now: datetime | None) -> list[JobRecord] | None:
    """The last day's jobs from the stack's history; None without a table, or when it cannot be read (said,
    never guessed)."""
    if jobs_table is None:
        return None
    from queuewatch.adapters.aws.errors import describe
    from queuewatch_cli.unrouted import last_day

    try:
        return last_day(boto_client("dynamodb", region), jobs_table, now or datetime.now(UTC))
    except Exception as error:  # noqa: BLE001 - the check stands without the history; the reason is said
        print(f"--jobs-table {jobs_table}: the last day's jobs not read: {describe(error)}", file=sys.stderr)
        return None


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (and exit 2), not the usage block."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(BAD_REQUEST)


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = Parser(
        prog="queuewatch",
        description=__doc__,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)

    check = commands.add_parser("check-config", help="validate config files; exit 1 naming every problem")
    check.add_argument("paths", nargs="+", metavar="FILE")
    check.add_argument(
        "--explain",
        action="store_true",
        help="print each rule as applied, where every setting comes from, and which runner types it selects",
    )
    check.add_argument(
        "--stack",
        action="append",
        metavar="NAME[@REGION]",
        help="the stack whose jobs table (its JobsTableName output) gives each SLO's budget in jobs at the last "
        "day's volume, and the last day's jobs that map to no runner type, by label set",
    )
    check.add_argument("--jobs-table", default=None, help="the jobs table by name instead of --stack")
    check.add_argument("--region", default=None, help="the stack's (or the jobs table's) region")

    demo = commands.add_parser("demo", help="the 114-minute incident, end to end, on an in-process moto")
    demo.add_argument("--json", action="store_true", help="also print each page's raw bodies (SNS envelope, JSON)")
    demo.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="rehearse your own config instead: an incident on the runner types it names, each page with the "
        "receivers its routes give it, checked against backtest's replay of the same minutes",
    )
    add_local_parser(commands)
    commands.add_parser("schema", help="print the alert message's JSON Schema")

    status = commands.add_parser("status", help="alerts pending or firing, silences, the last tick, degraded signals")
    add_stack_arguments(status)
    status.add_argument("--json", action="store_true", help="print a JSON document instead of text")
    status.add_argument(
        "--metrics-namespace",
        default=None,
        help="with --table: the evaluator's POWERTOOLS_METRICS_NAMESPACE (--stack reads it from the stack)",
    )
    status.add_argument(
        "--config",
        default=os.environ.get("QUEUEWATCH_CONFIG"),
        help="the stack's config, for when a pending alert fires (default: $QUEUEWATCH_CONFIG)",
    )
    status.add_argument("--no-figures", action="store_true", help="read the state table alone (no GetMetricData)")
    status.add_argument(
        "--history",
        metavar="RULE/RUNNER_TYPE",
        help="that alert's state history over the last 24h instead, as history --alert prints it",
    )

    add_history_parser(commands)

    add_backtest_parser(commands)
    add_track_parser(commands)
    add_build_parsers(commands)
    add_capacity_parser(commands)

    add_slo_parser(commands)
    add_routes_parser(commands)
    add_output_parser(commands)
    silence = commands.add_parser("silence", help="silence alerts: add, list, expire, extend")
    actions = silence.add_subparsers(dest="action", required=True)
    for action in ("add", "list", "expire", "extend"):
        sub = actions.add_parser(action)
        add_stack_arguments(sub)
        if action == "add":
            sub.add_argument(
                "--match",
                action="append",
                help="runner type name or glob, as a rule's match: without @REGION, that key in every region; "
                "repeatable",
            )
            sub.add_argument(
                "--all", action="store_true", help="every runner type instead of --match (never queuewatch's own page)"
            )
            sub.add_argument("--rule", help="only this rule's alerts")
            sub.add_argument(
                "--config",
                default=os.environ.get("QUEUEWATCH_CONFIG"),
                help="the stack's config file, to check --rule and --team against (default: $QUEUEWATCH_CONFIG; "
                "without it, they must be ones the table has alerts for)",
            )
            sub.add_argument("--team", help="only this team's runner types")
            sub.add_argument("--for", dest="duration", required=True, help="how long, such as 2h or 30m")
            sub.add_argument(
                "--start",
                help="when it starts: an ISO time (UTC unless it says) or +2h from now (default: now); the preview "
                "shows what it would hold back then",
            )
            sub.add_argument("--comment", required=True, help="why; shown to everyone who lists silences")
            sub.add_argument("--author", help="defaults to the current user")
        elif action == "list":
            sub.add_argument("--all", action="store_true", help="include expired silences")
            sub.add_argument("--expired", action="store_true", help="only expired silences")
            sub.add_argument("--match", metavar="RUNNER_TYPE", help="only silences covering this runner type")
            sub.add_argument("--author", help="only this author's silences")
        else:
            sub.add_argument("silence_id", help="the silence's id, or a prefix naming one")
            if action == "extend":
                sub.add_argument("--by", required=True, help="how much longer, such as 2h (from now if expired)")
    return parser


def run(args: argparse.Namespace) -> int:
    if args.command == "check-config":
        return _check_config(args)
    if args.command == "schema":
        from queuewatch.alerting.alert import alert_json_schema

        print(json.dumps(alert_json_schema(), indent=2))
        return 0
    if args.command == "demo" and args.config:
        from pathlib import Path

        from queuewatch_cli.rehearsal import run_rehearsal

        return run_rehearsal(Path(args.config))
    if args.command == "demo":
        from queuewatch_cli.demo import run_demo

        return run_demo(raw=args.json)
    if args.command == "local":
        return run_local(args)
    if args.command == "status" and args.history is not None:
        args.alert, args.since, args.until = args.history, "24h", "now"
        return run_history(args)
    if args.command == "status":
        from queuewatch_cli.status import status

        return status(args)
    if args.command == "history":
        return run_history(args)
    if args.command == "backtest":
        return _backtest(args)
    if args.command == "capacity":
        return _capacity(args)
    if args.command == "track":
        return run_track(args)
    if args.command == "slo":
        from queuewatch_cli.slo_report import run as run_slo

        return run_slo(args)
    if args.command == "routes":
        return run_routes(args)
    if args.command == "stack-output":
        return run_stack_output(args)
    if args.command in ("stage-config", "stage-dashboard", "deploy-parameters"):
        return run_build(args)
    handlers = {"add": silence_add, "list": silence_list, "expire": silence_expire, "extend": silence_extend}
    return handlers[args.action](args)


def _check_config(args: argparse.Namespace) -> int:
    if args.stack and args.jobs_table is None:
        [target] = targets_of_one(args)
        if target.jobs_table is None:
            raise UsageError(f"--stack {target.label}: no JobsTableName output: tracking is off there")
        args.jobs_table, args.region = target.jobs_table, target.region
    return check_config(args.paths, explain=args.explain, jobs_table=args.jobs_table, region=args.region)


def _backtest(args: argparse.Namespace) -> int:
    from queuewatch_cli.backtest.run import run_backtest

    if args.stack or default_refs():  # the stack's region is the default region of runner types naming none
        [target] = targets_of_one(args)
        args.region = args.region or target.region
        args.jobs_table = args.jobs_table or target.jobs_table  # its tracked jobs, where tracking is on
        args.stack_region = target.region  # where its jobs table is, whatever the profile's region
    return run_backtest(args)


def _capacity(args: argparse.Namespace) -> int:
    from queuewatch_cli.capacity.run import run_capacity

    if args.table is None:
        [target] = targets_of_one(argparse.Namespace(command=args.command, stack=args.stack, region=args.region))
        if target.jobs_table is None:
            raise UsageError(f"--stack {target.label}: no JobsTableName output: tracking is off there")
        args.table, args.region = target.jobs_table, args.region or target.region
    return run_capacity(args)


def targets_of_one(args: argparse.Namespace) -> list[Target]:
    found = targets(args)
    if len(found) > 1:
        raise UsageError(f"--stack: {getattr(args, 'command', 'the command')} reads one stack's tables; name one")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """The command; any error is one line on stderr and an exit code (failures.py), never a traceback."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help, or a usage error already said in one line
        return done.code if isinstance(done.code, int) else BAD_REQUEST
    try:
        return run(args)
    except Exception as error:
        if os.environ.get(DEBUG_ENV):
            raise
        found = failure(error)
        if found.message:
            print(f"queuewatch: {found.message}", file=sys.stderr)
        return found.code
    except KeyboardInterrupt:
        print("queuewatch: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
