"""One backtest: read a config's history and replay it; the command line's options and output.

Two sources of history: the tracked jobs (the jobs table's history, rebuilt tick by tick: what the live
rules judge where tracking is on) and CloudWatch's AWS/SQS and runner metrics (the autoscaler's queue,
kept up to 455 days). The report says which it replayed."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import boto3
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.jobs_table.jobs import read_history
from queuewatch.base.durations import parse_duration
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.wording import moment
from queuewatch.collect.queues import WatchedQueue, resolve_queues
from queuewatch.config import Config
from queuewatch.config.load import ConfigError, load_config
from queuewatch.model.jobs import QUEUED_LIMIT, JobRecord
from queuewatch.model.signals import JOBS_SOURCE
from queuewatch.model.snapshot import DiscoveryResult, Snapshot
from queuewatch_cli.commands.backtest.forecast import ForecastReplays, forecast_lines, with_horizon
from queuewatch_cli.commands.backtest.forecast_feed import (
    ForecastFeed,
    RunnerCounts,
    forecast_runner_types,
    maximum_of,
    read_runner_counts,
)
from queuewatch_cli.commands.backtest.history import TICK, ChunkRead, Observations, coarser_parts, plan_history
from queuewatch_cli.commands.backtest.jobs import JobObservations, job_spans
from queuewatch_cli.commands.backtest.plot import Timeline
from queuewatch_cli.commands.backtest.replay import Replay
from queuewatch_cli.commands.backtest.report import compare, comparison_lines, report
from queuewatch_cli.commands.backtest.slo_replay import SloCounters
from queuewatch_cli.common.plotting import plot_problem
from queuewatch_cli.common.times import held_start, parse_moment

PLACEHOLDER_ACCOUNT = "000000000000"  # where the caller's account cannot be read: history is read by queue name
JOBS, CLOUDWATCH = "jobs", "cloudwatch"
FORECAST_AS_CONFIGURED = "config"  # --forecast with no horizon: each rule's own
UNANSWERED = (ReadTimeoutError, ConnectTimeoutError, ConnectionClosedError, EndpointConnectionError)


@dataclass
class Extent:
    """What the history read holds: the tracked jobs start where the jobs table's do, which may be after --from."""

    held_from: datetime | None = None  # None: from --from (or not known: CloudWatch answers for its range)
    jobs: list[JobRecord] | None = None  # the tracked jobs read (None: CloudWatch's history), for --suggest's SLOs
    unforecast: list[str] = field(default_factory=list)  # forecast runner types with no maximum: no forecast


@dataclass(frozen=True)
class PoolSource:
    """--forecast: where the replay's runner counts and maximums come from (forecast_feed.py)."""

    maximum: int | None = None  # --max: for runner types whose config gives no runners_maximum_count
    counts: dict[str, RunnerCounts] = field(default_factory=dict)  # --runner-counts: the scale-up's own counts


@dataclass
class Outcome:
    label: str
    replay: Replay
    timeline: Timeline | None
    source: str = CLOUDWATCH
    notes: list[str] = field(default_factory=list)  # where the history was coarser or partial, in words


def backtest(
    config: Config,
    clients: AwsClients,
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    label: str = "config",
    plot: bool = False,
    keep_pages: bool = False,
    progress: Callable[[ChunkRead], None] = lambda _: None,
    jobs_table: str | None = None,
    extent: Extent | None = None,
) -> Outcome:
    """Replay the config over [start, end], one tick a minute: the tracked jobs' history when `jobs_table`
    is given, else the CloudWatch history of the autoscaler's queues."""
    notes: list[str] = []
    extent = extent if extent is not None else Extent()
    ticks = history_source(
        config, clients, start, end, now=now, progress=progress, jobs_table=jobs_table, notes=notes, extent=extent
    )
    replay = Replay(config, keep_pages)
    # The jobs' history is read by now: where it begins (extent.held_from) is known before the first tick.
    tracked = jobs_table is not None
    timeline = Timeline(config, start, end, label, tracked=tracked, held_from=extent.held_from) if plot else None
    if timeline is not None:
        replay.on_tick = timeline.record
    for snapshot in ticks():
        replay.tick(snapshot, snapshot.collected_at)
    if timeline is not None:
        timeline.close_spans(replay.episodes)
    return Outcome(label, replay, timeline, JOBS if jobs_table is not None else CLOUDWATCH, notes)


