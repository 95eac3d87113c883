"""The collect stage: read every watched queue and metric once, consume nothing, return a Snapshot.

Per tick: one ListQueues page per discovery entry, one GetQueueAttributes per
queue, every tick, tracking on or off (concurrently, adapters/sqs_depth.py: the jobs
and the queue check each other, so neither may go unread), then GetMetricData
in two rounds, each ceil(M/500) calls per region for its M distinct metric queries. The first asks what the rules judge:
queue size and time (the AWS/SQS age only for queues holding a job). The second
asks the triage's evidence (every other signal, and the queue-depth history) for
the runner types that breach a rule, and is skipped when none does: a busy fleet's
queues hold jobs on most ticks, and evidence for each would multiply the bill,
which is per metric requested. A failed call degrades only the runner types that
read it. The calls reach back over the triage's baseline, so each signal's history
arrives with its current value. With tracking on, the breaching runner types' job
arrivals and run times come from the jobs' history (collect/history.py) unless the
config names a source for them: one paged Query per day and history shard they hash
to, beside the second round. With `autoscaler.prefix` in the config, the breaching runner
types' scale-up and job-retry log lines too (collect/autoscaler_log.py): one Logs Insights
query per region for at most 25 of them, also beside the second round. For the runner types a rule with
`forecast:` selects, their history and the busy ones' `Current runners` count (collect/forecast_read.py), started
beside the first round: each carries its ForecastInputs.
"""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.cloudwatch import MetricRequest, MetricSeries, get_metric_data
from queuewatch.adapters.jobs_table.heartbeats import read_beats
from queuewatch.adapters.jobs_table.jobs import queued_jobs, read_history
from queuewatch.adapters.slo_table.readings import slo_readings
from queuewatch.adapters.sqs import QueueDepth
from queuewatch.collect.autoscaler_log import Query, logs_query, read_autoscaler_logs, read_runner_counts
from queuewatch.collect.dead_letters import with_dead_letter_jobs
from queuewatch.collect.forecast import forecast_runner_types, with_forecast
from queuewatch.collect.forecast_read import ForecastRead, read_forecast
from queuewatch.collect.history import from_history, history_missing, history_readings, history_span
from queuewatch.collect.jobs import JobCensus, census, keep_listed_for_the_longest_waits, with_jobs
from queuewatch.collect.paths import aged_paths, read_paths, with_paths
from queuewatch.collect.queries import MetricSlot, metric_requests
from queuewatch.collect.queues import WatchedQueue, resolve_queues
from queuewatch.collect.readings import Spans, assemble
from queuewatch.config import Config
from queuewatch.model.autoscaler_log import MAX_READ_PER_TICK, AutoscalerLog, RunnerCountLine
from queuewatch.model.job_sources import JobSourceBeat
from queuewatch.model.jobs import JobRecord
from queuewatch.model.rules import judge
from queuewatch.model.signals import JOBS_SOURCE, SQS_SOURCE, SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot, Snapshot

MAX_THREADS = 64  # the queue reads wait on the network most of their time: 64 in flight (clients.DEPTH_CONNECTIONS)


