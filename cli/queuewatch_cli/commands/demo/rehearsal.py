"""`queuewatch demo --config FILE`: a rehearsal of your own config on an in-process moto, before the deploy.

It seeds an incident on the runner types your config names: for each rule, the first named runner type it
selects queues past every threshold of every rule that selects it (so an escalation escalates), then drains.
A rule that selects no named runner type is rehearsed on a name its glob selects, under the queue a discovery
entry would find for it (rehearsal_seeds.py). Where the config has job-retry or dead-letter rules, the queues
upstream puts beside a seeded build queue get a stuck check and dead-lettered requests past their thresholds.
Each minute the real evaluate stage judges that minute's figures with your rules, escalation, silences of
none, windows and routes, and each page is printed with the receivers your routes send it to. Then `backtest`
replays the same minutes from CloudWatch's history (where the rehearsal wrote them, as AWS/SQS would) and
the two lists of pages are compared: the rehearsal pages exactly as the backtest replays it, or says where not.

What cannot be seeded is said: a rule whose globs name nothing a discovery entry selects, a path with no
queue beside a seeded one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import boto3

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.jobs_table.jobs import put_job
from queuewatch.adapters.state_table.sent_log import SENT, read_entries
from queuewatch.base.wording import moment
from queuewatch.collect.paths import path_queues
from queuewatch.collect.queues import WatchedQueue, resolve_queues
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.evaluate.slo import is_slo_rule
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.rules import alert_kind
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import DiscoveryResult, Reading, RunnerTypeSnapshot, Snapshot
from queuewatch_cli.commands.backtest.run import Outcome, backtest
from queuewatch_cli.commands.backtest.slo_replay import SloCounters
from queuewatch_cli.commands.demo.rehearsal_seeds import Seeded, path_plan, path_queues_to_create, seed_plan
from queuewatch_cli.commands.demo.rehearsal_slo import LATE_MINUTES, QUIET_MINUTES, slo_plan
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_state_table

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

TABLE = "queuewatch-rehearsal-state"
SLO_STATE_TABLE = "queuewatch-rehearsal-slo-state"
JOBS_TABLE = "queuewatch-rehearsal-jobs"
ACCOUNT = "123456789012"  # moto's


def unrehearsed(config: Config, start: datetime, end: datetime) -> list[str]:
    """What the seeded queues cannot say by themselves: each maintenance window, open or not over the
    rehearsal's minutes."""
    notes: list[str] = []
    for window in config.maintenance_windows:
        minutes = [start + timedelta(minutes=m) for m in range(int((end - start).total_seconds() // 60) + 1)]
        held = any(window.open_at(at) for at in minutes)
        notes.append(f"maintenance window {window.name}: {'open' if held else 'closed'} over the rehearsal's minutes")
    return notes


def figures(seeded: list[Seeded], minute: int) -> dict[str, tuple[float, float]]:
    """(messages, age of the oldest in seconds) of each seeded queue at that minute; the incident starts at
    minute 0 with a message just sent and ends, drained, once its oldest has waited its peak."""
    return {s.queue: (s.size, minute * 60.0) for s in seeded if 0 <= minute * 60 <= s.peak_seconds}


def span_minutes(config: Config, seeded: list[Seeded]) -> int:
    """The incident, then long enough for every alert's keep_firing_for to pass and its resolve to go."""
    keep = max((r.keep_firing_for for r in (*config.resolved_rules, *config.path_rules)), default=0)
    return max((s.peak_seconds for s in seeded), default=0) // 60 + keep // 60 + 3


def write_history(cloudwatch: CloudWatchClient, seeded: list[Seeded], start: datetime, minutes: int) -> None:
    """The figures as AWS/SQS publishes them for an active queue, one datapoint a minute, for the backtest."""
    data: list[Any] = []
    for entry in seeded:
        dimensions = [{"Name": "QueueName", "Value": entry.queue}]
        for minute in range(minutes):
            size, age = figures([entry], minute).get(entry.queue, (0.0, 0.0))
            stamp = start + timedelta(minutes=minute)
            data.append({"MetricName": "ApproximateNumberOfMessagesVisible", "Dimensions": dimensions,
                         "Timestamp": stamp, "Value": size})  # fmt: skip
            data.append({"MetricName": "ApproximateAgeOfOldestMessage", "Dimensions": dimensions,
                         "Timestamp": stamp, "Value": age})  # fmt: skip
    for offset in range(0, len(data), 500):
        cloudwatch.put_metric_data(Namespace="AWS/SQS", MetricData=data[offset : offset + 500])


def observed(
    targets: list[WatchedQueue], discovery: list[DiscoveryResult], seeded: list[Seeded], at: datetime, minute: int
) -> Snapshot:
    """What the collector reads at `at`: every watched build queue and the path queues beside it, the datapoint
    of the minute before (a path queue's age only while it holds messages, as the collector asks it)."""
    seen = figures(seeded, minute - 1)
    runner_types = []
    for target in targets:
        if not target.has_queue:
            continue
        size, age = seen.get(target.queue_name, (0.0, 0.0))
        signals = {SignalName.QUEUE_SIZE: Reading.of(size), SignalName.QUEUE_TIME: Reading.of(age)}
        for path in path_queues(target):
            count, oldest = seen.get(path.queue_name, (0.0, 0.0))
            signals[path.count], signals[path.age] = Reading.of(count), Reading.of(oldest if count else 0.0)
        runner_types.append(
            RunnerTypeSnapshot(
                name=target.runner_type,
                region=target.region,
                queue_name=target.queue_name,
                team=target.team,
                signals=signals,
                job_retry_queue=target.job_retry_queue,
                dead_letter_queue=target.dead_letter_queue,
            )
        )
    return Snapshot(snapshot_id=f"rehearsal-{at:%H%M}", collected_at=at, runner_types=runner_types, discovery=discovery)


def _arrives(at: datetime) -> Callable[[], datetime]:
    """The wall clock of a tick that arrives as it is made (the evaluator refuses one implausibly far off)."""
    return lambda: at


PageLine = tuple[datetime, str, str, str, tuple[str, ...]]  # at, rule, page, priority, runner types


def rehearse(config_path: Path, out: Callable[[str], None] = print, now: datetime | None = None) -> int:
    """Inside moto (the caller's): 0 when the rehearsal pages exactly as the backtest replays it, else 1."""
    config = load_config(config_path)
    seeded, notes = seed_plan(config)
    if not seeded:
        for note in notes:
            out(f"note: {note}")
        out("nothing to rehearse: name a runner type with its queue under runner_types, or a rule a discovery finds")
        return 1
    for entry in [*seeded, *path_queues_to_create(config, seeded)]:  # the queues exist, as the autoscaler's do
        boto3.client("sqs", region_name=entry.region).create_queue(QueueName=entry.queue)
    with ThreadPoolExecutor(max_workers=4) as pool:  # found as the collector finds them: the paths beside too
        targets, discovery = resolve_queues(config, AwsClients(), config.defaults.account_id or ACCOUNT, pool)
    paths, path_notes = path_plan(config, seeded, targets)
    for note in [*notes, *path_notes]:
        out(f"note: {note}")
    wall = (now or datetime.now(UTC)).replace(second=0, microsecond=0)
    minutes = span_minutes(config, [*seeded, *paths])
    start = wall - timedelta(minutes=minutes + 2)
    for note in unrehearsed(config, start, start + timedelta(minutes=minutes)):
        out(f"note: {note}")
    out(f"rehearsal of {config_path}: from {moment(start)}, {minutes} minutes")
    for entry in [*seeded, *paths]:
        peak = entry.peak_seconds // 60
        out(f"  {entry.name}: {entry.size} {entry.holds} in {entry.queue}, the oldest up to {peak}m, then drained")
    for entry in [*seeded, *paths]:  # each in its queue's region, where the collector and the backtest read it
        write_history(boto3.client("cloudwatch", region_name=entry.region), [entry], start, minutes)
    queues = _without_slos(config)  # their part has no tracked jobs: it would page them as blind
    live = _live_pages(
        queues, lambda at, m: observed(targets, discovery, [*seeded, *paths], at, m), start, minutes, TABLE, out
    )
    replayed = backtest(queues, AwsClients(), start, start + timedelta(minutes=minutes), now=wall, keep_pages=True)
    agreed = _compared(live, _pages_of(replayed), out)
    slo_pages, slos_agreed = _rehearse_slos(config, seeded, wall, out)
    if agreed and slos_agreed:
        total = len(live) + slo_pages
        out(f"rehearsal OK: {total} page(s), exactly as `queuewatch backtest` replays the same minutes")
        return 0
    return 1


def _live_pages(
    config: Config,
    snapshot_at: Callable[[datetime, int], Snapshot],
    start: datetime,
    minutes: int,
    table: str,
    out: Callable[[str], None],
) -> list[PageLine]:
    """The evaluate stage on moto, a tick a minute on its own state table; each page printed with the receivers
    the routes give it."""
    region = config.defaults.region
    dynamodb = boto3.client("dynamodb", region_name=region)
    sns = boto3.client("sns", region_name=region)
    create_state_table(dynamodb, table)
    topic = sns.create_topic(Name="queuewatch-rehearsal-alerts")["TopicArn"]
    chat = sns.create_topic(Name="queuewatch-rehearsal-chat")["TopicArn"]
    stack = Stack(name="rehearsal", table=table, topic_arn=topic, chat_topic_arn=chat, region=region)
    pages: list[PageLine] = []
    told: set[str] = set()  # each notification once, whichever topics it went to (a ticket may go to chat alone)
    for minute in range(minutes + 1):
        at = start + timedelta(minutes=minute)
        with patch.dict(os.environ, {"AWS_DEFAULT_REGION": region}):
            evaluate(snapshot_at(at, minute), config, dynamodb, sns, stack, clock=_arrives(at))
        for entry in read_entries(dynamodb, table, at - timedelta(minutes=1), at + timedelta(minutes=1)):
            if entry.outcome != SENT or entry.notification_id in told:
                continue
            told.add(entry.notification_id)
            attributes: dict[str, str | list[str]] = {
                "kind": alert_kind(entry.rule), "priority": entry.priority, "team": entry.team,
            }  # fmt: skip
            names = ", ".join(r.name for r in config.routing.destinations(attributes)) or "no receiver"
            members = entry.runner_types
            out(f"  {at:%H:%M} {entry.kind:8} {entry.priority} {entry.rule} ({', '.join(members)}) -> {names}")
            pages.append((at, entry.rule, entry.kind, entry.priority, tuple(sorted(members))))
    return pages


def _without_slos(config: Config) -> Config:
    """The config with no SLOs; the properties a copy would carry over from the original (cached) are dropped."""
    copied = config.model_copy(update={"slos": []})
    for cached in ("resolved_slos", "known_teams"):
        copied.__dict__.pop(cached, None)
    return copied


def _compared(live: list[PageLine], replayed: list[PageLine], out: Callable[[str], None]) -> bool:
    """The same pages at the same minutes (within a minute, the order they are published in is the SNS client's)."""
    if sorted(replayed) == sorted(live):
        return True
    out("rehearsal and backtest differ:")
    for line in sorted(set(live) ^ set(replayed)):
        out(f"  {'rehearsal' if line in live else 'backtest'} only: {line[0]:%H:%M} {line[1]} {line[2]} {line[3]}")
    return False


def _pages_of(outcome: Outcome, keep: Callable[[str], bool] = lambda _: True) -> list[PageLine]:
    return [
        (p.at, p.rule, p.kind.value, p.priority, tuple(sorted(p.runner_types)))
        for p in outcome.replay.pages
        if keep(p.rule)
    ]


def _rehearse_slos(
    config: Config, seeded: list[Seeded], wall: datetime, out: Callable[[str], None]
) -> tuple[int, bool]:
    """Each SLO's burn on tracked jobs, paged live and replayed by `backtest --jobs-table`: (pages, agreed)."""
    minutes = LATE_MINUTES + QUIET_MINUTES
    start = wall - timedelta(minutes=minutes + 2)
    plan, notes = slo_plan(config, list(dict.fromkeys(s.name for s in seeded)), start)
    for note in notes:
        out(f"note: {note}")
    if not plan:
        return 0, True
    out(f"SLOs, on tracked jobs: from {moment(start)}, {minutes} minutes")
    clients = AwsClients()
    create_jobs_table(clients.dynamodb(), JOBS_TABLE)
    jobs = [job for entry in plan for job in entry.jobs]
    for entry in plan:
        out(f"  {entry.said}")
    for job in jobs:
        put_job(clients.dynamodb(), JOBS_TABLE, job, "rehearsal")
    counters = SloCounters(config, jobs)

    def snapshot_at(at: datetime, _: int) -> Snapshot:
        return Snapshot(snapshot_id=f"rehearsal-slo-{at:%H%M}", collected_at=at, runner_types=[],
                        slos=counters.readings_at(at))  # fmt: skip

    live = [line for line in _live_pages(config, snapshot_at, start, minutes, SLO_STATE_TABLE, out)]
    live = [line for line in live if is_slo_rule(line[1])]
    end = start + timedelta(minutes=minutes)
    replayed = backtest(config, clients, start, end, now=wall, keep_pages=True, jobs_table=JOBS_TABLE)
    return len(live), _compared(live, _pages_of(replayed, is_slo_rule), out)


def run_rehearsal(config_path: Path, out: Callable[[str], None] = print) -> int:
    """The rehearsal on its own in-process moto, with throwaway credentials; nothing outlives it."""
    from moto import mock_aws  # a development dependency, as for the demo

    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    with patch.dict(os.environ, env), mock_aws():
        return rehearse(config_path, out)
