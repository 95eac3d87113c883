"""The collect stage: read every watched queue and metric once, consume nothing, return a Snapshot.

queues.py binds runner types to their queues (and discovers more), queries.py plans
each GetMetricData round, readings.py turns answers into readings, stage.py runs a tick.
"""

from queuewatch.collect.queues import WatchedQueue, resolve_queues
from queuewatch.collect.stage import MAX_THREADS, collect

__all__ = ["MAX_THREADS", "WatchedQueue", "collect", "resolve_queues"]
