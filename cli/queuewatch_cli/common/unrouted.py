"""The last day's tracked jobs that map to no runner type, by label set: said by check-config --jobs-table and
status, so that a fleet whose jobs the config or the autoscaler's matcher config does not route is seen before
its SLOs count nothing and its monitor pages `jobs:unserved`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from queuewatch.adapters.jobs_table.jobs import read_history
from queuewatch.model.jobs import JobRecord, github_hosted

SHOWN = 10  # the label sets named; the rest counted


def last_day(dynamodb: Any, table: str, now: datetime) -> list[JobRecord]:
    """Every job queued for a runner in the last day, the ones queued now among them."""
    return list(read_history(dynamodb, table, now - timedelta(days=1), now))


def unrouted(jobs: Iterable[JobRecord]) -> Counter[str]:
    """Jobs per label set that no runner type serves; GitHub's hosted runners' jobs are not this fleet's."""
    return Counter(job.label_set for job in jobs if job.runner_type is None and not github_hosted(job.labels))


def unrouted_lines(jobs: Iterable[JobRecord]) -> list[str]:
    counts = unrouted(jobs)
    total = sum(counts.values())
    if not total:
        return ["jobs of the last day that map to no runner type: none"]
    lines = [f"jobs of the last day that map to no runner type: {total}, in {len(counts)} label sets (most first)"]
    for label_set, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:SHOWN]:
        lines.append(f"  {count:>6}  [{label_set}]")
    if len(counts) > SHOWN:
        lines.append(f"  ... and {len(counts) - SHOWN} more label sets")
    return lines
