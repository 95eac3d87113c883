"""The demo's part 4: a queue-time SLO. The shipped config plus one SLO on linux.4xlarge (99% of jobs start
within 2 minutes); over the last hour 24 jobs started in seconds and 6 waited 5 minutes, the last of them a
minute ago. That burns the budget at 20 over the hour and over the last 5 minutes: the fast pair pages.
Then `queuewatch slo` shows the same figures.

Called by the demo inside its moto, after the other parts, with the demo's handlers and jobs table. It runs on
a state table of its own, as a second stack would, at the wall clock's minute: the track stage reads the wall
clock (a job's times are never later than it), so this part's timeline ends now, while the other parts' ticks
ran ahead of it on the demo's simulated minutes.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from unittest.mock import patch

import boto3

from queuewatch.adapters.state_table.sent_log import SENT, SentEntry, read_entries
from queuewatch.alerting.alert import Alert
from queuewatch.config.load import load_config
from queuewatch.model.rules import alert_kind
from queuewatch.notifications.text import cut
from queuewatch_cli.commands.demo.harness import Demo
from queuewatch_cli.commands.slo import COMMAND as SLO_COMMAND
from queuewatch_cli.commands.slo.report import run as run_slo_report
from queuewatch_cli.common.stacks import LOCAL_STACK as DEMO_STACK
from queuewatch_cli.devkit.moto_tables import create_slo_table, create_state_table

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


SLO_TABLE = "queuewatch-demo-slos"
STATE_TABLE = "queuewatch-demo-slo-state"
SLO_NAME = "linux-4xlarge-start-fast"
SLO = f"""
slos:
  - {{name: {SLO_NAME}, match: ["linux.4xlarge"], objective: 99%, queue_time_under: 2m, window: 28d}}
"""
ON_TIME, LATE = 24, 6


def show_slo(demo: Demo, jobs_table: str, config: Path) -> bool:
    """Track the hour's 30 jobs, tick once, show the SLO's page and `queuewatch slo`. True when the fast pair
    paged and the report agrees: 6 late of 30, both burning at 20."""
    at = datetime.now(UTC).replace(second=0, microsecond=0)
    demo.out(
        f"\n\nPart 4, a queue-time SLO: `{SLO.strip().splitlines()[1].strip()[2:]}` joins the config, new: its "
        f"window holds only the last hour. Over that hour to {at:%H:%M}, {ON_TIME} jobs on linux.4xlarge started "
        f"within 20s and {LATE} waited 5 minutes (the track stage counts each good or bad)."
    )
    dynamodb = boto3.client("dynamodb", region_name=demo.sqs.meta.region_name)
    create_slo_table(dynamodb, SLO_TABLE)
    create_state_table(dynamodb, STATE_TABLE)
    chat_topic = _chat_topic(demo)
    with tempfile.TemporaryDirectory(prefix="queuewatch-demo-") as folder:
        with_slo = Path(folder) / "queuewatch.yaml"
        with_slo.write_text(config.read_text() + SLO)
        routing = load_config(with_slo).routing
        env = {"QUEUEWATCH_CONFIG": str(with_slo), "JOBS_TABLE": jobs_table, "SLO_TABLE": SLO_TABLE}
        env["CHAT_TOPIC_ARN"] = chat_topic  # as every deployed stack has one
        with patch.dict(os.environ, {**env, "STATE_TABLE": STATE_TABLE}):
            for number in range(ON_TIME):
                queued = at - timedelta(minutes=58) + timedelta(minutes=2 * number)
                _job(demo, 9_400_000 + number, queued, queued + timedelta(seconds=20))
            for number in range(LATE):
                queued = at - timedelta(minutes=6)
                _job(demo, 9_400_100 + number, queued, queued + timedelta(minutes=5))
            demo.put_ages(at, 0)
            result = demo.tick(at)
        received = {a.notification_id: a for a in (Alert.model_validate_json(e["Message"]) for e in demo.received())}
        sent = _sent(dynamodb, at)
        demo.out(f"\n=== tick at {at:%H:%M}: evaluation {result['outcome']}, {len(sent)} alert(s) sent")
        for entry in sent:
            kind = alert_kind(entry.rule)
            attributes: dict[str, str | list[str]] = {"kind": kind, "priority": entry.priority, "team": entry.team}
            reached = routing.destinations(attributes)
            pagers = [r.name for r in reached if r.pager]
            heard = "pages " + ", ".join(pagers) if pagers else "pages nobody"
            names = ", ".join(r.name for r in reached) or "no receiver"
            demo.out(f"  {kind}: {entry.rule} {entry.priority}, to {names} (the config's routes): {heard}")
            page = received.get(entry.notification_id)
            if page is not None and page.rule == f"slo:{SLO_NAME}":  # the ticket's figures are the report's below
                demo.out(f"    {cut(page.summary, 200)}")
        alerts = list(received.values())
        # As a person types it, with the stack's name (`local up` registers it); run below on the demo's tables.
        command = f"queuewatch slo --config queuewatch.yaml --stack {DEMO_STACK}"
        demo.out(f"\n=== {command}")
        report: list[str] = []
        # the command's own parser: the demo runs `queuewatch slo` exactly as a person types it
        parser = argparse.ArgumentParser(prog="queuewatch")
        SLO_COMMAND.add_to(parser.add_subparsers(dest="command"))
        args = parser.parse_args(
            ["slo", "--config", str(with_slo), "--slo-table", SLO_TABLE, "--jobs-table", jobs_table, "--top", "3"]
        )
        code = run_slo_report(args, now=at + timedelta(seconds=30), out=report.append)
    for line in report:
        demo.out(line)
    text = "\n".join(report)
    pages = [a for a in alerts if a.rule == f"slo:{SLO_NAME}" and a.status == "firing"]
    ok = (
        code == 0
        and len(pages) == 1
        and "fast: burn 20.0 over 1h (30 jobs, 6 late)" in pages[0].summary
        and "fast (page, 14.4): burn 20.00 long" in text
    )
    verdict = "the fast burn paged once, and the report shows the same 6 late jobs of 30"
    demo.out(f"demo OK: {verdict}" if ok else "demo FAILED: see the tick and the report above")
    return ok


def _chat_topic(demo: Demo) -> str:
    """The chat topic every deployed stack has (AWS Chatbot would read it): its ARN."""
    return str(
        boto3.client("sns", region_name=demo.sqs.meta.region_name).create_topic(Name="queuewatch-demo-chat")["TopicArn"]
    )


def _sent(dynamodb: DynamoDBClient, at: datetime) -> list[SentEntry]:
    """What the tick sent, to the alert topic or the chat topic, once each, from the state table's sent log."""
    entries = read_entries(dynamodb, STATE_TABLE, at - timedelta(minutes=1), at + timedelta(minutes=5))
    return list({entry.notification_id: entry for entry in entries if entry.outcome == SENT}.values())


def _job(demo: Demo, job_id: int, queued: datetime, started: datetime) -> None:
    """A job on linux.4xlarge, queued then started, through the track stage's handler."""
    demo.track("queued", job_id, queued, labels=["linux.4xlarge"])
    demo.track("in_progress", job_id, queued, started, labels=["linux.4xlarge"])
