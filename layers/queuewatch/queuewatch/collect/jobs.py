"""The tracked jobs, as the collector adds them to a snapshot: per runner type, how many are queued and
since when, and which wait longest; jobs no runner type serves, by their labels; jobs lost past GitHub's
limit. Pure: the jobs come from one paged Query of the history index's queued partition
(adapters/job_store.queued_jobs). A job's wait starts when it was queued for a runner (queued_at), so a
deployment's approval wait is never queue time.

The jobs' count and oldest wait are jobs_queued and oldest_job_age. Where the rules judge the jobs
(queue_source: jobs, the default with tracking), what the autoscaler's queue holds moves to
scale_up_requests and scale_up_request_age, and a runner type's queue size and time are the worse of the
two: the rules judge both (rules.judge), so either signal alone can page while the other is blind.
Otherwise (queue_source: sqs) the jobs ride along as evidence.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from queuewatch.model.jobs import BOOT_GRACE, QUEUED_LIMIT, JobRecord, github_hosted
from queuewatch.model.runner_names import RunnerTypeNames
from queuewatch.model.signals import CROSS_CHECKED, SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot, UnmatchedJobs, WaitingJob

LISTED_PER_RUNNER_TYPE = 5
LISTED_RUNNER_TYPES = 50  # as many as a page lists: the snapshot stays small at any fleet size
LISTED_LABEL_SETS = 20


@dataclass
class Waiting:
    count: int = 0
    past_boot: int = 0  # queued longer than BOOT_GRACE: no runner booting for it any more
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
    watched = RunnerTypeNames(fleet)
    expired = hosted = 0
    for job in jobs:
        if now - job.queued_since > QUEUED_LIMIT:
            expired += 1  # GitHub cancelled it long ago: its in_progress or completed event was lost
            continue
        runner_type = watched.resolve(job.runner_type)
        if runner_type is not None:
            waiting = by_runner_type[runner_type]
            waiting.count += 1
            waiting.past_boot += now - job.queued_since > BOOT_GRACE
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
        past_boot = None
    else:
        waiting = census.by_runner_type.get(runner_type.name, Waiting())
        oldest = waiting.oldest
        past_boot = waiting.past_boot
        size = Reading.of(waiting.count)
        age = Reading.of(max(0.0, (now - oldest[0].queued_since).total_seconds()) if oldest else 0.0)
    signals[SignalName.JOBS_QUEUED], signals[SignalName.OLDEST_JOB_AGE] = size, age
    if judge_jobs:
        for judged, (jobs, requests) in CROSS_CHECKED.items():
            queue = signals.pop(judged, None)
            if queue is not None:  # a runner type with no queue (queue: none) is judged on its jobs alone
                signals[requests] = queue
            signals[judged] = worse(signals[jobs], queue)
    # WaitingJob.created_at is the alert's "waiting since": when the job was queued for a runner.
    listed = [WaitingJob(repo=j.repo[:128], url=j.html_url, created_at=j.queued_since, run_id=j.run_id) for j in oldest]
    update = {"signals": signals, "oldest_jobs": listed, "jobs_past_boot": past_boot}
    return runner_type.model_copy(update=update)


def worse(jobs: Reading, queue: Reading | None) -> Reading:
    """The figure a page shows for two signals that check each other: the larger of those read (the queue's
    on a tie, with its history for the triage); missing only when neither was read. The rules judge the two
    themselves (rules.judge), so a lower bound never reads as clear."""
    if queue is None or queue.value is None:
        return jobs if jobs.value is not None or queue is None else _both_missing(jobs, queue)
    if jobs.value is None or queue.value >= jobs.value:
        return queue
    return jobs


def _both_missing(jobs: Reading, queue: Reading) -> Reading:
    return Reading.missing(f"jobs: {jobs.error}; queue: {queue.error}")


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
