"""The weekly SLO digest on moto: one message per team to the chat topic, with each SLO's week (from the
counters, the jobs and the sent log, as `queuewatch slo` reads them), inside SNS's limits at any size."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from job_records import job_record

from queuewatch.adapters.jobs_table.jobs import put_job
from queuewatch.adapters.slo_table.counters import Contribution, count_job
from queuewatch.adapters.state_table.sent_log import SENT, SentEntry, put_entry
from queuewatch.base.errors import QueuewatchError
from queuewatch.config.load import load_config
from queuewatch.digest.message import MESSAGE_LIMIT, fitted
from queuewatch.digest.stage import DigestTables, build_digests, send_digests
from queuewatch.model.jobs import JobRecord
from queuewatch.notifications.chat import CHAT_DESCRIPTION_LIMIT
from queuewatch_cli.devkit.handlers import FakeContext, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_slo_table, create_state_table

NOW = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
TABLES = DigestTables(slo_table="slos", jobs_table="jobs", state_table="state")
CONFIG = """
version: 1
runner_types:
  - {name: linux.2xlarge, team: ci-infra, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: gpu.a100, team: gpu, queue: {name: gh-ci-gpu-a100-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 30m}}
slos:
  - {name: linux-fast, match: ["linux.*"], objective: 99%, queue_time_under: 2m, team: ci-infra}
  - {name: gpu-start, match: ["gpu.*"], objective: 95%, queue_time_under: 10m, team: gpu}
