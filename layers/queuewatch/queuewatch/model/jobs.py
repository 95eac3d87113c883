"""Tracked jobs: the record of one job and the jobs table's layout, the contract between the track stage
(which writes them), the collector (which reads the queued ones and the history) and the backtest.
Pure: adapters/jobs_table/jobs.py maps records to items and back, as adapters/state_table/alerts.py
does for alert_state.py.

One item per job, keyed by its id. Besides the table's key, one sparse index, `history`, holds every job
from the moment it is queued for a runner until it expires:

- while the job is queued, its `bucket` is the constant QUEUED_BUCKET: the collector reads exactly the jobs
  queued now with one paged Query, whatever the fleet's size;
- from its start (or its completion, if it never started), its `bucket` is `<UTC day of queued_at>#<shard>`,
  the shard a stable hash of its runner type: a read of a span of time for some runner types is one Query
  per day and shard those runner types hash to (at most days x HISTORY_SHARDS, whatever the fleet), and
  the day's writes spread over HISTORY_SHARDS partitions.

Its sort key is `queued_at`, so each Query reads only the span asked for. A job waiting for a deployment's
approval is in neither: it waits for a person, not for a runner.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Literal

from queuewatch.base.frozen import FrozenModel

JobStatus = Literal["waiting", "queued", "in_progress", "completed"]

PROGRESS: dict[str, int] = {"waiting": 0, "queued": 1, "in_progress": 2, "completed": 3}
"""GitHub's order of a job's states: an event takes effect only if it moves the job further along."""

# The jobs table.
PARTITION_KEY = "pk"  # "job#<job id>"
JOB_PREFIX = "job#"
EXPIRES_AT = "expires_at"  # the table's TTL attribute, epoch seconds
WRITER = "writer"  # the token of the invocation that wrote the item (see adapters/job_store.put_job)
PRIOR_PROGRESS = "prior_progress"  # the progress the item had before that write (-1: none)

# The history index (sparse: only jobs queued for a runner carry its keys).
HISTORY_INDEX = "history"
BUCKET = "bucket"  # its partition key
QUEUED_AT = "queued_at"  # its sort key, ISO-8601 in UTC
QUEUED_BUCKET = "queued"  # the bucket of every job queued now
HISTORY_SHARDS = 16
"""Partitions per day. 50,000 jobs a day write about 1.7 index items a second, at peaks tens: far below a
partition's 1,000 writes a second even in one; 16 keep a fleet's dominant runner types apart, and a triage's
read of one runner type reads a sixteenth of the day's jobs."""

QUEUED_LIMIT = timedelta(hours=24)
"""GitHub's limit for a job queued on a self-hosted runner: past it the job is cancelled, so a job still
queued here after it lost its in_progress and completed events."""

BOOT_GRACE = timedelta(minutes=5)
"""How long a runner may take to boot and take the job it was launched for: the upstream module's
runner_boot_time_in_minutes default (variables.tf, v7.11.0). A queued job younger than this whose request has
left the queue may have a runner booting for it; an older one was dropped."""

RUN_LIMIT = timedelta(days=5)
"""GitHub's limit for a job running on a self-hosted runner."""

KEEP_FINISHED = timedelta(days=1)
"""At least this long after its last event a job is kept, so a late or repeated event for it is recognised
and ignored."""

HISTORY_DAYS = 14
"""How many days of jobs the history keeps by default (the stack's JobHistoryDays)."""


class JobRecord(FrozenModel):
    """One job as the jobs table holds it (adapters/jobs_table/jobs.py maps it to an item)."""

    job_id: int
    run_id: int
    status: JobStatus
    progress: int
    runner_type: str | None
    labels: tuple[str, ...]
    label_set: str
    org: str
    repo: str
    html_url: str | None
    created_at: datetime
    queued_at: datetime | None = None
    """When it was queued for a runner: its creation, or, behind a deployment's approval, when it was
    approved. None while it waits for approval (and for a job that never left it)."""
    started_at: datetime | None = None
    completed_at: datetime | None = None
    updated_at: datetime
    expires_at: datetime
    history_only: bool = False
    """From an event of the past (track/stage.py `of_the_past`): kept in its day's history, never as queued now."""

    @property
    def queued(self) -> bool:
        """Whether it is among the jobs queued now (the collector's bucket)."""
        return self.status == "queued" and not self.history_only

    @property
    def queued_since(self) -> datetime:
        """When it started waiting for a runner; its creation for a record that does not say."""
        return self.queued_at or self.created_at

    @property
    def queue_seconds(self) -> float | None:
        """How long it waited for a runner: started_at - queued_at, never negative (GitHub's clocks
        sometimes stamp started_at a little before created_at)."""
        if self.started_at is None:
            return None
        return max(0.0, (self.started_at - self.queued_since).total_seconds())

    @property
    def run_seconds(self) -> float | None:
        if self.started_at is None or self.completed_at is None:
            return None
        return max(0.0, (self.completed_at - self.started_at).total_seconds())


def shard_of(runner_type: str | None) -> int:
    """The history shard of a runner type's jobs: stable across processes (Python's hash() is not), and
    the same whatever the name's case: a discovered runner type is stored in lower case (a candidate,
    track/routing.py) and read under the watched queue's spelling."""
    return zlib.crc32((runner_type or "").lower().encode()) % HISTORY_SHARDS


def day_bucket(day: datetime, shard: int) -> str:
    return f"{day.astimezone(UTC):%Y-%m-%d}#{shard:02d}"


def bucket_of(record: JobRecord) -> str | None:
    """The record's history partition, or None when it is in none (waiting for approval)."""
    if record.queued_at is None:
        return None
    if record.queued:
        return QUEUED_BUCKET
    return day_bucket(record.queued_at, shard_of(record.runner_type))


def history_buckets(start: datetime, end: datetime, runner_types: set[str | None] | None) -> list[str]:
    """Every bucket that may hold a finished or started job queued in [start, end): each UTC day the span
    touches, times the shards of `runner_types` (every shard when None)."""
    shards = sorted({shard_of(name) for name in runner_types}) if runner_types is not None else range(HISTORY_SHARDS)
    first = start.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    last = end.astimezone(UTC)
    days: list[datetime] = []
    day = first
    while day < last or day == first:
        days.append(day)
        day += timedelta(days=1)
    return [day_bucket(day, shard) for day in days for shard in shards]


class StoredJob(FrozenModel):
    """What a refused write found in the table: how far the job got, and when it was queued for a runner."""

    progress: int
    status: str
    queued_at: datetime | None


GITHUB_HOSTED_LABEL = re.compile(
    r"^(ubuntu-(latest|slim|\d+\.\d+)(-arm)?|windows-(latest|\d{4}|11-arm)|macos-(latest|\d+)(-large|-xlarge|-intel)?)$"
)
"""The labels of GitHub's standard hosted runners (ubuntu-24.04, windows-2022, macos-14-large, ...)."""


def github_hosted(labels: Iterable[str]) -> bool:
    """A job for GitHub's own hosted runners: every label one of theirs, and none says self-hosted.
    Not a job this fleet failed to serve. A larger hosted runner's label is a name its owner chose:
    that cannot be told from a self-hosted label, and counts as unserved."""
    lowered = [label.lower() for label in labels]
    return bool(lowered) and all(GITHUB_HOSTED_LABEL.match(label) for label in lowered)
