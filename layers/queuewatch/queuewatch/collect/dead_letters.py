"""Which tracked jobs a runner type's dead-lettered scale-up requests likely stood for. Pure.

The request's body names its job (upstream's ActionRequestMessage: id, repositoryOwner, repositoryName),
but reading it takes ReceiveMessage, which the watcher never calls on the autoscaler's queues: a receive
hides the message and counts against its redrive. So the job is inferred from what queuewatch may read:
the tracked jobs of that runner type still queued (never started: no runner took them). AWS/SQS gives a
dead-letter queue's oldest age from when the message was moved there, not from when it was sent (SQS's
dead-letter retention notes), and scale-up received it maxReceiveCount times first, a visibility timeout
apart: so the job was queued before that move. Those queued before it are listed, the latest first; or
the longest queued first when that age is unknown; as many as requests are dead-lettered, at most
MAX_LISTED. A request for a job that since started (another runner took it) names no job here. Without
tracking nothing names the job: the page says so.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from queuewatch.model.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot, WaitingJob, runner_type_key

MAX_LISTED = 5
CLOCK_SLACK = timedelta(minutes=1)
"""GitHub's clock stamps a job's queued time, AWS's the move: a job stamped this much after the move may still be it."""


def with_dead_letter_jobs(
    runner_type: RunnerTypeSnapshot, queued: list[JobRecord] | None, now: datetime
) -> RunnerTypeSnapshot:
    """The runner type with the jobs its dead-lettered requests likely stood for; as is without any."""
    dead = runner_type.value(SignalName.DEAD_LETTERED)
    if queued is None or not dead:
        return runner_type
    key = runner_type_key(runner_type.name).lower()  # a copy's requests are the key's jobs, as routed
    jobs = [
        job
        for job in queued
        if job.queued and (job.runner_type or "").lower() == key and now - job.queued_since <= QUEUED_LIMIT
    ]
    age = runner_type.value(SignalName.DEAD_LETTER_AGE)
    if age:
        moved = now - timedelta(seconds=age)
        jobs = [job for job in jobs if job.queued_since <= moved + CLOCK_SLACK]
        jobs.sort(key=lambda job: (abs((moved - job.queued_since).total_seconds()), job.job_id))
    else:
        jobs.sort(key=lambda job: (job.queued_since, job.job_id))
    listed = [
        WaitingJob(repo=job.repo[:128], url=job.html_url, created_at=job.queued_since, run_id=job.run_id)
        for job in jobs[: min(int(dead), MAX_LISTED)]
    ]
    return runner_type.model_copy(update={"dead_letter_jobs": listed})
