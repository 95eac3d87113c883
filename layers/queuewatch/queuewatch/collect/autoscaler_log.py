"""Why a breaching runner type waits, in the autoscaler's own words: its scale-up and job-retry log lines.

Read only for the runner types that breach a rule this tick, the longest-waiting first, at most
MAX_READ_PER_TICK of them: one Logs Insights query per region for up to 50 log groups, beside the second
metric round. The others are counted in the snapshot, and each page row of one says it was not read this
tick (a reading each would cost the snapshot some 200 bytes a runner type, 1 MB at 5,000). A query that
fails (a log group missing or denied) is run again per runner type, so one broken log group degrades its
runner type alone. The window is the page's: back to when its oldest job began waiting, at least the
triage window, at most MAX_WINDOW. Logs that cannot be read are a reading with an error naming the log
groups, never a quiet "nothing said".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.adapters.autoscaler_logs import LogsUnread, query_log_rows
from queuewatch.collect.queues import WatchedQueue
from queuewatch.model.autoscaler_log import (
    MAX_CAUSES,
    MAX_LOG_GROUPS_PER_QUERY,
    MAX_READ_PER_TICK,
    AutoscalerLog,
    LogRow,
    RunnerCountLine,
    classify,
    function_base,
    insights_url,
    latest_counts,
    log_groups,
)
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot, runner_type_key

MAX_COUNTS_PER_TICK = 200  # forecast runner types whose count is read a tick: 4 queries of 50 scale-up log groups
MAX_WINDOW = timedelta(hours=3)  # what a query scans, and so what it costs, stays bounded
WAIT_SECONDS = 5.0  # per query: beside the second metric round, within the collector's 10 s a tick


@dataclass(frozen=True)
class _Wanted:
    index: int
    groups: list[str]
    since: datetime


Query = Callable[[str, list[str], datetime, datetime], list[LogRow]]
"""(region, log groups, start, end) -> the query's rows, or LogsUnread."""


def read_autoscaler_logs(
    targets: list[WatchedQueue],
    runner_types: list[RunnerTypeSnapshot],
    breaching: set[int],
    *,
    prefix: str | None,
    window_seconds: int,
    now: datetime,
    query: Query,
) -> tuple[dict[int, AutoscalerLog], int]:
    """Per breaching runner type's index, what its log groups said or why they could not be read; and how many
    breaching runner types were not read this tick, past MAX_READ_PER_TICK."""
    out: dict[int, AutoscalerLog] = {}
    if prefix is None:
        return out, 0  # no autoscaler named: the stack's role may read no log (AutoscalerPrefix)
    wanted: list[_Wanted] = []
    past = 0
    for index in sorted(breaching, key=lambda i: (-_waited(runner_types[i]), runner_types[i].name)):
        target, found = targets[index], runner_types[index]
        base = function_base(target.queue_name, prefix, runner_type_key(target.runner_type))
        since = now - min(max(timedelta(seconds=window_seconds), timedelta(seconds=_waited(found))), MAX_WINDOW)
        if base is None:
            continue
        groups = log_groups(base)[: 2 if found.job_retry_queue else 1]  # no job-retry queue, no job-retry Lambda
        if target.foreign:
            out[index] = _unread(groups, since, now, f"in account {target.account_id}: only the stack's own are read")
        elif len(wanted) >= MAX_READ_PER_TICK:
            past += 1
        else:
            wanted.append(_Wanted(index, groups, since))
    by_region: dict[str, list[_Wanted]] = defaultdict(list)
    for item in wanted:
        by_region[targets[item.index].region].append(item)
    chunks = [(region, chunk) for region, items in by_region.items() for chunk in _chunks(items)]
    if not chunks:
        return out, past
    # Its own threads, not the collector's pool: this runs in one of that pool's tasks.
    with ThreadPoolExecutor(max_workers=min(len(chunks), 8), thread_name_prefix="logs") as pool:
        futures = [(region, pool.submit(_read_region, region, chunk, now, query)) for region, chunk in chunks]
        for region, future in futures:
            for index, log in future.result().items():
                url = insights_url(region, log.log_groups, log.since, now)
                out[index] = log.model_copy(update={"query_url": url})
    return out, past