def collect(
    config: Config,
    clients: AwsClients,
    *,
    now: datetime,
    account_id: str,
    snapshot_id: str,
    jobs_table: str | None = None,
    slo_table: str | None = None,
    read_logs: Query | None = None,
) -> Snapshot:
    """One tick's snapshot. With `jobs_table` (tracking on), one paged Query of its queued jobs more, and
    the history of the runner types that breach, for the triage. With `slo_table` too, each SLO's burn
    windows: one Query of its counters per SLO (alerting/slo_reading.py). The breaching runner types' autoscaler log
    lines are read with `read_logs` (by default Logs Insights through `clients`: collect/autoscaler_log.py)."""
    triage = config.defaults.triage
    spans = Spans(now, config.defaults.metric_lookback, triage.window, triage.baseline)
    judge_jobs = config.defaults.queue_source == JOBS_SOURCE
    with ThreadPoolExecutor(max_workers=MAX_THREADS, thread_name_prefix="collect") as pool:
        jobs_future = pool.submit(_queued_jobs, clients, jobs_table) if jobs_table else None
        quiet_floor = config.monitor.job_source_quiet_after or 0
        beats_future = pool.submit(read_beats, clients.dynamodb(), jobs_table, now, quiet_floor) if jobs_table else None
        targets, discovery = resolve_queues(config, clients, account_id, pool)
        forecasting = _forecasting(config, targets) if jobs_table else {}
        forecast_future = (
            _start_forecast(clients, jobs_table, targets, forecasting, spans, jobs_future, config, read_logs, pool)
            if jobs_table and forecasting
            else None
        )
        # A queue whose size comes from a metric (a fork's shared queue) is not read at all.
        sized_by_queue = [i for i, t in enumerate(targets) if t.signals.get(SignalName.QUEUE_SIZE) == SQS_SOURCE]
        depth_futures = {
            index: pool.submit(clients.queue_depths(targets[index].region).read, targets[index].url)
            for index in sized_by_queue
        }
        path_results = read_paths(targets, lambda region: clients.queue_depths(region).read, pool)
        depths = {index: _outcome(future) for index, future in depth_futures.items()}
        path_depths = path_results()
        # No AWS/SQS age for an empty queue: its oldest job is 0 old.
        no_age = {index for index, depth in depths.items() if isinstance(depth, QueueDepth) and depth.total == 0}
        judged = _read_metrics(
            clients, metric_requests(targets, no_age, path_ages=aged_paths(targets, path_depths)), spans, pool
        )
        tracked = _census(jobs_future, {t.runner_type for t in targets}, now) if jobs_future else None

        def reading(index: int, series: list[tuple[MetricSeries, MetricSlot]]) -> RunnerTypeSnapshot:
            runner_type = with_paths(
                assemble(targets[index], depths.get(index), series, spans), targets[index], index, path_depths
            )
            runner_type = with_dead_letter_jobs(runner_type, queued_records(), now)
            if tracked is None and not targets[index].has_queue:
                return _unread(runner_type)
            # Jobs are routed to a key, not a region: their figures go to the key's plain identity alone.
            copy = targets[index].is_copy
            return (
                runner_type if tracked is None or copy else with_jobs(runner_type, tracked, now, judge_jobs=judge_jobs)
            )

        def queued_records() -> list[JobRecord] | None:
            return jobs_future.result() if jobs_future and not jobs_future.exception() else None

        runner_types = [reading(index, judged.get(index, [])) for index in range(len(targets))]
        breaching = {index for index, runner_type in enumerate(runner_types) if _breaches(config, runner_type)}
        unread_logs = 0
        if breaching:
            wanted = {targets[i].runner_type: from_history(targets[i].signals) for i in breaching} if jobs_table else {}
            wanted = {name: signals for name, signals in wanted.items() if signals}
            queued_now = jobs_future.result() if jobs_future and not jobs_future.exception() else None
            read_already = forecast_future is not None and set(wanted) <= set(forecasting)
            history = (
                pool.submit(_history, clients, jobs_table, wanted, spans, queued_now)
                if jobs_table and wanted and not read_already
                else None
            )
            words = pool.submit(
                read_autoscaler_logs,
                targets,
                runner_types,
                breaching,
                prefix=config.autoscaler.prefix if config.autoscaler else None,
                window_seconds=triage.window,
                now=now,
                query=read_logs or logs_query(clients.logs),
            )
            evidence = _read_metrics(clients, metric_requests(targets, evidence_for=breaching), spans, pool)
            if history:
                from_jobs = history.result()
            elif forecast_future is not None and wanted and read_already:
                read = forecast_future.result()
                from_jobs = (
                    history_missing(wanted, read.error)
                    if read.error
                    else history_readings(read.jobs, wanted, spans.now, spans.window, spans.baseline)
                )
            else:
                from_jobs = {}
            said, unread_logs = _said(words, targets, breaching, now)
            for index in breaching:  # only these gained series: the others stand as the first round read them
                found = reading(index, judged.get(index, []) + evidence.get(index, []))
                extra = from_jobs.get(found.name)
                found = found.model_copy(update={"signals": {**found.signals, **extra}}) if extra else found
                runner_types[index] = found.model_copy(update={"autoscaler_log": said.get(index)})
        forecast = forecast_future.result() if forecast_future else None
        if forecast is not None and forecast.error is None:
            for index in forecast.index_of.values():
                runner_types[index] = with_forecast(
                    runner_types[index], forecast.demand, forecast.counts.get(index), triage.window
                )
        slos = (
            slo_readings(config, clients.dynamodb(), slo_table, _queued_or_reason(jobs_future), now)
            if slo_table and jobs_future and config.slos
            else []
        )
    census_read = tracked if isinstance(tracked, JobCensus) else None
    unjudged = sorted(found.name for found in runner_types if not config.rules_for(found.name))
    beats, beats_error = _beats(beats_future)
    return Snapshot(
        snapshot_id=snapshot_id,
        collected_at=now,
        runner_types=keep_listed_for_the_longest_waits(runner_types),
        discovery=discovery,
        triage_window_seconds=triage.window,
        baseline_seconds=triage.baseline,
        unmatched_jobs=census_read.unmatched if census_read else [],
        expired_jobs=census_read.expired if census_read else 0,
        github_hosted_jobs=census_read.github_hosted if census_read else 0,
        slos=slos,
        unjudged=unjudged[:50],
        unjudged_count=len(unjudged),
        job_sources=beats,
        job_sources_error=beats_error,
        jobs_tracked=census_read is not None,
        autoscaler_logs_unread=unread_logs,
        queue_only=not jobs_table,
    )