"""


def sent(rule: str, kind: str, at: datetime, notification: str, topic: str = "alert") -> SentEntry:
    return SentEntry(
        at=at, page_at=at, notification_id=notification, kind=kind, outcome=SENT, topic=topic, rule=rule,
        group="", priority="P2", team="ci-infra", runner_types=("linux.2xlarge",), runner_types_affected=1,
        subject=f"{rule} {kind} at {at:%H:%M}",
    )  # fmt: skip


def job(number: int, runner_type: str, queued_at: datetime, wait: timedelta) -> JobRecord:
    return job_record(
        number, runner_type, queued_at, started_at=queued_at + wait, run_id=1, expires_at=NOW + timedelta(days=30)
    )


@pytest.fixture
def stack(aws: None, tmp_path: Path) -> tuple[Any, Any, str, str]:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_slo_table(dynamodb, "slos")
    create_jobs_table(dynamodb, "jobs")
    create_state_table(dynamodb, "state")
    sns = boto3.client("sns", region_name="us-east-1")
    sqs = boto3.client("sqs", region_name="us-east-1")
    topic = sns.create_topic(Name="chat")["TopicArn"]
    inbox = sqs.create_queue(QueueName="chat-inbox")["QueueUrl"]
    inbox_arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=inbox_arn)
    return dynamodb, sns, topic, inbox


def received(inbox: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    messages = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10, MessageAttributeNames=["All"])
    return [json.loads(m["Body"]) for m in messages.get("Messages", [])]


def test_each_team_gets_its_slos_week_with_the_alerts_that_fired(
    stack: tuple[Any, Any, str, str], tmp_path: Path
) -> None:
    dynamodb, sns, topic, inbox = stack
    path = tmp_path / "q.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    config = load_config(path)
    keep = NOW + timedelta(days=30)
    # linux-fast: 196 good and 4 late jobs over the last day (budget 2 jobs: overspent by 2).
    for number in range(200):
        at = NOW - timedelta(hours=23) + timedelta(minutes=6 * number)
        contribution = Contribution("linux-fast", "bad" if number % 50 == 0 else "good", at, keep)
        count_job(dynamodb, "slos", number, [contribution], keep)
    # Two late linux jobs three days ago, one 10 days ago (out of the week); a gpu job in time.
    put_job(dynamodb, "jobs", job(1, "linux.2xlarge", NOW - timedelta(days=3), timedelta(minutes=9)), "w")
    put_job(dynamodb, "jobs", job(2, "linux.2xlarge", NOW - timedelta(days=3, hours=1), timedelta(minutes=5)), "w")
    put_job(dynamodb, "jobs", job(3, "linux.2xlarge", NOW - timedelta(days=10), timedelta(minutes=50)), "w")
    # The sent log: the fast page (to both topics: one alert), its repeat and resolve, the ticket, another
    # SLO's page, and a page of last month.
    fired = NOW - timedelta(days=2)
    for entry in (
        sent("slo:linux-fast", "new", fired, "n1"),
        sent("slo:linux-fast", "new", fired, "n1", topic="chat"),
        sent("slo:linux-fast", "repeat", fired + timedelta(hours=4), "n2"),
        sent("slo:linux-fast", "resolved", fired + timedelta(hours=5), "n3"),
        sent("slo:linux-fast:ticket", "new", fired + timedelta(hours=1), "n4"),
        sent("jobs-queueing", "new", fired, "n5"),
        sent("slo:linux-fast", "new", NOW - timedelta(days=9), "n6"),
    ):
        put_entry(dynamodb, "state", entry)

    assert send_digests(dynamodb, sns, topic, config, TABLES, NOW, "prod") == ["ci-infra", "gpu"]

    envelopes = received(inbox)
    by_team = {e["MessageAttributes"]["team"]["Value"]: e for e in envelopes}
    assert set(by_team) == {"ci-infra", "gpu"}
    assert by_team["ci-infra"]["MessageAttributes"]["status"]["Value"] == "digest"
    chat = json.loads(by_team["ci-infra"]["Message"])  # a queue gets the default body: the chat notification
    assert chat["source"] == "custom" and chat["content"]["keywords"] == ["slo-digest", "ci-infra"]
    text = chat["content"]["description"]
    assert "linux-fast: objective 99% within 120s over 28d" in text
    assert "achieved 98.00% of 200 jobs (4 late); budget left -2.0 jobs, -100.0%" in text
    assert "late jobs by runner type: linux.2xlarge 2" in text  # the week's, not the one 10 days ago
    assert "(the runner types and hours named: late jobs of the last 7 days)" in text
    assert "fast (page, 14.4): burn" in text
    assert "alerts in the last 7 days: 2" in text
    assert "slo:linux-fast new at" in text and "slo:linux-fast:ticket new" in text
    assert "repeat" not in text and "resolved" not in text and "jobs-queueing" not in text
    assert "gpu-start" not in text
    gpu = json.loads(by_team["gpu"]["Message"])["content"]["description"]
    assert "gpu-start: objective 95%" in gpu and "achieved no jobs" in gpu and "alerts in the last 7 days: none" in gpu
    assert by_team["gpu"]["Subject"] == "queuewatch prod: SLO digest for gpu, 7 days to 2026-11-23 08:00 UTC"

    [digest, _] = build_digests(dynamodb, config, TABLES, NOW, "prod")
    email = json.loads(digest.message)["email"]
    assert email.startswith(digest.subject) and "achieved 98.00% of 200 jobs" in email


def test_a_team_of_many_slos_with_a_foreign_name_fits_sns(stack: tuple[Any, Any, str, str], tmp_path: Path) -> None:
    dynamodb, sns, topic, inbox = stack
    team = "Plateforme d’intégration continue – Zürich " * 4  # non-ASCII, and a subject far over 100 characters
    slos = "\n".join(
        f"  - {{name: slo-{n:03d}-{'x' * 40}, match: ['linux.*'], objective: 99.9%, queue_time_under: 2m,"
        f" team: '{team.strip()}'}}"
        for n in range(50)
    )
    path = tmp_path / "q.yaml"
    path.write_text(CONFIG.split("slos:", maxsplit=1)[0] + "slos:\n" + slos + "\n", encoding="utf-8")
    config = load_config(path)
    fired = NOW - timedelta(days=1)
    for n in range(30):  # more alerts than a digest lists for one SLO
        put_entry(dynamodb, "state", sent("slo:slo-000-" + "x" * 40, "new", fired + timedelta(minutes=n), f"m{n}"))

    [digest] = build_digests(dynamodb, config, TABLES, NOW, "prod")
    assert len(digest.message.encode("utf-8")) <= MESSAGE_LIMIT
    assert digest.subject.isascii() and len(digest.subject) < 100 and "Zurich" in digest.subject
    email = json.loads(digest.message)["email"]
    assert "and 10 more" in email and email.count("objective 99.9%") == 50
    description = json.loads(json.loads(digest.message)["default"])["content"]["description"]
    assert len(description) <= CHAT_DESCRIPTION_LIMIT and description.startswith("```\n")
    assert description.endswith("\n```") and description.count("```") == 2  # the fence closed, though cut
    assert send_digests(dynamodb, sns, topic, config, TABLES, NOW, "prod") == [team.strip()]
    [envelope] = received(inbox)
    assert envelope["Subject"] == digest.subject


def test_a_config_without_slos_sends_nothing(stack: tuple[Any, Any, str, str], tmp_path: Path) -> None:
    dynamodb, sns, topic, inbox = stack
    path = tmp_path / "q.yaml"
    path.write_text(CONFIG.split("slos:", maxsplit=1)[0], encoding="utf-8")
    assert send_digests(dynamodb, sns, topic, load_config(path), TABLES, NOW, "prod") == []
    assert received(inbox) == []


def test_a_digest_over_snss_size_is_cut_to_fit() -> None:
    chat = {"source": "custom", "content": {"description": "é" * CHAT_DESCRIPTION_LIMIT}}
    message = fitted(chat, "Zürich – ünïcödé\n" * 60_000)  # about 1 MB of e-mail text, most of it 2 bytes a char
    assert len(message.encode("utf-8")) <= MESSAGE_LIMIT
    email = json.loads(message)["email"]
    assert email.startswith("Zürich") and email.endswith("(cut to fit SNS's message size)\n")
    assert len(email.encode("utf-8")) > MESSAGE_LIMIT // 3  # cut to fit, not emptied


def test_the_handler_sends_from_the_scheduled_event_and_refuses_one_far_from_the_clock(
    stack: tuple[Any, Any, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, _, topic, inbox = stack
    path = tmp_path / "q.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    env = {"QUEUEWATCH_CONFIG": str(path), "SLO_TABLE": "slos", "JOBS_TABLE": "jobs", "STATE_TABLE": "state"}
    for key, value in {**env, "CHAT_TOPIC_ARN": topic, "STACK_NAME": "prod"}.items():
        monkeypatch.setenv(key, value)
    event = load_event("digest_scheduled.json")
    scheduled = datetime.fromisoformat(event["time"])
    module = load_handler_module("digest")
    module.clock = lambda: scheduled + timedelta(seconds=2)  # type: ignore[attr-defined]
    assert module.lambda_handler(event, FakeContext("digest")) == {"teams_sent": ["ci-infra", "gpu"]}
    assert {e["Subject"] for e in received(inbox)} == {
        f"queuewatch prod: SLO digest for {team}, 7 days to {scheduled:%Y-%m-%d %H:%M} UTC"
        for team in ("ci-infra", "gpu")
    }
    module.clock = lambda: scheduled + timedelta(hours=2)  # type: ignore[attr-defined]
    with pytest.raises(QueuewatchError, match="from the clock: refused"):
        module.lambda_handler(event, FakeContext("digest"))
    assert received(inbox) == []
