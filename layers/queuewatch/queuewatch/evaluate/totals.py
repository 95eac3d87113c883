"""A page's total of jobs queued, each job counted once, however many queues hold its scale-up request.

Under the upstream webhook's `queue_selection_strategy: all` (v7.9) one job's request goes to every queue
whose labels match, and with several regions (v7.10) a key's queues in each region are one demand. So a
sum of the queues' requests counts a job once per queue. The tracked jobs do not: the track stage routes
each job to one runner type key (track/routing.py: the first that takes its labels), and a key's copies in
other regions carry no jobs (collect/stage.py). So:

- tracking read this tick: the jobs of the page's runner type keys, each key once: every job once; with
  `queue_source: jobs` and `first` or `random` dispatch, each key's worse of its jobs and its requests (a request
  is one job there, so a job whose events were lost still counts); with `all` dispatch the tracked jobs alone
  (the worse-of figure would count a tracked job once per queue holding its request), unless one queue holds
  more requests than the page's jobs tracked: then the bounds;
- tracking off, `first` or `random` dispatch: one request per job, the sum of the requests;
- tracking off, `all` dispatch: not summed; the page says the bounds (the most one queue holds, the sum).
"""

from __future__ import annotations

from collections.abc import Iterable

from queuewatch.base.wording import plural
from queuewatch.config import Config
from queuewatch.model.signals import JOBS_SOURCE, SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot, Snapshot, runner_type_key


def jobs_total(
    config: Config, snapshot: Snapshot | None, members: Iterable[str], by_name: dict[str, RunnerTypeSnapshot]
) -> tuple[float | None, str | None]:
    """The page's jobs queued, each once, and how that was counted; (None, why) when it cannot be."""
    names = sorted(members)
    if snapshot is None or not names:
        return None, None
    shared = config.defaults.queue_selection_strategy == "all"
    if snapshot.jobs_tracked:
        worse_of = config.defaults.queue_source == JOBS_SOURCE and not shared
        signal = SignalName.QUEUE_SIZE if worse_of else SignalName.JOBS_QUEUED
        keys = sorted({runner_type_key(name) for name in names})
        counts = [by_name[key].value(signal) if key in by_name else None for key in keys]
        if any(count is None for count in counts):
            return None, "not counted: the tracked jobs of some runner types were not read"
        tracked = sum(c or 0 for c in counts)
        most = max((_requests(config, by_name[name]) or 0 for name in names if name in by_name), default=0)
        if shared and most > tracked:
            return None, (
                f"between {plural(int(most), 'job')} and more: one queue holds {most:g} scale-up requests while the "
                f"page's runner types track {plural(int(tracked), 'job')} queued; some jobs' events are not arriving"
            )
        return tracked, "the tracked jobs, each counted once whatever queues hold its request"
    sizes = [by_name[name].value(SignalName.QUEUE_SIZE) if name in by_name else None for name in names]
    known = [size for size in sizes if size is not None]
    if len(known) < len(sizes):
        return None, "not counted: some queues were not read"
    if config.defaults.queue_selection_strategy == "all" and len(known) > 1:
        least, most = max(known), sum(known)
        return None, (
            f"between {plural(int(least), 'job')} and {most:g}: with queue_selection_strategy all, one job's request "
            "sits in every queue that matches it; turn tracking on to count each job once"
        )
    return sum(known), "the scale-up requests, one per job"


def _requests(config: Config, runner_type: RunnerTypeSnapshot) -> float | None:
    """The scale-up requests in the runner type's queue: under `queue_source: jobs` its own signal."""
    if config.defaults.queue_source == JOBS_SOURCE:
        return runner_type.value(SignalName.SCALE_UP_REQUESTS)
    return runner_type.value(SignalName.QUEUE_SIZE)