def history_source(
    config: Config,
    clients: AwsClients,
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    progress: Callable[[ChunkRead], None] = lambda _: None,
    jobs_table: str | None = None,
    notes: list[str],
    extent: Extent | None = None,
    pools: PoolSource | None = None,
) -> Callable[[], Iterator[Snapshot]]:
    """The history's observations, one a minute from start to end, each call from the first (backtest replays
    them once, --suggest once per pass): the tracked jobs are read here, once, and rebuilt at each call;
    CloudWatch is read at each call. With `pools` (--forecast, the tracked jobs only), each forecast runner
    type's inputs ride on its observation, as the live collector's do."""
    if end <= start:
        raise QueuewatchError(f"--to {moment(end)} is not after --from {moment(start)}")
    if end > now:
        raise QueuewatchError(f"--to {moment(end)} is in the future (now {moment(now)})")
    with ThreadPoolExecutor(max_workers=8) as pool:
        # The account: the config's, else the one discovery's listing shows (resolve_queues), else none needed.
        targets, discovery = resolve_queues(config, clients, config.defaults.account_id or PLACEHOLDER_ACCOUNT, pool)
    for failed in (d for d in discovery if d.error):
        # Replayed, it would page the monitor for the whole range: a failure of today's listing, not of the history.
        raise QueuewatchError(f"discovery of {failed.pattern} in {failed.region}: listing the queues: {failed.error}")
    if jobs_table is not None:
        extent = extent if extent is not None else Extent()
        return _job_ticks(config, clients, jobs_table, targets, discovery, start, end, notes, extent, pools)
    if pools is not None:
        raise QueuewatchError("--forecast replays the tracked jobs: --stack NAME or --jobs-table TABLE")
    return lambda: _cloudwatch_ticks(config, clients, targets, discovery, start, end, now, progress, notes)


def _cloudwatch_ticks(
    config: Config,
    clients: AwsClients,
    targets: list[WatchedQueue],
    discovery: list[DiscoveryResult],
    start: datetime,
    end: datetime,
    now: datetime,
    progress: Callable[[ChunkRead], None],
    notes: list[str],
) -> Iterator[Snapshot]:
    observations = Observations(config, plan_history(config, targets, discovery, TICK), clients.cloudwatch, progress)
    yield from observations.ticks(start, end, now)
    first, last = int(start.timestamp()), int(end.timestamp())
    for began, ended, period in coarser_parts(observations.parts, first, last):
        notes.append(
            f"{moment(began)} to {moment(ended)} replayed from {period // 60}-minute maxima "
            f"(CloudWatch keeps 1-minute datapoints for 15 days, 5-minute for 63): each applied when its period "
            f"ends, so a page there may come up to {(period - TICK) // 60} minutes later than the live one, and a "
            f"spike shorter than a rule's `for` may page"
        )


