"""`queuewatch demo --config FILE`: a rehearsal of your own config on an in-process moto, before the deploy.

It seeds an incident on the runner types your config names: for each rule, the first named runner type it
selects queues past every threshold of every rule that selects it (so an escalation escalates), then drains.
Each minute the real evaluate stage judges that minute's figures with your rules, escalation, silences of
none, windows and routes, and each page is printed with the receivers your routes send it to. Then `backtest`
replays the same minutes from CloudWatch's history (where the rehearsal wrote them, as AWS/SQS would) and
the two lists of pages are compared: the rehearsal pages exactly as the backtest replays it, or says where not.

Runner types found by discovery alone have no name to seed before the deploy: the rehearsal says so.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import boto3

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.base.wording import moment
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.rules import alert_kind
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot, Snapshot
from queuewatch_cli.backtest.run import backtest
from queuewatch_cli.moto_tables import create_state_table

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

TABLE = "queuewatch-rehearsal-state"
MARGIN_MINUTES = 5  # the incident's oldest job passes the highest queue-time threshold by this much
DEFAULT_PEAK = 1800  # for a runner type whose rules judge queue size alone


@dataclass(frozen=True)
class Seeded:
    """One runner type's incident: its queue, the jobs queued, and how long the oldest waits at the peak."""

    name: str
    queue: str
    region: str
    size: int
    peak_seconds: int


def seed_plan(config: Config) -> tuple[list[Seeded], list[str]]:
    """The runner types to seed, and what cannot be rehearsed, in words."""
    named = [spec for spec in config.runner_types if spec.queue is not None and spec.queue.name is not None]
    notes = [] if named else ["no runner type is named with its queue: discovery's are found only once deployed"]
    chosen: dict[str, Seeded] = {}
    for rule in config.resolved_rules:
        spec = next((s for s in named if rule.applies_to(s.name)), None)
        if spec is None:
            notes.append(f"rule {rule.name}: selects no named runner type, so the rehearsal cannot seed it")
            continue
        if spec.name in chosen:
            continue
        rules = config.rules_for(spec.name)
        times = [r.queue_time_threshold for r in rules if r.queue_time_threshold is not None]
        sizes = [r.queue_size_threshold for r in rules if r.queue_size_threshold is not None]
        pending = max(r.pending_for for r in rules)
        peak = (max(times) if times else DEFAULT_PEAK) + pending + MARGIN_MINUTES * 60
        assert spec.queue is not None and spec.queue.name is not None
        region = spec.queue.region or config.defaults.region
        chosen[spec.name] = Seeded(spec.name, spec.queue.name, region, max(sizes, default=0) + 3, peak)
    return list(chosen.values()), notes


