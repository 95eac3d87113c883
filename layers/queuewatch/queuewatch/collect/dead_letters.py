"""Which tracked jobs a runner type's dead-lettered scale-up requests likely stood for. Pure.

The request's body names its job (upstream's ActionRequestMessage: id, repositoryOwner, repositoryName),
but reading it takes ReceiveMessage, which the watcher never calls on the autoscaler's queues: a receive
hides the message and counts against its redrive. So the job is inferred from what queuewatch may read:
the tracked jobs of that runner type still queued (never started: no runner took them), nearest first to
when the oldest dead-lettered request was sent (now minus its AWS/SQS age: a standard queue keeps a
message's first enqueue time when it moves it to the dead-letter queue), or the longest queued first when
that age is unknown; as many as requests are dead-lettered, at most MAX_LISTED. A request for a job that
since started (another runner took it) names no job here. Without tracking nothing names the job: the
page says so.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from queuewatch.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.signals import SignalName
from queuewatch.snapshot import RunnerTypeSnapshot, WaitingJob, runner_type_key

MAX_LISTED = 5


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
        sent = now - timedelta(seconds=age)
        jobs.sort(key=lambda job: (abs((job.queued_since - sent).total_seconds()), job.job_id))
    else:
        jobs.sort(key=lambda job: (job.queued_since, job.job_id))
    listed = [
        WaitingJob(repo=job.repo[:128], url=job.html_url, created_at=job.queued_since, run_id=job.run_id)
        for job in jobs[: min(int(dead), MAX_LISTED)]
    ]
    return runner_type.model_copy(update={"dead_letter_jobs": listed})