def _said(
    future: Future[tuple[dict[int, AutoscalerLog], int]],
    targets: list[WatchedQueue],
    breaching: set[int],
    now: datetime,
) -> tuple[dict[int, AutoscalerLog], int]:
    """The logs' readings and how many were past the bound; a read that failed outright is said on the breaching
    runner types it would have read, never dropped."""
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - a failed read degrades the words it would give, nothing else
        why = f"the autoscaler's log lines could not be read: {describe(error)}"[:1024]
        first = sorted(breaching)[:MAX_READ_PER_TICK]
        return {i: AutoscalerLog(log_groups=[], since=now, until=now, error=why) for i in first if targets[i]}, 0


def _unread(runner_type: RunnerTypeSnapshot) -> RunnerTypeSnapshot:
    """A runner type with no queue (queue: none) and job tracking off: nothing reads its demand, and it says so."""
    why = Reading.missing("queue: none and job tracking is off: nothing reads this runner type's jobs")
    signals = {**runner_type.signals, SignalName.QUEUE_SIZE: why, SignalName.QUEUE_TIME: why}
    return runner_type.model_copy(update={"signals": signals})


def _beats(future: Future[list[JobSourceBeat]] | None) -> tuple[list[JobSourceBeat], str | None]:
    """The job sources' heartbeats (one BatchGetItem), or why they could not be read."""
    if future is None:
        return [], None
    try:
        return future.result(), None
    except Exception as error:  # noqa: BLE001 - a failed read is said on the monitor, the tick goes on
        return [], f"jobs table: {describe(error)}"[:512]


def _queued_jobs(clients: AwsClients, table: str) -> list[JobRecord]:
    return list(queued_jobs(clients.dynamodb(), table))


