"""The tracked jobs, as the collector adds them to a snapshot: per runner type, how many are queued and
since when, and which wait longest; jobs no runner type serves, by their labels; jobs lost past GitHub's
limit. Pure: the jobs come from one paged Query of the history index's queued partition
(adapters/job_store.queued_jobs). A job's wait starts when it was queued for a runner (queued_at), so a
deployment's approval wait is never queue time.

Where the rules judge the jobs (queue_source: jobs, the default with tracking), a runner type's queue
size and time become the jobs' count and oldest wait, and what the autoscaler's queue holds moves to
scale_up_requests and scale_up_request_age. Otherwise the jobs ride along as jobs_queued and
oldest_job_age.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from queuewatch.jobs import QUEUED_LIMIT, JobRecord, github_hosted
from queuewatch.signals import SignalName
from queuewatch.snapshot import Reading, RunnerTypeSnapshot, UnmatchedJobs, WaitingJob

LISTED_PER_RUNNER_TYPE = 5
LISTED_RUNNER_TYPES = 50  # as many as a page lists: the snapshot stays small at any fleet size
LISTED_LABEL_SETS = 20


@dataclass
class Waiting:
    count: int = 0
    oldest: list[JobRecord] = field(default_factory=list)  # oldest first, at most LISTED_PER_RUNNER_TYPE


@dataclass
class JobCensus:
    by_runner_type: dict[str, Waiting]
    unmatched: list[UnmatchedJobs]
    expired: int
    github_hosted: int = 0


def census(jobs: Iterable[JobRecord], fleet: set[str], now: datetime) -> JobCensus:
    """Count the queued jobs. Jobs arrive longest queued first (the index's sort key), so each runner type's
    first ones wait longest. The track stage routes a job to a discovered name only as a candidate, in lower
    case: it is this runner type's only if this collector watches a queue of that name, compared without
    case as GitHub compares labels. A job no watched runner type serves counts as unmatched, unless it is
    for GitHub's own hosted runners, which are not this fleet's to serve."""
    by_runner_type: dict[str, Waiting] = defaultdict(Waiting)
    unmatched: dict[str, list[JobRecord]] = defaultdict(list)
    watched = {name.lower(): name for name in sorted(fleet, reverse=True)}  # of two in different case: the first
    expired = hosted = 0
    for job in jobs:
        if now - job.queued_since > QUEUED_LIMIT:
            expired += 1  # GitHub cancelled it long ago: its in_progress or completed event was lost
            continue
        runner_type = job.runner_type if job.runner_type in fleet else watched.get((job.runner_type or "").lower())
        if runner_type is not None:
            waiting = by_runner_type[runner_type]
            waiting.count += 1
            if len(waiting.oldest) < LISTED_PER_RUNNER_TYPE:
                waiting.oldest.append(job)
        elif github_hosted(job.labels):
            hosted += 1
        else:
            unmatched[job.label_set].append(job)
    label_sets = sorted(unmatched.items(), key=lambda item: (-len(item[1]), item[0]))[:LISTED_LABEL_SETS]
    return JobCensus(
        by_runner_type=dict(by_runner_type),
        unmatched=[
            UnmatchedJobs(
                label_set=labels[:256],
                count=len(waiting),
                oldest_seconds=max(0.0, (now - min(j.queued_since for j in waiting)).total_seconds()),
            )
            for labels, waiting in label_sets
        ],
        expired=expired,
        github_hosted=hosted,
    )


def with_jobs(
    runner_type: RunnerTypeSnapshot, census: JobCensus | str, now: datetime, *, judge_jobs: bool
) -> RunnerTypeSnapshot:
    """The runner type with its tracked jobs; `census` is the reason when the jobs could not be read."""
    signals = dict(runner_type.signals)
    if isinstance(census, str):
        size, age = Reading.missing(f"jobs table: {census}"), Reading.missing(f"jobs table: {census}")
        oldest: list[JobRecord] = []
    else:
        waiting = census.by_runner_type.get(runner_type.name, Waiting())
        oldest = waiting.oldest
        size = Reading.of(waiting.count)
        age = Reading.of(max(0.0, (now - oldest[0].queued_since).total_seconds()) if oldest else 0.0)
    if judge_jobs:
        for judged, evidence in (
            (SignalName.QUEUE_SIZE, SignalName.SCALE_UP_REQUESTS),
            (SignalName.QUEUE_TIME, SignalName.SCALE_UP_REQUEST_AGE),
        ):
            if judged in signals:
                signals[evidence] = signals[judged]
        signals[SignalName.QUEUE_SIZE], signals[SignalName.QUEUE_TIME] = size, age
    else:
        signals[SignalName.JOBS_QUEUED], signals[SignalName.OLDEST_JOB_AGE] = size, age
    # WaitingJob.created_at is the alert's "waiting since": when the job was queued for a runner.
    listed = [WaitingJob(repo=j.repo[:128], url=j.html_url, created_at=j.queued_since) for j in oldest]
    return runner_type.model_copy(update={"signals": signals, "oldest_jobs": listed})


def keep_listed_for_the_longest_waits(runner_types: list[RunnerTypeSnapshot]) -> list[RunnerTypeSnapshot]:
    """Waiting jobs listed only for the LISTED_RUNNER_TYPES runner types whose oldest job waits longest."""
    listed = [rt for rt in runner_types if rt.oldest_jobs]
    if len(listed) <= LISTED_RUNNER_TYPES:
        return runner_types
    keep = {rt.name for rt in sorted(listed, key=lambda rt: rt.oldest_jobs[0].created_at)[:LISTED_RUNNER_TYPES]}
    return [
        rt if rt.name in keep or not rt.oldest_jobs else rt.model_copy(update={"oldest_jobs": []})
        for rt in runner_types
    ]