def unrehearsed(config: Config, start: datetime, end: datetime) -> list[str]:
    """What the seeded queues do not exercise, said rather than passed over: SLOs (they count tracked jobs), the
    autoscaler's other queues, and each maintenance window, open or not over the rehearsal's minutes."""
    notes = [
        f"SLO {slo.name}: not rehearsed (it counts tracked jobs; see backtest --jobs-table)" for slo in config.slos
    ]
    notes += [f"rule {rule.name}: not rehearsed (the autoscaler's {rule.name} queues)" for rule in config.path_rules]
    for window in config.maintenance_windows:
        minutes = [start + timedelta(minutes=m) for m in range(int((end - start).total_seconds() // 60) + 1)]
        held = any(window.open_at(at) for at in minutes)
        notes.append(f"maintenance window {window.name}: {'open' if held else 'closed'} over the rehearsal's minutes")
    return notes


def figures(seeded: list[Seeded], minute: int) -> dict[str, tuple[float, float]]:
    """(queue size, age of the oldest job in seconds) of each seeded runner type at that minute; the incident
    starts at minute 0 with a job just queued and ends, drained, once its oldest job has waited its peak."""
    return {s.name: (s.size, minute * 60.0) for s in seeded if 0 <= minute * 60 <= s.peak_seconds}


def span_minutes(config: Config, seeded: list[Seeded]) -> int:
    """The incident, then long enough for every alert's keep_firing_for to pass and its resolve to go."""
    keep = max((r.keep_firing_for for r in config.resolved_rules), default=0)
    return max((s.peak_seconds for s in seeded), default=0) // 60 + keep // 60 + 3


def write_history(cloudwatch: CloudWatchClient, seeded: list[Seeded], start: datetime, minutes: int) -> None:
    """The figures as AWS/SQS publishes them for an active queue, one datapoint a minute, for the backtest."""
    data: list[Any] = []
    for entry in seeded:
        dimensions = [{"Name": "QueueName", "Value": entry.queue}]
        for minute in range(minutes):
            size, age = figures([entry], minute).get(entry.name, (0.0, 0.0))
            stamp = start + timedelta(minutes=minute)
            data.append({"MetricName": "ApproximateNumberOfMessagesVisible", "Dimensions": dimensions,
                         "Timestamp": stamp, "Value": size})  # fmt: skip
            data.append({"MetricName": "ApproximateAgeOfOldestMessage", "Dimensions": dimensions,
                         "Timestamp": stamp, "Value": age})  # fmt: skip
    for offset in range(0, len(data), 500):
        cloudwatch.put_metric_data(Namespace="AWS/SQS", MetricData=data[offset : offset + 500])


def observed(config: Config, seeded: list[Seeded], at: datetime, minute: int) -> Snapshot:
    """What the collector reads at `at`: every named runner type, the datapoint of the minute before."""
    seen = figures(seeded, minute - 1)
    runner_types = []
    for spec in config.runner_types:
        if spec.queue is None or spec.queue.name is None:
            continue
        size, age = seen.get(spec.name, (0.0, 0.0))
        signals = {SignalName.QUEUE_SIZE: Reading.of(size), SignalName.QUEUE_TIME: Reading.of(age)}
        region = spec.queue.region or config.defaults.region
        runner_types.append(
            RunnerTypeSnapshot(
                name=spec.name, region=region, queue_name=spec.queue.name, team=spec.team, signals=signals
            )
        )
    return Snapshot(snapshot_id=f"rehearsal-{at:%H%M}", collected_at=at, runner_types=runner_types)


def _arrives(at: datetime) -> Callable[[], datetime]:
    """The wall clock of a tick that arrives as it is made (the evaluator refuses one implausibly far off)."""
    return lambda: at


PageLine = tuple[datetime, str, str, str, tuple[str, ...]]  # at, rule, page, priority, runner types


def rehearse(config_path: Path, out: Callable[[str], None] = print, now: datetime | None = None) -> int:
    """Inside moto (the caller's): 0 when the rehearsal pages exactly as the backtest replays it, else 1."""
    config = load_config(config_path)
    seeded, notes = seed_plan(config)
    for note in notes:
        out(f"note: {note}")
    if not seeded:
        out("nothing to rehearse: name a runner type with its queue under runner_types")
        return 1
    wall = (now or datetime.now(UTC)).replace(second=0, microsecond=0)
    minutes = span_minutes(config, seeded)
    start = wall - timedelta(minutes=minutes + 2)
    for note in unrehearsed(config, start, start + timedelta(minutes=minutes)):
        out(f"note: {note}")
    region = config.defaults.region
    out(f"rehearsal of {config_path}: from {moment(start)}, {minutes} minutes")
    for entry in seeded:
        peak = entry.peak_seconds // 60
        out(f"  {entry.name}: {entry.size} jobs queued, the oldest waiting up to {peak}m, then drained")
    for entry in seeded:  # the queues exist, as the autoscaler's do
        boto3.client("sqs", region_name=entry.region).create_queue(QueueName=entry.queue)
    for entry in seeded:  # each in its queue's region, where the collector and the backtest read it
        write_history(boto3.client("cloudwatch", region_name=entry.region), [entry], start, minutes)
    live = _live_pages(config, seeded, start, minutes, region, out)
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
    config: Config, seeded: list[Seeded], start: datetime, minutes: int, region: str, out: Callable[[str], None]
) -> list[PageLine]:
    """The evaluate stage on moto, a tick a minute; each page printed with the receivers the routes give it."""
    dynamodb = boto3.client("dynamodb", region_name=region)
    sns = boto3.client("sns", region_name=region)
    create_state_table(dynamodb, TABLE)
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
            evaluate(observed(config, seeded, at, minute), config, dynamodb, sns, stack, clock=_arrives(at))
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
