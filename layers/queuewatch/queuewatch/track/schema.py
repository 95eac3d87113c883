"""How tracked jobs are stored: the contract between the track stage, which writes them, and the
collector, which reads the queued ones. One item per job in the jobs table."""

from __future__ import annotations

from datetime import timedelta

PARTITION_KEY = "pk"  # "job#<job id>"
JOB_PREFIX = "job#"
EXPIRES_AT = "expires_at"  # the table's TTL attribute, epoch seconds

QUEUED_INDEX = "queued"  # a sparse index: only jobs queued right now carry its partition key
QUEUED_KEY = "queued"  # its partition key attribute, always QUEUED_VALUE while present
QUEUED_VALUE = "queued"
QUEUED_SORT_KEY = "created_at"

QUEUED_LIMIT = timedelta(hours=24)
"""GitHub's limit for a job queued on a self-hosted runner: past it the job is cancelled, so a job still
queued here after it lost its in_progress and completed events."""

RUN_LIMIT = timedelta(days=5)
"""GitHub's limit for a job running on a self-hosted runner."""

KEEP_FINISHED = timedelta(days=1)
"""How long a completed job is kept, so a late or repeated event for it is recognised and ignored."""
