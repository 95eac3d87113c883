"""The autoscaler's other paths a job's scale-up request takes, beside a runner type's build queue.

The terraform-aws-github-runner module (modules/multi-runner/queues.tf, modules/runners/job-retry) names
them after the build queue `<prefix>-<key>-queued-builds`:

- the job-retry queue, `<prefix>-<key>-job-retry` (runner_config.job_retry): after scale-up starts a runner
  it sends a delayed check here; the check re-queues the job while GitHub still holds it queued. A check
  that throws is dropped for good, so a check older than its longest delay (15 minutes) is a stuck path;
- the build queue's dead-letter queue, `<prefix>-<key>-queued-builds_dead_letter` (`.fifo` where the build
  queue is FIFO; runner_config.redrive_build_queue): a request scale-up failed `maxReceiveCount` times.
  No runner will ever be started for it.

Each is judged by a rule of its own, per runner type (`job-retry`, `dead-letter`), with the config's
`defaults.job_retry` and `defaults.dead_letter` thresholds. Pure: no AWS, no YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from queuewatch.model.signals import SignalName

JOB_RETRY_RULE = "job-retry"
DEAD_LETTER_RULE = "dead-letter"
PATH_RULES = frozenset({JOB_RETRY_RULE, DEAD_LETTER_RULE})
"""Rule names queuewatch reserves for the autoscaler's other queues: no configured rule may take them."""

BUILD_QUEUE = re.compile(r"^(?P<base>.+)-queued-builds(?P<fifo>\.fifo)?$")
JOB_RETRY_SUFFIX = "-job-retry"
DEAD_LETTER_SUFFIX = "-queued-builds_dead_letter"


@dataclass(frozen=True)
class PathQueues:
    """The names of a build queue's job-retry and dead-letter queues, where upstream's naming gives them."""

    job_retry: str | None
    dead_letter: str | None


def beside(build_queue: str) -> PathQueues:
    """The job-retry and dead-letter queue names upstream gives a build queue; none for a name it did not give."""
    found = BUILD_QUEUE.match(build_queue)
    if found is None:
        return PathQueues(None, None)
    base, fifo = found["base"], found["fifo"] or ""
    return PathQueues(job_retry=f"{base}{JOB_RETRY_SUFFIX}", dead_letter=f"{base}{DEAD_LETTER_SUFFIX}{fifo}")


PATH_SIGNALS: dict[str, tuple[SignalName, SignalName]] = {
    JOB_RETRY_RULE: (SignalName.JOB_RETRY_CHECKS, SignalName.JOB_RETRY_AGE),
    DEAD_LETTER_RULE: (SignalName.DEAD_LETTERED, SignalName.DEAD_LETTER_AGE),
}
"""Each path's (count, oldest age) signals: the count from GetQueueAttributes, the age from AWS/SQS."""

SIGNAL_WORDS: dict[SignalName, str] = {
    SignalName.QUEUE_SIZE: "queue size",
    SignalName.QUEUE_TIME: "queue time",
    SignalName.JOB_RETRY_CHECKS: "job-retry checks",
    SignalName.JOB_RETRY_AGE: "oldest job-retry check",
    SignalName.DEAD_LETTERED: "dead-lettered requests",
    SignalName.DEAD_LETTER_AGE: "oldest dead-lettered request",
}
"""How a rule's condition names the signal it judges."""

PATH_METRICS: dict[str, tuple[str, str]] = {
    JOB_RETRY_RULE: ("JobRetryChecks", "JobRetryAge"),
    DEAD_LETTER_RULE: ("DeadLettered", "DeadLetterAge"),
}
"""The evaluator's per-runner-type metrics of each path (count, oldest age in seconds), while it holds messages."""

PATH_COUNTED = {JOB_RETRY_RULE: "job-retry checks", DEAD_LETTER_RULE: "dead-lettered"}
"""How a page's subject counts what each path's queue holds: "2 dead-lettered, oldest 42m"."""
