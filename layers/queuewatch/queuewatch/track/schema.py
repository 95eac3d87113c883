"""The JobsTable's contract, shared by the track stage (writer) and the collector (reader).

One item per job. Every name below is part of the contract: change one and both sides change.
Times are ISO-8601 strings of UTC-aware datetimes (`datetime.isoformat()`, "+00:00"), so they sort
as text; `expires_at` is epoch seconds, the table's TTL attribute.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final, Literal

JOB_KEY_PREFIX: Final = "job#"

# Attributes of a job item.
PK: Final = "pk"
JOB_ID: Final = "job_id"
RUNNER_TYPE: Final = "runner_type"  # absent when no watched runner type serves the job's labels
LABEL_SET: Final = "label_set"  # the job's labels, sorted, joined with LABEL_SEPARATOR
LABELS: Final = "labels"
ORG: Final = "org"
REPO: Final = "repo"  # "owner/name"
RUN_ID: Final = "run_id"
HTML_URL: Final = "html_url"
CREATED_AT: Final = "created_at"
STATUS: Final = "status"
STARTED_AT: Final = "started_at"
COMPLETED_AT: Final = "completed_at"
UPDATED_AT: Final = "updated_at"
EXPIRES_AT: Final = "expires_at"
# How far the job has come (STATUS_RANK below); conditional writes only ever raise it.
STATUS_RANK_ATTRIBUTE: Final = "status_rank"

LABEL_SEPARATOR: Final = ","

# The sparse index of queued jobs: its partition key attribute exists only while status == "queued",
# holding the constant QUEUED_PARTITION; sorted by created_at, so the oldest come first.
QUEUED_INDEX: Final = "queued"
QUEUED_ATTRIBUTE: Final = "queued"
QUEUED_PARTITION: Final = "queued"

JobStatus = Literal["waiting", "queued", "in_progress", "completed"]
# waiting (a deployment awaiting approval) comes before the job is queued for a runner.
STATUS_RANK: Final[dict[str, int]] = {"waiting": 0, "queued": 1, "in_progress": 2, "completed": 3}

# GitHub cancels a self-hosted job queued for 24 hours (its docs: cancellation may come up to 48 hours
# later). A queued item whose next event never came expires then: readers ignore items past expires_at,
# since DynamoDB deletes expired items lazily.
QUEUED_EXPIRY: Final = timedelta(hours=24)
# A job may run for up to 5 days; a workflow run, waits for approval included, lasts at most 35 days.
IN_PROGRESS_EXPIRY: Final = timedelta(days=5, hours=1)
WAITING_EXPIRY: Final = timedelta(days=35)
COMPLETED_EXPIRY: Final = timedelta(hours=1)


def job_key(job_id: int) -> str:
    return f"{JOB_KEY_PREFIX}{job_id}"


def label_set(labels: list[str] | tuple[str, ...]) -> str:
    return LABEL_SEPARATOR.join(sorted(labels))
