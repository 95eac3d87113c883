"""`queuewatch capacity`: read the jobs' history from the jobs table, analyse it, print the answer."""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime

from queuewatch.base.durations import format_duration, parse_duration
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.wording import moment
from queuewatch.model.forecast.launch import (
    APP_SUSTAINED_PER_MINUTE,
    SSM_WRITES_PER_SECOND,
    LaunchCeilings,
    LaunchLimit,
    launch_limit,
)
from queuewatch.model.forecast.model import Target
from queuewatch.model.jobs import JobRecord, github_hosted
from queuewatch.model.runner_names import RunnerTypeNames, matches_without_case
from queuewatch_cli.commands.capacity.analysis import analyse
from queuewatch_cli.commands.capacity.history import JobTimes, by_runner_type
from queuewatch_cli.commands.capacity.output import document, draw, draw_pool, table
from queuewatch_cli.common.times import held_start, parse_moment

TARGET = re.compile(r"^p(\d{1,3}(?:\.\d{1,3})?)\s*(<=|<)\s*(\S+)$")


def parse_target(text: str) -> Target:
    """`p90<5m`: the 90th percentile of queue time under 5 minutes (`<=` allows it to equal)."""
    found = TARGET.match(text.strip())
    problem = f"--target: found {text!r}, expected a queue time percentile and its limit, such as p90<5m or p99<=30m"
    if found is None:
        raise QueuewatchError(problem)
    share = float(found.group(1))
    try:
        seconds = parse_duration(found.group(3))
    except ValueError as error:
        raise QueuewatchError(f"{problem}: {error}") from None
    if not 0 < share < 100:
        raise QueuewatchError(f"{problem}: the percentile must be above 0 and under 100")
    return Target(share, float(seconds), strict=found.group(2) == "<")


def add_arguments(capacity: argparse.ArgumentParser) -> None:
    capacity.add_argument("--table", help="the stack's jobs table (default: the JobsTableName output of --stack)")
    capacity.add_argument(
        "--stack", action="append", metavar="NAME[@REGION]", help="the stack whose jobs to read (one)"
    )
    capacity.add_argument("--region", default=None)
    capacity.add_argument("--from", dest="start", default="14d", help="ISO time (UTC), or a duration ago (default 14d)")
    capacity.add_argument("--to", dest="end", default="now", help="ISO time (UTC), 'now' (default), or a duration ago")
    capacity.add_argument("--target", default="p90<5m", help="a queue time percentile to meet (default p90<5m)")
    capacity.add_argument(
        "--startup",
        default=None,
        help="a runner's start-up delay, such as 90s (default: read from the history's queue times below the ceiling)",
    )
    capacity.add_argument(
        "--runner-type", action="append", default=[], metavar="NAME", help="only these (names or globs); repeatable"
    )
    capacity.add_argument(
        "--max",
        type=int,
        default=None,
        metavar="N",
        help="the autoscaler's runners_maximum_count: replay the history with at most N runners and say what binds",
    )
    capacity.add_argument(
        "--config",
        metavar="FILE",
        help="the stack's config: each runner type's runners_maximum_count is replayed as its maximum "
        "(--max overrides)",
    )
    capacity.add_argument(
        "--launch-rate",
        type=float,
        default=APP_SUSTAINED_PER_MINUTE,
        metavar="PER_MINUTE",
        help=f"runners one GitHub App can launch a minute, sustained (default {APP_SUSTAINED_PER_MINUTE:g}; 180 in "
        "a burst)",
    )
    capacity.add_argument(
        "--github-apps",
        type=int,
        default=1,
        metavar="N",
        help="the GitHub Apps the autoscaler launches runners through (1, plus upstream's additional_github_apps)",
    )
    capacity.add_argument(
        "--ssm-rate",
        type=int,
        default=SSM_WRITES_PER_SECOND,
        metavar="PER_SECOND",
        help=f"SSM Parameter Store writes a second in the account and region, one per runner launched (default "
        f"{SSM_WRITES_PER_SECOND}; more with its higher throughput setting)",
    )
    capacity.add_argument(
        "--pool",
        action="store_true",
        help="propose the autoscaler's pool_config per runner type: the hours a warm pool pays off, and its size",
    )
    capacity.add_argument(
        "--pool-size",
        type=int,
        default=None,
        metavar="N",
        help="replay the history with a pool of N in the hours --pool proposes (every hour if none), with --max",
    )
    capacity.add_argument("--json", action="store_true", help="print a JSON document instead of the table")
    capacity.add_argument(
        "--plot", metavar="FILE.png", help="queue time against N for the --runner-type named (needs the 'plot' extra)"
    )


