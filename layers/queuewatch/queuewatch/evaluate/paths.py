"""Wording the pages of the autoscaler's other queues (demand_paths.py): job-retry and dead-letter."""

from __future__ import annotations

from datetime import datetime

from queuewatch.alerting.alert import RunnerTypeFigures
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import plural
from queuewatch.model.demand_paths import DEAD_LETTER_RULE, JOB_RETRY_RULE
from queuewatch.model.rules import Rule
from queuewatch.model.snapshot import RunnerTypeSnapshot, Snapshot

PATH_TITLES = {
    JOB_RETRY_RULE: "Job-retry checks stuck",
    DEAD_LETTER_RULE: "Scale-up requests dead-lettered",
}
NOUNS = {JOB_RETRY_RULE: "job-retry check", DEAD_LETTER_RULE: "dead-lettered request"}


def path_queue(rule: Rule, found: RunnerTypeSnapshot) -> str | None:
    """The queue a path rule's row names: the job-retry or dead-letter queue itself."""
    return found.dead_letter_queue if rule.name == DEAD_LETTER_RULE else found.job_retry_queue


def dead_letter_note(rule: Rule, found: RunnerTypeSnapshot, snapshot: Snapshot | None) -> str | None:
    """What a dead-letter row says of its jobs: inferred from tracked jobs, or unknown, and why."""
    if rule.name != DEAD_LETTER_RULE or not found.value(rule.size_signal):
        return None
    unread = "queuewatch never receives from the autoscaler's queues, so it does not read the request's body"
    if snapshot is None or not snapshot.jobs_tracked:
        return (
            f"job unknown: tracking is off (or the jobs table did not answer), and {unread}. The body names the "
            "job (repositoryOwner, repositoryName, id): look in the queue's console, or turn tracking on"
        )
    if not found.dead_letter_jobs:
        return (
            f"job unknown: no tracked job of {found.name} queued before the request was dead-lettered is still "
            "queued; it may have started on another runner"
        )
    return (
        "jobs inferred, not read: tracked jobs of this runner type that never started, queued before the oldest "
        f"request was dead-lettered, the latest first ({unread})"
    )


def path_summary(rule: Rule, figures: list[RunnerTypeFigures], resolved: bool, now: datetime) -> str:
    noun = NOUNS.get(rule.name, "message")
    lines = []
    for f in figures[:5]:
        count = "no data" if f.queue_size is None else plural(int(f.queue_size), noun)
        age = "" if f.queue_time_seconds is None else f", oldest {format_duration(f.queue_time_seconds)}"
        jobs = "".join(
            f"; likely {job.repo}"
            + (f" run {job.run_id}" if job.run_id else "")
            + f", queued {format_duration(max(0.0, (now - job.created_at).total_seconds()))} ago"
            for job in f.oldest_jobs[:1]
        )
        lines.append(f"{f.runner_type} ({f.queue}, {f.place}): {count}{age}{jobs}")
    more = f" and {len(figures) - 5} more" if len(figures) > 5 else ""
    verb = "cleared" if resolved else "firing"
    return f"{PATH_TITLES[rule.name]}, {verb} ({rule.condition()}): " + " | ".join(lines) + more
