"""`queuewatch check-config`: each config file checked as the functions load it, then what it decides: its SLOs'
budgets, the last day's jobs no runner type takes (with the stack's jobs table), what it reaches, its windows."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from datetime import UTC, datetime

from queuewatch.base.wording import plural
from queuewatch.config.load import ConfigError, check_config_file
from queuewatch.config.reach import config_reach
from queuewatch.model.jobs import JobRecord
from queuewatch_cli.common.stacks import boto_client
from queuewatch_cli.common.windows import window_lines


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
            from queuewatch_cli.commands.check_config.slos import jobs_per_day, slo_lines

            volume = jobs_per_day(config, jobs) if jobs is not None else (None, None)
            print("\n".join(slo_lines(config, *volume)))
        if jobs is not None:
            from queuewatch_cli.common.unrouted import unrouted_lines

            print("\n".join(unrouted_lines(jobs)))
        print("\n".join(config_reach(config).lines()))
        for line in window_lines(config, now or datetime.now(UTC)):
            print(line)
        if explain:
            from queuewatch_cli.commands.check_config.explain import explain as explained

            print("\n".join(explained(config)))
    return 1 if failed else 0


def _last_day(jobs_table: str | None, region: str | None, now: datetime | None) -> list[JobRecord] | None:
    """The last day's jobs from the stack's history; None without a table, or when it cannot be read (said,
    never guessed)."""
    if jobs_table is None:
        return None
    from queuewatch.adapters.aws.errors import describe
    from queuewatch_cli.common.unrouted import last_day

    try:
        return last_day(boto_client("dynamodb", region), jobs_table, now or datetime.now(UTC))
    except Exception as error:  # noqa: BLE001 - the check stands without the history; the reason is said
        print(f"--jobs-table {jobs_table}: the last day's jobs not read: {describe(error)}", file=sys.stderr)
        return None
