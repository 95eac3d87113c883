"""One backtest: read a config's history and replay it; the command line's options and output."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from queuewatch.adapters.clients import AwsClients
from queuewatch.collect.queues import resolve_queues
from queuewatch.config import Config
from queuewatch.config.load import ConfigError, load_config
from queuewatch.durations import parse_duration
from queuewatch.errors import QueuewatchError
from queuewatch.signals import JOBS_SOURCE
from queuewatch.snapshot import Snapshot
from queuewatch_cli.backtest.history import ChunkRead, Observations, plan_history, resolution
from queuewatch_cli.backtest.plot import Timeline
from queuewatch_cli.backtest.replay import Replay
from queuewatch_cli.backtest.report import compare, comparison_lines, report

PLACEHOLDER_ACCOUNT = "000000000000"  # queue URLs are not used: history is read by queue name


@dataclass
class Outcome:
    label: str
    replay: Replay
    timeline: Timeline | None


def parse_moment(text: str, now: datetime, option: str) -> datetime:
    """An ISO 8601 time (UTC unless it says), 'now', or a duration meaning that long ago (14d, 36h)."""
    if text == "now":
        moment = now
    else:
        try:
            moment = now - timedelta(seconds=parse_duration(text))
        except ValueError:
            try:
                moment = datetime.fromisoformat(text)
            except ValueError:
                raise QueuewatchError(
                    f"{option}: found {text!r}, expected an ISO time such as 2026-05-01T09:00, 'now', or 14d (ago)"
                ) from None
            moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


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
) -> Outcome:
    """Replay the config over [start, end], one tick a minute, reading its history from CloudWatch."""
    ticks = history_ticks(config, clients, start, end, now=now, progress=progress)
    replay = Replay(config, keep_pages)
    timeline = Timeline(config, start, end) if plot else None
    if timeline is not None:
        replay.on_tick = timeline.record
    for snapshot in ticks:
        replay.tick(snapshot, snapshot.collected_at)
    if timeline is not None:
        timeline.close_spans(replay.episodes)
    return Outcome(label, replay, timeline)


def history_ticks(
    config: Config,
    clients: AwsClients,
    start: datetime,
    end: datetime,
    *,
    now: datetime,
    progress: Callable[[ChunkRead], None] = lambda _: None,
) -> Iterator[Snapshot]:
    """The history's observations, one a minute from start to end (backtest and --suggest replay them)."""
    if end <= start:
        raise QueuewatchError(f"--to {end:%Y-%m-%d %H:%M} is not after --from {start:%Y-%m-%d %H:%M}")
    if end > now:
        raise QueuewatchError(f"--to {end:%Y-%m-%d %H:%M} UTC is in the future (now {now:%Y-%m-%d %H:%M} UTC)")
    period = resolution(start, now)
    with ThreadPoolExecutor(max_workers=8) as pool:
        targets, discovery = resolve_queues(config, clients, config.defaults.account_id or PLACEHOLDER_ACCOUNT, pool)
    for failed in (d for d in discovery if d.error):
        # Replayed, it would page the monitor for the whole range: a failure of today's listing, not of the history.
        raise QueuewatchError(f"discovery of {failed.pattern} in {failed.region}: listing the queues: {failed.error}")
    history = plan_history(config, targets, discovery, period)
    return Observations(config, history, clients.cloudwatch, progress).ticks(start, end)


def _progress(label: str) -> Callable[[ChunkRead], None]:
    def show(read: ChunkRead) -> None:
        print(
            f"backtest {label}: read {read.number}/{read.of} "
            f"({read.start:%Y-%m-%d %H:%M} to {read.end:%Y-%m-%d %H:%M} UTC): "
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
    clients = clients or AwsClients()
    try:
        configs = [(args.config, load_config(args.config))]
        if args.compare:
            configs.append((args.compare, load_config(args.compare)))
    except ConfigError as error:
        print(error, file=sys.stderr)
        return 2
    if any(config.defaults.queue_source == JOBS_SOURCE for _, config in configs) and not args.quiet:
        print(
            "backtest: where job tracking is on, the live rules judge the tracked jobs (queue_source: jobs); "
            "this replay judges the autoscaler's queue, whose history CloudWatch keeps (the jobs table keeps a day)",
            file=sys.stderr,
        )
    if args.plot and (problem := _plot_problem(args.plot)):
        print(f"backtest: --plot {args.plot}: {problem}", file=sys.stderr)  # before hours of reading, not after
        return 2
    try:
        start = parse_moment(args.start, now, "--from")
        end = parse_moment(args.end, now, "--to")
        if args.region:
            configs = [(path, _in_region(config, args.region)) for path, config in configs]
        if getattr(args, "suggest", False):
            from queuewatch_cli.backtest.suggest import HeldTicks, run_suggest

            config = configs[0][1]
            minutes = int((end - start).total_seconds() // 60) + 1
            ticks = HeldTicks(lambda: history_ticks(config, clients, start, end, now=now), minutes)
            return run_suggest(args, config, ticks, start, end, out)
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
                plot=bool(args.plot) and i == 0,
                progress=_progress(path) if not args.quiet else lambda _: None,
            )
            for i, (path, config) in enumerate(configs)
        ]
    except QueuewatchError as error:
        print(f"backtest: {error}", file=sys.stderr)
        return 2
    for outcome in outcomes:
        out("\n".join(report(outcome.label, outcome.replay.episodes, start, end)))
    if len(outcomes) == 2:
        a, b = outcomes
        out("\n".join(comparison_lines(compare(a.replay.episodes, b.replay.episodes, end), a.label, b.label)))
    if args.plot and outcomes[0].timeline is not None:
        outcomes[0].timeline.draw(args.plot)
        out(f"timeline written to {args.plot}")
    return 0


def _plot_problem(path: str) -> str | None:
    if importlib.util.find_spec("matplotlib") is None:
        return "needs matplotlib: pip install 'queuewatch[plot]'"
    if not Path(path).parent.is_dir():
        return f"the folder {Path(path).parent} does not exist"
    return None


def _in_region(config: Config, region: str) -> Config:
    """--region: the default region of runner types and discovery that name none."""
    return config.model_copy(update={"defaults": config.defaults.model_copy(update={"region": region})})