def _job_ticks(
    config: Config,
    clients: AwsClients,
    table: str,
    targets: list[WatchedQueue],
    discovery: list[DiscoveryResult],
    start: datetime,
    end: datetime,
    notes: list[str],
    extent: Extent,
    pools: PoolSource | None = None,
) -> Callable[[], Iterator[Snapshot]]:
    # A job queued up to GitHub's limit before the first tick may still wait at it. Every runner type's jobs:
    # those this config does not watch are counted, a sign that it names runner types otherwise than the stack.
    # With SLOs, back as far as their longest burn window too, so their first ticks see what the live ones saw.
    back = max([QUEUED_LIMIT, *(timedelta(seconds=slo.longest_burn_window) for slo in config.resolved_slos)])
    try:
        history = read_history(clients.dynamodb(), table, start - back, end)
        # The SLO replay and --suggest's objective need the records themselves; without SLOs the spans alone,
        # three compact arrays, are held (a fortnight at 50,000 jobs a day held as records takes over 1 GB).
        records = list(history) if config.slos else None
        spans = job_spans(history if records is None else records, targets, times=pools is not None)
    except UNANSWERED:
        raise  # the endpoint did not answer: the command's failure says so (failures.py), not a bad request
    except (ClientError, BotoCoreError) as error:  # a history with holes would replay as idle queues: stop
        raise QueuewatchError(f"--jobs-table {table}: reading the jobs' history: {describe(error)}") from error
    if spans.unmatched or not len(spans):
        notes.append(
            f"{spans.unmatched:,} of {spans.jobs:,} jobs read are for runner types this config does not watch"
            + ("; it watches none of the jobs: its quiet is no evidence" if not len(spans) and spans.jobs else "")
        )
    if spans.hosted:
        notes.append(f"{spans.hosted:,} job(s) for GitHub-hosted runners (ubuntu-latest, ...) are no runner type's")
    extent.jobs = records
    held = held_start(start.timestamp(), spans.first_queued)
    if held > start.timestamp():
        extent.held_from = datetime.fromtimestamp(held, UTC)
        notes.append(
            f"the jobs table holds this config's jobs from {moment(extent.held_from)} on: before it "
            f"(JobHistoryDays, 14 by default, or tracking off) the replay's quiet is no evidence"
        )
    # Before the history's first job no job waits: the ticks there would be idle ones, so they are not replayed.
    first_tick = extent.held_from or start
    names = [target.runner_type for target in targets]
    chosen = forecast_runner_types(config, names) if pools is not None else []
    maximum = maximum_of(config, pools.maximum if pools else None)
    extent.unforecast = (
        [names[i] for i in chosen if maximum(names[i]) is None and names[i] not in pools.counts] if pools else []
    )

    def observations() -> JobObservations:
        triage = config.defaults.triage  # the collector reads the triage's window and baseline
        feed = (
            ForecastFeed(
                spans,
                names,
                chosen,
                maximum,
                pools.counts,
                window=triage.window,
                history=triage.window + triage.baseline,
            )
            if pools is not None
            else None
        )
        return JobObservations(config, targets, discovery, spans, feed)

    if records is None:
        return lambda: observations().ticks(first_tick, end)
    return lambda: _with_slos(config, records, observations().ticks(first_tick, end))


def _with_slos(config: Config, records: list[JobRecord], ticks: Iterator[Snapshot]) -> Iterator[Snapshot]:
    """Each tick with its SLO readings, as the live collector reads them: the SLO alerts replay with the rules."""
    counters = SloCounters(config, records)
    for snapshot in ticks:
        yield snapshot.model_copy(update={"slos": counters.readings_at(snapshot.collected_at)})


def _progress(label: str) -> Callable[[ChunkRead], None]:
    def show(read: ChunkRead) -> None:
        print(
            f"backtest {label}: read {read.number}/{read.of} "
            f"({moment(read.start)} to {moment(read.end)}): "
            f"{read.calls} GetMetricData call(s), {read.datapoints:,} datapoints",
            file=sys.stderr,
            flush=True,
        )

    return show