@dataclasses.dataclass
class Skipped:
    """Jobs read and left out of every pool, counted for the output's notes."""

    hosted: int = 0  # for GitHub's own hosted runners, as the collector tells them apart (track/routing.py)


def job_times(records: Iterable[JobRecord], skipped: Skipped | None = None) -> Iterator[JobTimes]:
    """The seam with the jobs table: its records as the times the model needs. A job's queue starts when it was
    queued for a runner (after any approval); jobs no runner type serves are no pool's, and neither are those for
    GitHub's hosted runners (a discovery pattern may store `ubuntu-latest` as a candidate name)."""
    skipped = skipped if skipped is not None else Skipped()
    for record in records:
        if record.runner_type is None:
            continue
        if github_hosted(record.labels):
            skipped.hosted += 1
            continue
        yield JobTimes(
            record.runner_type,
            record.queued_since.timestamp(),
            None if record.started_at is None else record.started_at.timestamp(),
            None if record.completed_at is None else record.completed_at.timestamp(),
        )


def run_capacity(
    args: argparse.Namespace,
    read: Callable[[datetime, datetime], Iterable[JobTimes]] | None = None,
    now: datetime | None = None,
    out: Callable[[str], None] = print,
) -> int:
    """The command: the answer on stdout (`out`), errors on stderr; 2 for bad input. `read` stands in for the
    jobs table (the demo, tests and the bench give one)."""
    now = now or datetime.now(UTC)
    try:
        target = parse_target(args.target)
        startup = None if args.startup is None else float(_duration("--startup", args.startup))
        start = parse_moment(args.start, now, "--from")
        end = parse_moment(args.end, now, "--to")
        if end <= start:
            raise QueuewatchError(f"--to {moment(end)} is not after --from {moment(start)}")
        if end > now:
            raise QueuewatchError(f"--to {moment(end)} is in the future (now {moment(now)})")
        if args.max is not None and args.max < 1:
            raise QueuewatchError(f"--max: found {args.max}, expected 1 or more runners")
        if not args.launch_rate > 0:
            raise QueuewatchError(f"--launch-rate: found {args.launch_rate:g}, expected runners a minute above 0")
        if args.github_apps < 1:
            raise QueuewatchError(f"--github-apps: found {args.github_apps}, expected 1 or more")
        if args.ssm_rate < 1:
            raise QueuewatchError(f"--ssm-rate: found {args.ssm_rate}, expected writes a second, 1 or more")
        if args.pool_size is not None and args.pool_size < 0:
            raise QueuewatchError(f"--pool-size: found {args.pool_size}, expected 0 or more runners")
        if args.plot:
            _check_plot(args)
        maxima = configured_maxima(args.config, args.max)
        reader = read or TableReader(args)
        # The one resolver the collector uses: `--runner-type Linux-X64` is the jobs stored as `linux-x64`.
        names = RunnerTypeNames(name for name in args.runner_type if not any(c in name for c in "*?["))
        jobs = by_runner_type(
            (_as_named(j, names) for j in reader(start, end) if _wanted(j.runner_type, args.runner_type)),
            start.timestamp(),
            end.timestamp(),
        )
    except QueuewatchError as error:
        print(f"capacity: {error}", file=sys.stderr)
        return 2
    if not jobs:
        print(f"capacity: no job queued from {moment(start)} to {moment(end)}", file=sys.stderr)
        return 1
    notes = []
    held_from = held_start(start.timestamp(), min(of.queued[0] for of in jobs.values()))
    if held_from > start.timestamp():
        notes.append(
            f"the history holds jobs from {moment(datetime.fromtimestamp(held_from, UTC))}, not from --from "
            f"{moment(start)}: the range is taken from there (before "
            f"it, the jobs table keeps none: JobHistoryDays, 14 by default, or tracking was off)"
        )
    hosted = reader.skipped.hosted if isinstance(reader, TableReader) else 0
    if hosted:
        notes.append(f"{hosted:,} job(s) for GitHub-hosted runners (ubuntu-latest, ...) left out: no pool of yours")
    ceilings = LaunchCeilings(args.launch_rate, ssm_per_second=args.ssm_rate, apps=args.github_apps)
    launches = launch_limit(heapq.merge(*(_asks(name, of.queued) for name, of in jobs.items())), ceilings)
    plotted = sorted(jobs) if args.plot else []
    answers = analyse(
        jobs,
        held_from,
        end.timestamp(),
        target,
        startup,
        plotted,
        maxima,
        args.pool,
        args.pool_size,
        launches.waits,
        None if launches.binds is None else ceilings.describe(launches.binds),
    )
    launch = launch_note(launches, bool(args.runner_type))
    if args.json:
        whole = document(answers, held_from, end.timestamp(), target, notes)
        whole["launch_rate"] = {
            "apps": ceilings.apps,
            "per_minute": ceilings.per_minute,
            "burst_per_minute": ceilings.burst,
            "ssm_per_second": ceilings.ssm_per_second,
            "peak_minute": launches.peak_minute,
            "binds": launches.binds,
            "held_back": launches.delayed,
            "longest_wait": launches.longest,
            "said": launch,
        }
        out(json.dumps(whole, indent=2))
    else:
        out("\n".join([*table(answers, held_from, end.timestamp(), target, notes), f"  {launch}"]))
    if args.plot and args.pool:
        draw_pool(answers, target, args.plot)
        if not args.json:
            out(f"each pool schedule's cost against its queue time written to {args.plot}")
    elif args.plot:
        draw(answers, target, args.plot)
        if not args.json:
            out(f"queue time against N written to {args.plot}")
    return 0


