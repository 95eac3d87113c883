"""One factory for the jobs table's records in tests: each test names what it is about, the rest is a default."""

from datetime import datetime, timedelta
from typing import Any

from queuewatch.model.jobs import PROGRESS, JobRecord, JobStatus


def job_record(
    job_id: int,
    runner_type: str | None,
    queued_at: datetime | None,
    *,
    started_at: datetime | None = None,
    completed_at: datetime | None = None,
    status: JobStatus | None = None,
    labels: tuple[str, ...] | None = None,
    created_at: datetime | None = None,
    **fields: Any,
) -> JobRecord:
    """A job of repository o/r queued at `queued_at` (None: waiting for approval, then `created_at` is needed).

    By default its status follows its times (completed with an end, in progress with a start, queued
    otherwise), its labels are its runner type, its run is its own, it was created when queued, last
    updated at its latest time, and it expires 14 days after it was created. Any other field by name.
    """
    if status is None:
        status = "completed" if completed_at else "in_progress" if started_at else "queued"
    created = created_at or queued_at
    assert created is not None, "a job waiting for approval needs its created_at"
    labels = labels if labels is not None else (runner_type,) if runner_type else ()
    defaults: dict[str, Any] = {
        "run_id": job_id,
        "label_set": ",".join(labels),
        "org": "o",
        "repo": "o/r",
        "html_url": None,
        "updated_at": completed_at or started_at or queued_at or created,
        "expires_at": created + timedelta(days=14),
    }
    return JobRecord(
        job_id=job_id,
        status=status,
        progress=PROGRESS[status],
        runner_type=runner_type,
        labels=labels,
        created_at=created,
        queued_at=queued_at,
        started_at=started_at,
        completed_at=completed_at,
        **(defaults | fields),
    )