def run_backtest(
    args: argparse.Namespace,
    clients: AwsClients | None = None,
    now: datetime | None = None,
    out: Callable[[str], None] = print,
) -> int:
    """The command: the report on stdout (`out`), progress and errors on stderr; 2 for bad input."""
    now = now or datetime.now(UTC)
    # A stack's jobs table is read in the stack's region (--stack NAME@REGION), not the profile's default.
    clients = clients or AwsClients(boto3.Session(region_name=getattr(args, "stack_region", None)))
    try:
        configs = [(args.config, load_config(args.config))]
        if args.compare:
            configs.append((args.compare, load_config(args.compare)))
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    source = getattr(args, "source", None) or (JOBS if getattr(args, "jobs_table", None) else CLOUDWATCH)
    jobs_table = getattr(args, "jobs_table", None) if source == JOBS else None
    if source == JOBS and not jobs_table:
        print(
            "backtest: --source jobs needs the tracked jobs: --stack NAME of a stack with job tracking on (it finds "
            "the JobsTableName output), or --jobs-table TABLE",
            file=sys.stderr,
        )
        return 2
    judged = {config.defaults.queue_source for _, config in configs}
    if not args.quiet and source == CLOUDWATCH and JOBS_SOURCE in judged:
        print(
            "backtest: where job tracking is on, the live rules judge the tracked jobs (queue_source: jobs); "
            "this replay judges the autoscaler's queue, whose history CloudWatch keeps; --jobs-table TABLE "
            "replays the jobs",
            file=sys.stderr,
        )
    if not args.quiet and source == JOBS and judged != {JOBS_SOURCE}:
        print(
            "backtest: a config here judges the autoscaler's queue live (queue_source: sqs); "
            "this replay judges the tracked jobs",
            file=sys.stderr,
        )
    if args.plot and (problem := plot_problem(args.plot)):
        print(f"backtest: --plot {args.plot}: {problem}", file=sys.stderr)  # before hours of reading, not after
        return 2
    try:
        start = parse_moment(args.start, now, "--from")
        end = parse_moment(args.end, now, "--to")
        if args.region:
            configs = [(path, _in_region(config, args.region)) for path, config in configs]
        pools = _pools(args)
        if getattr(args, "suggest", False):
            return _suggest(args, configs[0][1], clients, start, end, now, jobs_table, pools, out)
        if pools is not None:
            return _run_forecast(args, configs, clients, start, end, now, jobs_table, pools, out)
        if getattr(args, "budget", None) or getattr(args, "incidents", None):
            raise QueuewatchError("--budget and --incidents go with --suggest")
        outcomes = [
            backtest(
                config,
                clients,
                start,
                end,
                now=now,
                label=path,
                plot=bool(args.plot),
                progress=_progress(path) if not args.quiet else lambda _: None,
                jobs_table=jobs_table,
            )
            for path, config in configs
        ]
    except QueuewatchError as error:
        print(f"backtest: {error}", file=sys.stderr)
        return 2
    out(f"replayed: {_described(source, jobs_table)}")
    for outcome in outcomes:
        for note in outcome.notes:  # each config's own: B may watch none of the jobs A does
            out(f"note: {outcome.label}: {note}" if len(outcomes) == 2 else f"note: {note}")
    for outcome in outcomes:
        out("\n".join(report(outcome.label, outcome.replay.episodes, start, end)))
    if len(outcomes) == 2:
        a, b = outcomes
        out("\n".join(comparison_lines(compare(a.replay.episodes, b.replay.episodes, end), a.label, b.label)))
    for outcome in outcomes:
        if outcome.timeline is not None:
            outcome.timeline.notes = list(outcome.notes)
    if args.plot and outcomes[0].timeline is not None:
        outcomes[0].timeline.draw(args.plot, outcomes[1].timeline if len(outcomes) == 2 else None)
        out(f"timeline written to {args.plot}")
    return 0


