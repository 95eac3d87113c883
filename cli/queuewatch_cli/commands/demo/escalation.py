"""The demo's part 3: an escalation is one incident. A P1 rule at 30 minutes joins the shipped P2 rule; a queue
pages at P2, then crosses 30 minutes: the pager gets the P1 incident, and the P2 one resolved as superseded.

Called by the demo inside its moto, after part 2, with the demo's handlers; the config is the shipped one plus
the P1 rule, in a temporary file the demo's evaluator reads for this part only.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from unittest.mock import patch

from queuewatch.alerting.alert import Alert
from queuewatch.notifications import Origin
from queuewatch.notifications.cloudwatch import cloudwatch_alarm
from queuewatch.notifications.text import cut
from queuewatch_cli.commands.demo.harness import Demo
from queuewatch_cli.devkit.seed import put_queue_ages

QUEUE = "gh-ci-linux-4xlarge-queued-builds"
P1_RULE = """
  - name: jobs-stuck
    match: ["*"]
    thresholds: { queue_time: 30m, queue_size: 0 }
    priority: P1
    group_by: runner_type
    title: Jobs stuck in the queue
"""


def show_escalation(demo: Demo, at: datetime, config: Path) -> bool:
    """Two ticks on linux.4xlarge: 20 minutes queued (P2), then 35 (P1). True when the pager holds one incident."""
    demo.out(
        "\n\nPart 3, an escalation: a P1 rule `jobs-stuck` (queue time > 30m, one page per runner type) joins the "
        "P2 rule. 5 jobs queue on linux.4xlarge."
    )
    for job_id in range(5):
        demo.sqs.send_message(QueueUrl=demo.urls[QUEUE], MessageBody=json.dumps({"id": 9_300_000 + job_id}))
    with tempfile.TemporaryDirectory(prefix="queuewatch-demo-") as folder:
        escalating = Path(folder) / "queuewatch.yaml"
        escalating.write_text(config.read_text().replace("\nmonitor:", P1_RULE + "\nmonitor:", 1))
        with patch.dict(os.environ, {"QUEUEWATCH_CONFIG": str(escalating)}):
            first = _tick(demo, at, 20, "20m queued: the P2 rule pages")
            second = _tick(demo, at + timedelta(minutes=1), 35, "35m queued: the P1 rule fires")
    demo.sqs.purge_queue(QueueUrl=demo.urls[QUEUE])  # the local stack's own incident starts from an empty queue
    states = [(a.priority, a.status, bool(a.superseded_by)) for a in second]
    ok = [(a.priority, a.status) for a in first] == [("P2", "firing")] and states == [
        ("P1", "firing", False),
        ("P2", "resolved", True),
    ]
    verdict = "the pager holds one incident, at P1; the P2 one was resolved as superseded"
    demo.out("\n" + (f"demo OK: {verdict}" if ok else "demo FAILED: see the ticks above"))
    return ok


def _tick(demo: Demo, at: datetime, queued_minutes: int, label: str) -> list[Alert]:
    """One tick with linux.4xlarge's oldest job `queued_minutes` old; each page as the pager takes it, in one line."""
    put_queue_ages(demo.cloudwatch, {QUEUE: queued_minutes * 60}, at)
    result: dict[str, Any] = demo.tick(at)
    alerts = [Alert.model_validate_json(envelope["Message"]) for envelope in demo.received()]
    demo.out(f"\n=== tick at {at:%H:%M} ({label}): evaluation {result['outcome']}, {len(alerts)} page(s)")
    origin = Origin.of_topic(os.environ["ALERT_TOPIC_ARN"])
    for alert in alerts:
        alarm = cloudwatch_alarm(alert, origin)
        demo.out(f"  pager: {alarm['AlarmName']}  [{alarm['NewStateValue']}]")
        demo.out(f"    {cut(str(alarm['NewStateReason']), 150)}")
    return alerts
