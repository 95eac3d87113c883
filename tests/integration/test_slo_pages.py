"""SLO alerts through the evaluate stage on moto: a page on the alert topic (and chat), a ticket on the chat
topic alone, each once, silenced like any rule, resolved; an SLO the collector could not read is said."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from support import StackInMoto, arriving_now, minutes, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import load_state, put_silence
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.load import parse_config
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.github_status import parse_summary
from queuewatch.model.snapshot import SloReading, SloWindowCount, Snapshot
from queuewatch_cli.devkit.moto_tables import create_state_table
from queuewatch_cli.main import main

CONFIG = """
version: 1
defaults: {rule: {team: ci-infra}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 30m}}
slos:
  - {name: linux-fast, objective: 99%, queue_time_under: 2m, runbook_url: "https://runbooks.example.com/slo"}
"""
SPANS = (300, 1800, 3600, 21600, 259200)


def with_slo(minute: float, bad: dict[int, int] | None = None, error: str | None = None) -> Snapshot:
    """1,000 jobs in every window, `bad[seconds]` of them late."""
    windows = [SloWindowCount(seconds=s, good=1000 - (bad or {}).get(s, 0), bad=(bad or {}).get(s, 0)) for s in SPANS]
    reading = SloReading(name="linux-fast", windows=[] if error else windows, error=error)
    base = snapshot(minutes(minute), runner_type("linux.2xlarge", 0, 0))
    return base.model_copy(update={"slos": [reading]})


class Inboxes:
    def __init__(self) -> None:
        self.moto = StackInMoto.create(chat=True)
        self.config = parse_config(CONFIG)
        self.alert = self.moto.subscribe_queue("alert-inbox")
        self.chat = self.moto.subscribe_queue("chat-inbox", topic_arn=self.moto.stack.chat_topic_arn)
        self.sqs = boto3.client("sqs", region_name="us-east-1")

    def read(self, url: str) -> list[dict[str, Any]]:
        out = []
        while batch := self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            for message in batch:
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                out.append(json.loads(message["Body"]))
        return out


@pytest.fixture
def inboxes(aws: None) -> Inboxes:
    return Inboxes()


FAST = {3600: 200, 300: 200}  # 20% late over 1h and 5m: burn 20, over the fast page's 14.4
TICKET = {259200: 20, 21600: 20}  # 2% over 3d and 6h: burn 2, a ticket's 1 and no page's


def test_a_fast_burn_pages_once_and_resolves(inboxes: Inboxes) -> None:
    inboxes.moto.evaluate(with_slo(0, FAST), inboxes.config)
    inboxes.moto.evaluate(with_slo(1, FAST), inboxes.config)
    [page] = [json.loads(m["Message"]) for m in inboxes.read(inboxes.alert)]
    assert page["rule"] == "slo:linux-fast" and page["status"] == "firing" and page["priority"] == "P2"
    assert page["title"] == "Queue-time SLO linux-fast burning its budget (page)"
    assert "fast: burn 20.0 over 1h (1000 jobs, 200 late) and 20.0 over 5m" in page["summary"]
    assert page["runbook_url"] == "https://runbooks.example.com/slo"
    assert len(inboxes.read(inboxes.chat)) == 1  # pages go to chat too, as every page does
    inboxes.moto.evaluate(with_slo(2), inboxes.config)
    [resolve] = [json.loads(m["Message"]) for m in inboxes.read(inboxes.alert)]
    assert resolve["status"] == "resolved" and resolve["dedup_key"] == page["dedup_key"]


def test_a_slow_budget_burn_is_a_ticket_on_the_chat_topic_alone(inboxes: Inboxes) -> None:
    inboxes.moto.evaluate(with_slo(0, TICKET), inboxes.config)
    assert inboxes.read(inboxes.alert) == []
    [ticket] = inboxes.read(inboxes.chat)
    assert "linux-fast" in ticket["Message"] and "ticket" in ticket["Message"]


def test_a_silence_of_the_slo_rule_holds_its_page(inboxes: Inboxes) -> None:
    silence = SilenceRecord(
        silence_id="s1",
        rule="slo:linux-fast",
        matchers=(),
        team=None,
        starts_at=minutes(-1),
        ends_at=minutes(60),
        author="test",
        comment="known",
    )
    put_silence(inboxes.moto.dynamodb, inboxes.moto.stack.table, silence)
    inboxes.moto.evaluate(with_slo(0, FAST), inboxes.config)
    assert inboxes.read(inboxes.alert) == []


def test_an_slo_the_collector_could_not_read_is_a_monitor_finding_and_holds_its_alert(inboxes: Inboxes) -> None:
    inboxes.moto.evaluate(with_slo(0, FAST), inboxes.config)
    inboxes.read(inboxes.alert)
    result = inboxes.moto.evaluate(with_slo(1, error="counters: throttled"), inboxes.config)
    assert "slo:linux-fast" in result.degraded
    assert any(key.rule == "slo:linux-fast" for key in result.firing)  # held, not resolved
    assert [json.loads(m["Message"])["status"] for m in inboxes.read(inboxes.alert)] == []


def test_the_silence_command_takes_an_slo_rule_from_the_config(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    config = tmp_path / "q.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    base = ["silence", "add", "--table", "state", "--region", "us-east-1", "--config", str(config)]
    flags = ["--all", "--for", "2h", "--comment", "known"]
    assert main([*base, "--rule", "slo:linux-fast", *flags]) == 0
    assert main([*base, "--rule", "slo:linux-fast:ticket", *flags]) == 0
    assert main([*base, "--rule", "slo:nope", *flags]) == 2  # no such SLO in the config
    state = load_state(boto3.client("dynamodb", region_name="us-east-1"), "state")
    assert sorted(s.rule or "" for s in state.silences) == ["slo:linux-fast", "slo:linux-fast:ticket"]


def test_an_slo_page_during_a_github_actions_incident_says_so_first(inboxes: Inboxes) -> None:
    recorded = Path(__file__).parent / "githubstatus" / "summary_actions_incident.json"
    github = parse_summary(json.loads(recorded.read_text()), minutes(0))
    for minute in (0, 1):
        observation = with_slo(minute, FAST)
        moto = inboxes.moto
        evaluate(observation, inboxes.config, moto.dynamodb, moto.sns, moto.stack, github=github,
                 clock=arriving_now(observation))  # fmt: skip
    [page] = [json.loads(m["Message"]) for m in inboxes.read(inboxes.alert)]
    assert page["rule"] == "slo:linux-fast"
    assert page["summary"].startswith(
        "GitHub is investigating an Actions incident: Incident with Actions (https://stspg.io/x1f3c5m0q8kd). "
    ), page["summary"]
    assert "fast: burn 20.0 over 1h" in page["summary"]
