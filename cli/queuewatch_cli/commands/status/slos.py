"""`queuewatch status`'s line per SLO: the budget left over its window, from the stack's SLO counters and the
jobs queued now, summarized as `queuewatch slo` and the evaluator summarize them (alerting/slo_summary.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.jobs_table.jobs import queued_jobs
from queuewatch.adapters.slo_table.counters import read_tally
from queuewatch.alerting.slo_summary import longest_window, summarize
from queuewatch.config import Config
from queuewatch_cli.common.stacks import Target


def budget_lines(dynamodb: Any, target: Target, config: Config, now: datetime) -> list[str]:
    """`status`'s line per SLO: the budget left over its window. Said, not guessed, where the stack has no
    SLO table (tracking off) or a read fails."""
    if not config.slos:
        return []
    if target.slo_table is None or target.jobs_table is None:
        return [
            f"slo {slo.name}: budget unknown: no SLO table (the stack's SloTableName output, with --stack; tracking on)"
            for slo in config.resolved_slos
        ]
    try:
        queued = list(queued_jobs(dynamodb, target.jobs_table))
        summaries = [
            summarize(
                slo,
                config,
                read_tally(dynamodb, target.slo_table, slo.name, longest_window(slo), now),
                queued,
                now,
            )
            for slo in config.resolved_slos
        ]
    except ClientError as error:
        return [f"slos: budget unknown: {describe(error)}"]
    return [
        f"slo {s.name}: budget left {s.budget_left_fraction * 100:.0f}% ({s.budget_left_jobs:,.1f} of "
        f"{(1 - s.objective) * s.jobs:,.1f} jobs) over {s.window_days}d, "
        + (f"{s.achieved * 100:.2f}% of {s.jobs:,} jobs in time" if s.achieved is not None else "no jobs counted")
        + ("; firing: " + ", ".join(p.name for p in s.pairs if p.firing) if any(p.firing for p in s.pairs) else "")
        for s in summaries
    ]
