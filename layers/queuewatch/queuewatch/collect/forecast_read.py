"""The forecast's reads in a tick: the jobs' history of the forecast's runner types, then the autoscaler's count of
the busy ones. Both are reads the collector makes already for the runner types in breach (collect/history.py,
collect/autoscaler_log.py), widened: no new kind of AWS call.

The runner types are known from the config, so the read starts as soon as the queues are resolved, beside the
queue reads and the first metric round, and a tick waits on it only where it outlasts them:
- the history: one paged Query per UTC day and history shard the runner types hash to (at most 2 x 16 whatever
  the fleet), over the triage's window and baseline, read units by the jobs queued in that span; the jobs
  queued now, read for the census, are not read again. The triage's evidence for the runner types in breach
  is drawn from the same jobs when the forecast's runner types include them;
- the count: one Logs Insights query per region and 50 scale-up log groups, for the runner types that had a job
  in the window (a pool with none ran no scale-up, so wrote no count), the busiest first, at most
  MAX_COUNTS_PER_TICK; the others past the bound get no count this tick, and their forecast says its maximum
  was not read.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.jobs_table.jobs import read_history
from queuewatch.collect.forecast import count_from_log, demand_from_history
from queuewatch.collect.history import history_span
from queuewatch.collect.readings import Spans
from queuewatch.model.autoscaler_log import RunnerCountLine
from queuewatch.model.forecast.history import PoolCount
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.jobs import JobRecord

CountReader = Callable[[list[int]], tuple[dict[int, RunnerCountLine | str], int]]
"""(target indexes, busiest first) -> per index the count line or why it could not be read, and how many were
past the bound (collect/autoscaler_log.read_runner_counts)."""


@dataclass
class ForecastRead:
    """What the forecast's reads found, or why the history could not be read."""

    jobs: list[JobRecord] = field(default_factory=list)
    index_of: dict[str, int] = field(default_factory=dict)  # the runner types whose jobs `jobs` holds
    demand: dict[str, ForecastInputs] = field(default_factory=dict)
    counts: dict[int, PoolCount] = field(default_factory=dict)
    counts_past_bound: int = 0
    error: str | None = None


def read_forecast(
    clients: AwsClients,
    table: str,
    index_of: dict[str, int],
    spans: Spans,
    queued: Future[list[JobRecord]] | None,
    read_counts: CountReader,
) -> ForecastRead:
    """The forecast's reads for the runner types in `index_of` (name -> target index)."""
    start, end = history_span(spans.now, spans.window, spans.baseline)
    queued_now = queued.result() if queued is not None and not queued.exception() else None
    try:
        jobs = list(
            read_history(clients.dynamodb(), table, start, end, runner_types=list(index_of), queued_now=queued_now)
        )
    except Exception as error:  # noqa: BLE001 - a failed read degrades the forecast alone
        return ForecastRead(index_of=index_of, error=f"jobs table: {describe(error)}"[:512])
    demand = demand_from_history(jobs, index_of, spans.now, spans.window)
    busy = sorted(
        (name for name, found in demand.items() if found.arrived or found.running),
        key=lambda name: (-(demand[name].arrived + demand[name].running), name),
    )
    try:
        lines, past = read_counts([index_of[name] for name in busy]) if busy else ({}, 0)
    except Exception:  # noqa: BLE001 - no count read: each forecast says its maximum was not read
        lines, past = {}, len(busy)
    counts = {
        index: count
        for index, line in lines.items()
        if isinstance(line, RunnerCountLine) and (count := count_from_log(line, spans.now)) is not None
    }
    return ForecastRead(jobs, index_of, demand, counts, past)