def configured_maxima(path: str | None, given: int | None) -> int | Callable[[str], int | None] | None:
    """--max for every runner type; else, with --config, each runner type's runners_maximum_count (its name
    resolved as the collector resolves it); else none."""
    if given is not None or path is None:
        return given
    from queuewatch.config.load import ConfigError, load_config

    try:
        config = load_config(path)
    except ConfigError as error:
        raise QueuewatchError(str(error)) from None
    maxima = {spec.name: spec.runners_maximum_count for spec in config.runner_types}
    names = RunnerTypeNames(maxima)
    return lambda name: maxima.get(names.resolve(name) or "")


def launch_note(launches: LaunchLimit, some: bool) -> str:
    """Which launch ceiling binds, if one does: every job asks for a fresh runner, through the Apps and SSM."""
    whose = "the runner types read" if some else "the fleet"
    ceilings = launches.ceilings
    binding = launches.binds
    if binding is None:
        return (
            f"launch rate: {whose} asked for at most {launches.peak_minute:,} runner(s) in a minute; no launch "
            f"ceiling held one back ({ceilings.describe('GitHub App sustained')}, {ceilings.burst} in a burst; "
            f"SSM Parameter Store's {ceilings.ssm_per_second} writes a second): none binds"
        )
    others = [
        f"{ceilings.describe(name)} {launches.delayed[name]:,}"
        for name in sorted(launches.delayed, key=lambda n: -launches.delayed[n])
        if name != binding
    ]
    return (
        f"launch rate binds: {ceilings.describe(binding)} held back {launches.delayed[binding]:,} runner ask(s) "
        f"of {whose}, up to {format_duration(launches.longest[binding])} (at most {launches.peak_minute:,} asked in "
        f"a minute)" + (f"; also held back by {', '.join(others)}" if others else "") + "; each job's wait for its "
        "launch is in its queue time in the model"
    )


def _duration(option: str, text: str) -> int:
    try:
        return parse_duration(text)
    except ValueError as error:
        raise QueuewatchError(f"{option}: {error}") from None


def _asks(name: str, queued: Iterable[float]) -> Iterator[tuple[float, str]]:
    """A runner type's jobs as runners asked for, ascending (heapq.merge joins the runner types')."""
    for at in queued:
        yield at, name


def _wanted(name: str, patterns: list[str]) -> bool:
    return not patterns or any(matches_without_case(name, pattern) for pattern in patterns)


def _as_named(job: JobTimes, names: RunnerTypeNames) -> JobTimes:
    resolved = names.resolve(job.runner_type)
    return job if resolved is None or resolved == job.runner_type else dataclasses.replace(job, runner_type=resolved)


def _check_plot(args: argparse.Namespace) -> None:
    from queuewatch_cli.common.plotting import plot_problem

    if not args.runner_type:
        raise QueuewatchError("--plot draws the runner types named: give one or more --runner-type")
    if problem := plot_problem(args.plot):
        raise QueuewatchError(f"--plot {args.plot}: {problem}")


class TableReader:
    """The stack's jobs table, read for [start, end); counts what it leaves out."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.skipped = Skipped()

    def __call__(self, start: datetime, end: datetime) -> Iterator[JobTimes]:
        from queuewatch.adapters.aws.clients import AwsClients
        from queuewatch.adapters.jobs_table.jobs import read_history

        args = self.args
        exact = [name for name in args.runner_type if not any(c in name for c in "*?[")]
        named = exact if exact and len(exact) == len(args.runner_type) else None  # globs: read all, then filter
        return job_times(read_history(AwsClients().dynamodb(args.region), args.table, start, end, named), self.skipped)
