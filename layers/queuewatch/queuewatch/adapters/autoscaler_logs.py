"""The autoscaler's log lines, read with one Logs Insights query (StartQuery, then GetQueryResults until done).

The query (autoscaler_log.INSIGHTS_QUERY) aggregates: one row per log group, message, EC2 code and job,
with the count, the first and last time and the latest line. A query that does not finish by its deadline
is stopped and reported as still running; a missing log group or a denied read fails the query, and the
caller says which.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

from queuewatch.adapters.aws.errors import describe
from queuewatch.base.errors import QueuewatchError
from queuewatch.model.autoscaler_log import INSIGHTS_QUERY, MAX_LOG_GROUPS_PER_QUERY, LogRow

POLL_SECONDS = 0.5  # GetQueryResults takes 5 a second per account: two queries polled at once stay inside it
DONE = "Complete"
FAILED = frozenset({"Failed", "Cancelled", "Timeout", "Unknown"})


class LogsUnread(QueuewatchError):
    """The query could not be run or did not finish: the reason, naming the log groups."""


def query_log_rows(
    client: Any,
    groups: list[str],
    start: datetime,
    end: datetime,
    *,
    wait_seconds: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[LogRow]:
    """The query's rows over `groups` (at most 50) from start to end, or LogsUnread."""
    if not 0 < len(groups) <= MAX_LOG_GROUPS_PER_QUERY:
        raise ValueError(f"groups: found {len(groups)}, expected 1 to {MAX_LOG_GROUPS_PER_QUERY}")
    named = ", ".join(groups)
    try:
        query_id = client.start_query(
            logGroupNames=groups,
            startTime=int(start.timestamp()),
            endTime=int(end.timestamp()) + 1,  # whole seconds, and the last second's lines too
            queryString=INSIGHTS_QUERY,
            limit=10000,
        )["queryId"]
    except Exception as error:
        raise LogsUnread(f"{named}: {describe(error)}") from error
    deadline = clock() + wait_seconds
    while True:
        try:
            answer = client.get_query_results(queryId=query_id)
        except Exception as error:
            raise LogsUnread(f"{named}: {describe(error)}") from error
        status = answer.get("status")
        if status == DONE:
            return [row for fields in answer.get("results", []) if (row := _row(fields)) is not None]
        if status in FAILED:
            raise LogsUnread(f"{named}: the Logs Insights query ended {status}")
        if clock() >= deadline:
            with suppress(Exception):  # it ends by itself; the reading is degraded either way
                client.stop_query(queryId=query_id)
            raise LogsUnread(f"{named}: the Logs Insights query was still {status} after {wait_seconds:g}s")
        sleep(POLL_SECONDS)


def _row(fields: list[dict[str, str]]) -> LogRow | None:
    values = {f.get("field", ""): f.get("value", "") for f in fields}
    group = values.get("@log", "")
    group = group.split(":", 1)[1] if ":" in group and not group.startswith("/") else group  # account:group
    try:
        return LogRow(
            log_group=group,
            count=int(float(values.get("n", "0"))),
            first_at=_at(values["first"]),
            last_at=_at(values["last"]),
            line=values.get("line", ""),
        )
    except (KeyError, ValueError):
        return None  # a row without its figures says nothing it can be counted by


def _at(text: str) -> datetime:
    """Logs Insights' timestamps: '2026-11-28 04:00:00.000', UTC; or epoch milliseconds."""
    if text.isdigit():
        return datetime.fromtimestamp(int(text) / 1000, UTC)
    return datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=UTC)