def _history(
    clients: AwsClients,
    table: str,
    wanted: dict[str, set[SignalName]],
    spans: Spans,
    queued_now: list[JobRecord] | None,
) -> dict[str, dict[SignalName, Reading]]:
    """The triage's evidence from the jobs' history of the runner types in `wanted`, or why it is missing.
    The jobs queued now, read already this tick for the census, are not read again."""
    start, end = history_span(spans.now, spans.window, spans.baseline)
    try:
        jobs = read_history(clients.dynamodb(), table, start, end, runner_types=list(wanted), queued_now=queued_now)
        return history_readings(jobs, wanted, spans.now, spans.window, spans.baseline)
    except Exception as error:  # noqa: BLE001 - a failed read degrades the evidence it would give, nothing else
        return history_missing(wanted, describe(error))


def _forecasting(config: Config, targets: list[WatchedQueue]) -> dict[str, int]:
    """The runner types a rule with `forecast:` selects, by name, with their index. A copy of a key in another
    region is not one: jobs are routed to the key, and its plain identity carries them."""
    names = forecast_runner_types(config, (t.runner_type for t in targets))
    return {t.runner_type: i for i, t in enumerate(targets) if t.runner_type in names and not t.is_copy}


def _start_forecast(
    clients: AwsClients,
    table: str,
    targets: list[WatchedQueue],
    index_of: dict[str, int],
    spans: Spans,
    queued: Future[list[JobRecord]] | None,
    config: Config,
    read_logs: Query | None,
    pool: ThreadPoolExecutor,
) -> Future[ForecastRead]:
    """The forecast's reads (collect/forecast_read.py), started beside the first round."""
    prefix = config.autoscaler.prefix if config.autoscaler else None
    query = read_logs or logs_query(clients.logs)

    def read_counts(order: list[int]) -> tuple[dict[int, RunnerCountLine | str], int]:
        return read_runner_counts(
            targets, order, prefix=prefix, window_seconds=spans.window, now=spans.now, query=query
        )

    return pool.submit(read_forecast, clients, table, index_of, spans, queued, read_counts)


def _queued_or_reason(future: Future[list[JobRecord]]) -> list[JobRecord] | str:
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - the SLOs say it, as the census does
        return describe(error)


def _census(future: Future[list[JobRecord]], fleet: set[str], now: datetime) -> JobCensus | str:
    """The jobs counted, or why they could not be read (their runner types' figures then read as missing)."""
    try:
        return census(future.result(), fleet, now)
    except Exception as error:  # noqa: BLE001 - a failed read degrades what the jobs decide, nothing else
        return describe(error)


def _breaches(config: Config, runner_type: RunnerTypeSnapshot) -> bool:
    """Whether a rule breaches now on what the first round read: the pages that need the triage."""
    return any(judge(rule, runner_type).breached for rule in config.rules_for(runner_type.name))


def _read_metrics(
    clients: AwsClients,
    by_region: dict[str, list[tuple[MetricRequest, list[MetricSlot]]]],
    spans: Spans,
    pool: ThreadPoolExecutor,
) -> dict[int, list[tuple[MetricSeries, MetricSlot]]]:
    # One time range for the whole call: long enough for the triage's baseline, which costs
    # datapoints in the answer but no extra calls.
    start = spans.now - timedelta(seconds=spans.fetched)
    futures = {
        region: pool.submit(get_metric_data, clients.cloudwatch(region), [r for r, _ in pairs], start, spans.now)
        for region, pairs in by_region.items()
    }
    out: dict[int, list[tuple[MetricSeries, MetricSlot]]] = defaultdict(list)
    for region, pairs in by_region.items():
        answered = futures[region].result()  # get_metric_data reports failures in the series
        for request, slots in pairs:
            for slot in slots:
                out[slot.runner_index].append((answered[request.query_id], slot))
    return out


def _outcome(future: Future[QueueDepth]) -> QueueDepth | str:
    try:
        return future.result()
    except Exception as error:  # noqa: BLE001 - a failed queue read degrades its runner type only
        return describe(error)
