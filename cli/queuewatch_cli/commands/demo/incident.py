"""The demo's part 1: the incident that motivated queuewatch. 14 jobs queue on linux.2xlarge, the oldest 114
minutes old, while the other runner types are healthy; the scale-up Lambda stopped consuming them 15 minutes
ago, which the triage names from the queue's AWS/SQS history. The page as the pager, the chat channel and an
e-mail subscriber get it; no duplicate; `queuewatch status` while it fires; the drain and the resolve; then
`queuewatch history` and a `queuewatch backtest` of the same minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import boto3

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.state_table.sent_log import read_entries
from queuewatch.base.wording import moment
from queuewatch_cli.commands.backtest.run import run_backtest
from queuewatch_cli.commands.demo.harness import DEMO_ENV, INCIDENT_QUEUE, REGION, STATE_TABLE, Demo
from queuewatch_cli.commands.history.history import history_lines
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.common.stacks import Target
from queuewatch_cli.devkit.handlers import REPO_ROOT
from queuewatch_cli.devkit.seed import put_evaluator_figures

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch.type_defs import DimensionTypeDef, MetricDatumTypeDef


def show_incident(demo: Demo) -> bool:
    """Ticks 1 to 4 on the incident queue, `status` while it fires, `history` and a `backtest` after it. True
    when it paged once and resolved once, and the backtest of its history pages at the same minute."""
    start = demo.start
    demo.out(
        "queuewatch demo: 14 jobs queued on linux.2xlarge, the oldest 114 minutes old; the scale-up Lambda "
        "stopped consuming 15 minutes ago; other runner types idle."
    )

    put_history(demo, start)
    demo.put_ages(start, 114 * 60)
    first = demo.show(f"tick 1 at {start:%H:%M}", demo.tick(start), ("pager", "chat", "email"))

    at = start + timedelta(minutes=1)
    demo.put_ages(at, 115 * 60)
    second = demo.show(f"tick 2 at {at:%H:%M} (still queueing)", demo.tick(at))
    # What CloudWatch extracts from the evaluator's EMF lines (moto does not), for status's figures.
    namespace = DEMO_ENV["POWERTOOLS_METRICS_NAMESPACE"]
    stack = DEMO_ENV["STACK_NAME"]
    put_evaluator_figures(demo.cloudwatch, namespace, {"linux.2xlarge": (14, 115 * 60)}, at, stack)
    demo.out(f"\n=== queuewatch status --stack {stack}, while the incident fires:")
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    demo.out(show_status(dynamodb, STATE_TABLE, at + timedelta(seconds=30), False, demo.cloudwatch, namespace, stack))

    depth = demo.sqs.get_queue_attributes(QueueUrl=demo.urls[INCIDENT_QUEUE], AttributeNames=["All"])["Attributes"]
    demo.out(
        f"\nThe autoscaler's queue was only read: {depth['ApproximateNumberOfMessages']} visible, "
        f"{depth['ApproximateNumberOfMessagesNotVisible']} in flight. The autoscaler now starts runners "
        "and drains it."
    )
    demo.sqs.purge_queue(QueueUrl=demo.urls[INCIDENT_QUEUE])
    at = start + timedelta(minutes=2)
    demo.put_ages(at, 0)
    third = demo.show(f"tick 3 at {at:%H:%M} (drained; keep_firing_for 5m starts)", demo.tick(at))

    at = start + timedelta(minutes=7)
    demo.put_ages(at, 0)
    fourth = demo.show(f"tick 4 at {at:%H:%M} (clear for 5m)", demo.tick(at))
    show_history(demo, start - timedelta(minutes=1), at + timedelta(minutes=1))

    ok = (
        len(first) == 1
        and not second
        and not third
        and len(fourth) == 1
        and json.loads(fourth[0]["Message"])["status"] == "resolved"
    )
    replayed = replay(demo, start)
    demo.out(
        "\n"
        + (
            "demo OK: one page, no duplicate, one resolve; the backtest of its history pages at the same "
            "minute, and a 150-job threshold would not have paged"
            if ok and replayed
            else "demo FAILED: see the ticks above"
        )
    )
    return ok and replayed


def put_history(demo: Demo, at: datetime) -> None:
    """The incident queue's last 3h15m in AWS/SQS: one job a minute arrives throughout, the scale-up
    Lambda deleted one a minute until 15 minutes ago and none since, and the backlog grew from 3."""
    dimensions: list[DimensionTypeDef] = [{"Name": "QueueName", "Value": INCIDENT_QUEUE}]

    def point(metric: str, minutes_ago: int, value: float) -> MetricDatumTypeDef:
        stamp = at - timedelta(minutes=minutes_ago)
        return {"MetricName": metric, "Dimensions": dimensions, "Timestamp": stamp, "Value": value}

    data = [point("NumberOfMessagesSent", ago, 1) for ago in range(1, 196)]
    data += [point("NumberOfMessagesDeleted", ago, 1) for ago in range(16, 196)]
    data += [point("ApproximateNumberOfMessagesVisible", ago, 3 + (15 - ago) * 11 / 14) for ago in range(1, 16)]
    data.append(point("ApproximateAgeOfOldestMessage", 15, 99 * 60))
    for start in range(0, len(data), 500):
        demo.cloudwatch.put_metric_data(Namespace="AWS/SQS", MetricData=data[start : start + 500])


def show_history(demo: Demo, since: datetime, until: datetime) -> None:
    """`queuewatch history` over the incident: what the evaluator logged as it sent."""
    stack = DEMO_ENV["STACK_NAME"]
    demo.out(f"\n=== queuewatch history --stack {stack} --since {since:%H:%M}:")
    target = Target(stack, REGION, STATE_TABLE)
    entries = read_entries(boto3.client("dynamodb", region_name=REGION), STATE_TABLE, since, until)
    for line in history_lines([(target, entries)], since, until, as_json=False):
        demo.out(line)


def replay(demo: Demo, start: datetime) -> bool:
    """`queuewatch backtest` on the history the demo put in CloudWatch, from its first tick, against the
    same config with a 150-job threshold; True if only the first pages, at the demo's minute."""
    config = Path(os.environ["QUEUEWATCH_CONFIG"])
    with tempfile.TemporaryDirectory(prefix="queuewatch-demo-") as folder:  # removed when the replay ends
        raised = Path(folder) / "queue-size-150.yaml"
        text = config.read_text()
        raised.write_text(text.replace("queue_size: 0 }", "queue_size: 150 }", 1))
        end = start + timedelta(minutes=8)
        command = (
            f"queuewatch backtest --config {config.relative_to(REPO_ROOT)} --compare queue-size-150.yaml "
            f"--from {start:%Y-%m-%dT%H:%M} --to {end:%Y-%m-%dT%H:%M}"
        )
        demo.out(f"\n=== {command}\n(the demo's history, replayed through the same rules; --plot FILE.png draws it)")
        lines: list[str] = []
        args = argparse.Namespace(
            config=str(config),
            compare=str(raised),
            start=start.isoformat(),
            end=end.isoformat(),
            plot=None,
            region=None,
            stack=None,
            quiet=True,
        )
        code = run_backtest(args, AwsClients(), now=end + timedelta(minutes=1), out=lines.append)
        changed = raised.read_text() != text
    for line in lines:
        demo.out(line.replace(str(raised), "queue-size-150.yaml").replace(str(config), str(config.name)))
    report = "\n".join(lines)
    only_a = report.split("pages only A sends: ", 1)[-1]
    return (
        code == 0 and changed and only_a.startswith(f"1\n    {moment(start)} -> ") and "pages only B sends: 0" in report
    )
