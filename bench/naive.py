"""The naive watcher queuewatch is measured against, on the same moto server and the same fleet.

What a first version typically does: one GetQueueAttributes after another, one
GetMetricData call per metric, and for every runner type a read and a write of
its state item on every tick, paging each runner type on its own. Its verdicts
come from queuewatch's own rules, so only the I/O differs.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import boto3

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.cloudwatch import get_metric_data
from queuewatch.adapters.sqs import QueueDepth, read_queue_depth
from queuewatch.alerting.alert_state import InstanceState, Status, step
from queuewatch.collect import resolve_queues
from queuewatch.collect.queries import metric_requests
from queuewatch.config import Config
from queuewatch.model.rules import judge
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient

PARTITION = "naive"


class NaiveWatcher:
    def __init__(self, config: Config, session: boto3.Session, table: str, topic_arn: str, region: str) -> None:
        self.config = config
        self.table = table
        self.topic_arn = topic_arn
        self._sqs = {r: session.client("sqs", region_name=r) for r in ("us-east-1", "us-west-2")}
        self._cloudwatch = {r: session.client("cloudwatch", region_name=r) for r in ("us-east-1", "us-west-2")}
        self.dynamodb: DynamoDBClient = session.client("dynamodb", region_name=region)
        self.sns: SNSClient = session.client("sns", region_name=region)
        self.aws = AwsClients(session)  # for the queue listing, which it shares with queuewatch

    def tick(self, now: datetime, account_id: str) -> int:
        """One tick; returns the pages it sent."""
        with ThreadPoolExecutor(max_workers=1) as one_at_a_time:
            targets, _ = resolve_queues(self.config, self.aws, account_id, one_at_a_time)
        depths: list[QueueDepth | None] = []
        for target in targets:
            try:
                depths.append(read_queue_depth(self._sqs[target.region], target.url))
            except Exception:  # noqa: BLE001 - a failed read is no data, as in queuewatch
                depths.append(None)
        ages: dict[int, float | None] = {}
        start = now - timedelta(seconds=self.config.defaults.metric_lookback)
        for region, pairs in metric_requests(targets).items():
            for request, slots in pairs:
                series = get_metric_data(self._cloudwatch[region], [request], start, now)[request.query_id]
                for slot in slots:  # a query several runner types share answers each of them
                    if slot.signal is SignalName.QUEUE_TIME:
                        ages[slot.runner_index] = series.points[0][1] if series.points else None
        pages = 0
        for index, target in enumerate(targets):
            depth = depths[index]
            age = ages.get(index)
            if age is None and depth is not None and depth.total == 0:
                age = 0.0
            signals = {
                SignalName.QUEUE_SIZE: Reading.of(depth.total) if depth else Reading.missing("no data"),
                SignalName.QUEUE_TIME: Reading.of(age) if age is not None else Reading.missing("no data"),
            }
            observed = RunnerTypeSnapshot(
                name=target.runner_type, region=target.region, queue_name=target.queue_name, signals=signals
            )
            for rule in self.config.rules_for(target.runner_type):
                key = f"{rule.name}#{target.runner_type}"
                previous = self._read(key, rule.name, target.runner_type)
                verdict = judge(rule, observed)
                new = step(
                    previous,
                    verdict.breached,
                    now,
                    rule=rule.name,
                    runner_type=target.runner_type,
                    pending_for=rule.pending_for,
                    keep_firing_for=rule.keep_firing_for,
                )
                self._write(key, new)
                became_firing = new is not None and new.status is Status.FIRING
                if became_firing and (previous is None or previous.status is not Status.FIRING):
                    self.sns.publish(
                        TopicArn=self.topic_arn,
                        Subject=f"[FIRING] {rule.name} {target.runner_type}",
                        Message=json.dumps({"rule": rule.name, "runner_type": target.runner_type}),
                    )
                    pages += 1
        return pages

    def _read(self, key: str, rule: str, runner_type: str) -> InstanceState | None:
        item = self.dynamodb.get_item(
            TableName=self.table, Key={"pk": {"S": PARTITION}, "sk": {"S": key}}, ConsistentRead=True
        ).get("Item")
        if not item or item["status"]["S"] == "ok":
            return None
        return InstanceState(
            rule=rule,
            runner_type=runner_type,
            status=Status(item["status"]["S"]),
            since=datetime.fromisoformat(item["since"]["S"]),
        )

    def _write(self, key: str, state: InstanceState | None) -> None:
        self.dynamodb.put_item(
            TableName=self.table,
            Item={
                "pk": {"S": PARTITION},
                "sk": {"S": key},
                "status": {"S": state.status.value if state else "ok"},
                "since": {"S": state.since.isoformat() if state else ""},
            },
        )
