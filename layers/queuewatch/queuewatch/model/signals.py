"""What the collector can read for a runner type, and which of those the triage sums over time."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Literal


class SignalName(StrEnum):
    """Everything the collector can read for a runner type."""

    QUEUE_SIZE = "queue_size"  # jobs waiting: SQS visible + in flight + delayed, or a metric
    QUEUE_TIME = "queue_time"  # age of the oldest queued job, seconds
    TOTAL_RUNNERS = "total_runners"
    BUSY_RUNNERS = "busy_runners"
    IDLE_RUNNERS = "idle_runners"
    MAX_RUNNERS = "max_runners"  # the autoscaler's maximum for the runner type
    MAX_HIT = "max_hit"  # the autoscaler's own "reached maximum" count
    CREATION_FAILURES = "creation_failures"
    JOB_ARRIVALS = "job_arrivals"
    JOBS_DEQUEUED = "jobs_dequeued"  # the scale-up consumer's throughput
    JOB_DURATION = "job_duration"
    EC2_EXCEPTIONS = "ec2_exceptions"  # RunInstances errors, one query per exception name
    # Requests left in each GitHub App's rate limit, one query per app (upstream's GitHubAppRateLimitRemaining,
    # by AppId; v7.11's additional_github_apps spreads the control plane's calls over several apps).
    GITHUB_APP_RATE_LIMIT = "github_app_rate_limit"
    # The runners' own resources, in percent used (AWS/EC2 CPUUtilization, the CloudWatch agent's
    # mem_used_percent and disk_used_percent): a runner short of one takes jobs slower, or fails them.
    CPU_USED = "cpu_used"
    MEMORY_USED = "memory_used"
    DISK_USED = "disk_used"
    # Where jobs are tracked (track/) and the rules judge the jobs, the autoscaler's queue becomes
    # evidence: the scale-up requests it holds, and the oldest one's age.
    SCALE_UP_REQUESTS = "scale_up_requests"
    SCALE_UP_REQUEST_AGE = "scale_up_request_age"
    # Where jobs are tracked but the rules judge the requests (queue_source: sqs): the jobs as evidence.
    JOBS_QUEUED = "jobs_queued"
    OLDEST_JOB_AGE = "oldest_job_age"
    # The autoscaler's other queues beside a runner type's build queue (demand_paths.py): the job-retry
    # queue's checks waiting (GetQueueAttributes) and its oldest one's age (AWS/SQS); the build queue's
    # dead-letter queue likewise, each message a scale-up request the autoscaler gave up on.
    JOB_RETRY_CHECKS = "job_retry_checks"
    JOB_RETRY_AGE = "job_retry_age"
    DEAD_LETTERED = "dead_lettered"
    DEAD_LETTER_AGE = "dead_letter_age"


COUNT_SIGNALS = frozenset(
    {
        SignalName.JOB_ARRIVALS,
        SignalName.JOBS_DEQUEUED,
        SignalName.CREATION_FAILURES,
        SignalName.MAX_HIT,
        SignalName.EC2_EXCEPTIONS,
    }
)
"""Events per period: the triage sums them over its window and compares with their baseline."""

RESOURCE_SIGNALS: Mapping[SignalName, str] = {
    SignalName.CPU_USED: "CPU",
    SignalName.MEMORY_USED: "memory",
    SignalName.DISK_USED: "disk",
}
"""The runners' resources in percent used, with the word a finding uses for each."""

RULE_SIGNALS = frozenset({SignalName.QUEUE_SIZE, SignalName.QUEUE_TIME})
"""What the rules judge (rules.judge); every other signal is the triage's evidence."""

CROSS_CHECKED: Mapping[SignalName, tuple[SignalName, SignalName]] = {
    SignalName.QUEUE_SIZE: (SignalName.JOBS_QUEUED, SignalName.SCALE_UP_REQUESTS),
    SignalName.QUEUE_TIME: (SignalName.OLDEST_JOB_AGE, SignalName.SCALE_UP_REQUEST_AGE),
}
"""Where jobs are tracked and judged (queue_source: jobs), each rule signal is the worse of two that check
each other: the tracked jobs, and the scale-up requests in the autoscaler's queue (rules.judge)."""

SIGNAL_ORIGIN: Mapping[SignalName, Literal["jobs", "queue"]] = {
    SignalName.JOBS_QUEUED: "jobs",
    SignalName.OLDEST_JOB_AGE: "jobs",
    SignalName.SCALE_UP_REQUESTS: "queue",
    SignalName.SCALE_UP_REQUEST_AGE: "queue",
}
"""Which of the two signals a cross-checked figure comes from, in a page's words."""

JOBS_SOURCE: Literal["jobs"] = "jobs"
"""The tracked jobs (track/): what GitHub says waits, whether or not the autoscaler still holds a request."""

SQS_SOURCE: Literal["sqs"] = "sqs"
"""A signal read from the queue itself: its attributes, or its AWS/SQS metric."""

# The AWS/SQS metric behind each signal whose source is `sqs`; queue size is read
# from GetQueueAttributes instead, since it is exact and current.
SQS_METRICS: Mapping[SignalName, tuple[str, str]] = {
    SignalName.QUEUE_TIME: ("ApproximateAgeOfOldestMessage", "Maximum"),
    SignalName.JOB_ARRIVALS: ("NumberOfMessagesSent", "Sum"),
    SignalName.JOBS_DEQUEUED: ("NumberOfMessagesDeleted", "Sum"),
}

PATH_SIGNAL_NAMES = frozenset(
    {SignalName.JOB_RETRY_CHECKS, SignalName.JOB_RETRY_AGE, SignalName.DEAD_LETTERED, SignalName.DEAD_LETTER_AGE}
)
"""Read from the autoscaler's other queues beside the build queue (demand_paths.py), never configured."""
