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

import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import boto3

from queuewatch.adapters.clients import AwsClients
from queuewatch.adapters.state_table import create_table
from queuewatch.collect.paths import path_queues
from queuewatch.collect.queues import WatchedQueue, resolve_queues
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.stage import evaluate
from queuewatch.rules import alert_kind
from queuewatch.signals import SignalName
from queuewatch.snapshot import DiscoveryResult, Reading, RunnerTypeSnapshot, Snapshot
from queuewatch.wording import moment
from queuewatch_cli.backtest.run import backtest
from queuewatch_cli.rehearsal_seeds import Seeded, path_plan, path_queues_to_create, seed_plan

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

TABLE = "queuewatch-rehearsal-state"
ACCOUNT = "123456789012"  # moto's


def unrehearsed(config: Config, start: datetime, end: datetime) -> list[str]:
    """What the seeded queues do not exercise, said rather than passed over: SLOs (they count tracked jobs), and
    each maintenance window, open or not over the rehearsal's minutes."""
    notes = [
        f"SLO {slo.name}: not rehearsed (it counts tracked jobs; see backtest --jobs-table)" for slo in config.slos
    ]
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
    live = _live_pages(config, (targets, discovery), [*seeded, *paths], start, minutes, out)
    replayed = backtest(config, AwsClients(), start, start + timedelta(minutes=minutes), now=wall, keep_pages=True)
    again = [(p.at, p.rule, p.kind.value, p.priority, tuple(sorted(p.runner_types))) for p in replayed.replay.pages]
    if again == live:
        out(f"rehearsal OK: {len(live)} page(s), exactly as `queuewatch backtest` replays the same minutes")
        return 0
    out("rehearsal and backtest differ:")
    for line in sorted(set(live) ^ set(again)):
        out(f"  {'rehearsal' if line in live else 'backtest'} only: {line[0]:%H:%M} {line[1]} {line[2]} {line[3]}")
    return 1


def _live_pages(
    config: Config,
    watched: tuple[list[WatchedQueue], list[DiscoveryResult]],
    seeded: list[Seeded],
    start: datetime,
    minutes: int,
    out: Callable[[str], None],
) -> list[PageLine]:
    """The evaluate stage on moto, a tick a minute; each page printed with the receivers the routes give it."""
    region = config.defaults.region
    dynamodb = boto3.client("dynamodb", region_name=region)
    sns = boto3.client("sns", region_name=region)
    create_table(dynamodb, TABLE)
    topic = sns.create_topic(Name="queuewatch-rehearsal-alerts")["TopicArn"]
    chat = sns.create_topic(Name="queuewatch-rehearsal-chat")["TopicArn"]
    stack = Stack(name="rehearsal", table=TABLE, topic_arn=topic, chat_topic_arn=chat, region=region)
    sent: list[dict[str, Any]] = []

    def keep(params: dict[str, Any], **_: Any) -> None:
        if params["TopicArn"] == topic:
            sent.append(json.loads(json.loads(params["Message"])["default"]))

    sns.meta.events.register("provide-client-params.sns.Publish", keep)
    pages: list[PageLine] = []
    for minute in range(minutes + 1):
        at = start + timedelta(minutes=minute)
        with patch.dict(os.environ, {"AWS_DEFAULT_REGION": region}):
            evaluate(observed(*watched, seeded, at, minute), config, dynamodb, sns, stack, clock=_arrives(at))
        for alert in sent:
            attributes = {"kind": alert_kind(alert["rule"]), "priority": alert["priority"], "team": alert["team"]}
            names = ", ".join(r.name for r in config.routing.destinations(attributes)) or "no receiver"
            members = tuple(r["runner_type"] for r in alert["runner_types"])
            out(f"  {at:%H:%M} {alert['page']:8} {alert['priority']} {alert['rule']} ({', '.join(members)}) -> {names}")
            pages.append((at, alert["rule"], alert["page"], alert["priority"], tuple(sorted(members))))
        sent.clear()
    return pages


def run_rehearsal(config_path: Path, out: Callable[[str], None] = print) -> int:
    """The rehearsal on its own in-process moto, with throwaway credentials; nothing outlives it."""
    from moto import mock_aws  # a development dependency, as for the demo

    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    with patch.dict(os.environ, env), mock_aws():
        return rehearse(config_path, out)