def _suggest(
    args: argparse.Namespace,
    config: Config,
    clients: AwsClients,
    start: datetime,
    end: datetime,
    now: datetime,
    jobs_table: str | None,
    pools: PoolSource | None,
    out: Callable[[str], None],
) -> int:
    """--suggest: thresholds for a page budget; with --forecast, the horizon."""
    from queuewatch_cli.commands.backtest.suggest import HeldTicks, run_suggest

    notes: list[str] = []
    extent = Extent()
    if pools is not None:
        from queuewatch_cli.commands.backtest.suggest_horizon import HORIZON_LADDER, run_horizon_suggest

        if args.compare:
            raise QueuewatchError("--suggest replays one config: drop --compare")
        # Every rule with a queue_time threshold is tried with a forecast: its runner types need the inputs.
        config = with_horizon(config, HORIZON_LADDER[-1])
        forecast = history_source(
            config, clients, start, end, now=now, jobs_table=jobs_table, notes=notes, extent=extent, pools=pools
        )
        for note in notes:
            out(f"note: {note}")
        return run_horizon_suggest(args, config, forecast, start, end, out, held_from=extent.held_from)
    source = history_source(config, clients, start, end, now=now, jobs_table=jobs_table, notes=notes, extent=extent)
    minutes = int((end - start).total_seconds() // 60) + 1
    # CloudWatch is read at each call: read once and held, while small. The jobs are held already.
    ticks = source if jobs_table is not None else HeldTicks(source, minutes)
    for note in notes:
        out(f"note: {note}")
    return run_suggest(args, config, ticks, start, end, out, held_from=extent.held_from, jobs=extent.jobs)


def _pools(args: argparse.Namespace) -> PoolSource | None:
    """--forecast's pool options; None without --forecast (and then neither --max nor --runner-counts)."""
    maximum, counts = getattr(args, "max", None), getattr(args, "runner_counts", None)
    if not getattr(args, "forecast", None):
        if maximum is not None or counts:
            raise QueuewatchError("--max and --runner-counts go with --forecast")
        return None
    if maximum is not None and maximum < 1:
        raise QueuewatchError(f"--max: found {maximum}, expected the autoscaler's maximum runners, 1 or more")
    return PoolSource(maximum, read_runner_counts(counts) if counts else {})


def forecast_config(config: Config, given: str) -> Config:
    """--forecast: the config's own horizons (`config`), or HORIZON tried on every rule with a queue_time."""
    if given == FORECAST_AS_CONFIGURED:
        return config
    try:
        horizon = parse_duration(given)
        return with_horizon(config, horizon)
    except ValueError as error:
        raise QueuewatchError(
            f"--forecast: found {given!r}, expected a horizon from 1m to 1h such as 10m ({error})"
        ) from None


def _run_forecast(
    args: argparse.Namespace,
    configs: list[tuple[str, Config]],
    clients: AwsClients,
    start: datetime,
    end: datetime,
    now: datetime,
    jobs_table: str | None,
    pools: PoolSource,
    out: Callable[[str], None],
) -> int:
    if len(configs) > 1:
        raise QueuewatchError("--forecast replays one config beside itself without the forecast: drop --compare")
    if jobs_table is None:
        raise QueuewatchError("--forecast replays the tracked jobs: --stack NAME or --jobs-table TABLE")
    path, config = configs[0]
    config = forecast_config(config, args.forecast)
    replays = ForecastReplays.of(config)
    notes: list[str] = []
    extent = Extent()
    ticks = history_source(
        config, clients, start, end, now=now, jobs_table=jobs_table, notes=notes, extent=extent, pools=pools
    )
    replays.run(ticks())
    out(f"replayed: {_described(JOBS, jobs_table)}")
    for note in notes:
        out(f"note: {note}")
    out("\n".join(report(path, replays.forecast.episodes, start, end)))
    out("\n".join(forecast_lines(replays.scores(end), start, end, extent.unforecast)))
    return 0


def _described(source: str, jobs_table: str | None) -> str:
    if source == JOBS:
        return (
            f"the tracked jobs in {jobs_table}: each tick's queue size and oldest wait rebuilt from when each job "
            "was queued and started"
        )
    return "CloudWatch: the autoscaler's queues (AWS/SQS) and the config's metrics"


def _in_region(config: Config, region: str) -> Config:
    """--region: the default region of runner types and discovery that name none."""
    return config.model_copy(update={"defaults": config.defaults.model_copy(update={"region": region})})