def read_runner_counts(
    targets: list[WatchedQueue],
    wanted: list[int],
    *,
    prefix: str | None,
    window_seconds: int,
    now: datetime,
    query: Query,
) -> tuple[dict[int, RunnerCountLine | str], int]:
    """The latest `Current runners` line in each wanted runner type's scale-up log group over the window (the
    forecast's count, autoscaler_log.latest_counts): the first MAX_COUNTS_PER_TICK of `wanted` (the caller puts
    the busiest first), 50 log groups a query, the same query as the breach's words. Per index: the line, or
    why it could not be read; absent when its log group wrote no count in the window (nothing scaled up). And
    how many were past the bound: those get no count this tick."""
    out: dict[int, RunnerCountLine | str] = {}
    if prefix is None:
        return out, 0
    since = now - timedelta(seconds=window_seconds)
    items: list[_Wanted] = []
    for index in wanted:
        target = targets[index]
        base = function_base(target.queue_name, prefix, runner_type_key(target.runner_type))
        if base is None or target.foreign:
            continue
        items.append(_Wanted(index, log_groups(base)[:1], since))
    past = max(0, len(items) - MAX_COUNTS_PER_TICK)
    by_region: dict[str, list[_Wanted]] = defaultdict(list)
    for item in items[:MAX_COUNTS_PER_TICK]:
        by_region[targets[item.index].region].append(item)
    chunks = [(region, chunk) for region, chunk_items in by_region.items() for chunk in _chunks(chunk_items)]
    if not chunks:
        return out, past

    def read(region: str, chunk: list[_Wanted]) -> dict[int, RunnerCountLine | str]:
        try:
            rows = query(region, [item.groups[0] for item in chunk], since, now)
        except LogsUnread as error:
            if len(chunk) == 1:
                return {chunk[0].index: str(error)[:512]}
            return {i: line for item in chunk for i, line in read(region, [item]).items()}
        counts = latest_counts(rows)
        return {item.index: counts[item.groups[0]] for item in chunk if item.groups[0] in counts}

    with ThreadPoolExecutor(max_workers=min(len(chunks), 8), thread_name_prefix="counts") as pool:
        for found in pool.map(lambda pair: read(*pair), chunks):
            out.update(found)
    return out, past


def _chunks(items: list[_Wanted]) -> list[list[_Wanted]]:
    out: list[list[_Wanted]] = [[]]
    for item in items:
        if sum(len(i.groups) for i in out[-1]) + len(item.groups) > MAX_LOG_GROUPS_PER_QUERY:
            out.append([])
        out[-1].append(item)
    return [chunk for chunk in out if chunk]


def _read_region(region: str, items: list[_Wanted], now: datetime, query: Query) -> dict[int, AutoscalerLog]:
    """One query for the chunk; if it fails, one per runner type, so a broken log group degrades its own alone."""
    since = min(item.since for item in items)
    try:
        rows = query(region, [g for item in items for g in item.groups], since, now)
    except LogsUnread as error:
        if len(items) == 1:
            return {items[0].index: _unread(items[0].groups, since, now, str(error))}
        return {index: log for item in items for index, log in _read_region(region, [item], now, query).items()}
    return {
        item.index: AutoscalerLog(
            log_groups=item.groups,
            since=since,
            until=now,
            causes=classify(row for row in rows if row.log_group in item.groups)[:MAX_CAUSES],
        )
        for item in items
    }


def _unread(groups: list[str], since: datetime, now: datetime, reason: str) -> AutoscalerLog:
    text = reason if any(group in reason for group in groups) else f"{', '.join(groups)}: {reason}"
    return AutoscalerLog(log_groups=groups, since=since, until=now, error=text[:1024])


def _waited(runner_type: RunnerTypeSnapshot) -> float:
    return runner_type.value(SignalName.QUEUE_TIME) or 0.0


def logs_query(clients_logs: Callable[[str], object], wait_seconds: float = WAIT_SECONDS) -> Query:
    """The Query over the stack's clients: adapters/autoscaler_logs.py per region."""

    def run(region: str, groups: list[str], start: datetime, end: datetime) -> list[LogRow]:
        return query_log_rows(clients_logs(region), groups, start, end, wait_seconds=wait_seconds)

    return run
