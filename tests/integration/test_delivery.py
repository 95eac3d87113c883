"""One page, published once, as each subscriber of the stack receives it: SQS, a pager over http, e-mail, chat.

moto delivers to the SQS queues and, over loopback, to a pager endpoint served by the test; what SNS would
e-mail is read from the one Publish call. Every body is checked against its consumer's documented fields.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from consumers import CHATBOT, check_pager_envelope, check_structured, check_subject, description_fields
from jsonschema import Draft202012Validator
from support import T0, StackInMoto, count, level, minutes, runner_type, snapshot, with_signals

from queuewatch.adapters.state_table.alerts import load_state, put_silence
from queuewatch.alerting.alert import shipped_alert_schema
from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult
from queuewatch.model.snapshot import CollectorFailure, Snapshot

CONFIG = """
version: 1
defaults:
  rule:
    team: ci-infra
    runbook_url: https://runbooks.example.com/jobs-queueing
    dashboard_url: https://grafana.example.com/d/ci-queue
    keep_firing_for: 5m
    repeat_interval: 1h
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}, team: rocm}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 1m, queue_size: 0}
    priority: P2
    group_by: team
monitor:
  for: 2m
  priority: P3
"""

ALERT = Draft202012Validator(shipped_alert_schema())
PAGER_FILTER = {"priority": ["P0", "P1", "P2"]}


class Pager:
    """An https pager integration stand-in on loopback: it keeps each SNS notification it is sent."""

    def __init__(self) -> None:
        received = self.received = []  # type: list[dict[str, Any]]

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/integration/cloudwatch"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class Subscribed:
    """The topics and subscriptions template.yaml wires, in moto, with one of each kind of subscriber."""

    def __init__(self, pager: Pager) -> None:
        self.config = parse_config(CONFIG, source="test.yaml")
        self.moto = StackInMoto.create(name="prod", chat=True)
        self.dynamodb, self.sns, self.stack = self.moto.dynamodb, self.moto.sns, self.moto.stack
        self.sqs = boto3.client("sqs", region_name="us-east-1")
        assert self.stack.chat_topic_arn is not None
        self.inbox = self.moto.subscribe_queue("inbox")
        self.rocm = self.moto.subscribe_queue("rocm-inbox", attributes={"FilterPolicy": json.dumps({"team": ["rocm"]})})
        self.chat = self.moto.subscribe_queue("chatbot", self.stack.chat_topic_arn, {"RawMessageDelivery": "true"})
        self.pager = pager
        self.sns.subscribe(
            TopicArn=self.stack.topic_arn,
            Protocol="http",
            Endpoint=pager.url,
            Attributes={"FilterPolicy": json.dumps(PAGER_FILTER)},
        )
        self.publishes: list[dict[str, Any]] = []
        self.sns.meta.events.register("provide-client-params.sns.Publish", self._record)

    def _record(self, params: dict[str, Any], **_: Any) -> None:
        self.publishes.append(dict(params))

    def tick(self, observation: Snapshot | CollectorFailure) -> EvaluationResult:
        return self.moto.evaluate(observation, self.config)

    def drain(self, url: str) -> list[str]:
        bodies: list[str] = []
        while batch := self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            for message in batch:
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                bodies.append(message["Body"])
        return bodies

    def alerts(self, url: str) -> list[dict[str, Any]]:
        """The alert JSON an SQS (or Lambda) subscriber gets: SNS's `default` body."""
        out = []
        for body in self.drain(url):
            envelope = json.loads(body)
            check_subject(envelope["Subject"])
            alert = json.loads(envelope["Message"])
            ALERT.validate(alert)
            out.append(alert)
        return out

    def chats(self) -> list[dict[str, Any]]:
        out = [json.loads(body) for body in self.drain(self.chat)]
        for chat in out:
            CHATBOT.validate(chat)
        return out

    def pages(self) -> list[tuple[str, dict[str, Any]]]:
        """What the pager endpoint received: the SNS subject and the CloudWatch alarm body."""
        out = []
        for envelope in self.pager.received:
            body = json.loads(envelope["Message"])
            check_pager_envelope(envelope["Subject"], body)
            out.append((envelope["Subject"], body))
        self.pager.received.clear()
        return out

    def emails(self) -> list[tuple[str, str]]:
        """What SNS would e-mail: the subject, and the `email` body of each structured publish to the alert topic."""
        out = []
        for params in self.publishes:
            if params["TopicArn"] == self.stack.topic_arn:
                assert params["MessageStructure"] == "json"
                structure = check_structured(params["Message"])
                # Every page's https body is a valid alarm notification, filtered from this pager or not.
                check_pager_envelope(params["Subject"], json.loads(structure["https"]))
                out.append((params["Subject"], structure["email"]))
        self.publishes.clear()
        return out


@pytest.fixture
def pager() -> Iterator[Pager]:
    server = Pager()
    yield server
    server.close()


@pytest.fixture
def stack(aws: None, pager: Pager) -> Subscribed:
    return Subscribed(pager)


def busy_fleet(minute: float, size: float = 14, age: float = 114 * 60, busy: float = 40) -> Snapshot:
    """The seed incident on a saturated fleet: every runner busy, and jobs queueing all the same."""
    return snapshot(
        minutes(minute),
        with_signals(
            runner_type("linux.2xlarge", size, age),
            total_runners=level(40),
            busy_runners=level(busy),
            idle_runners=level(40 - busy),
            job_arrivals=count(14, 13),
        ),
        runner_type("rocm.gpu", 0, 0, team="rocm"),
    )


def test_one_publish_reaches_every_subscriber_in_its_own_format(stack: Subscribed) -> None:
    result = stack.tick(busy_fleet(0))
    [alert_topic_publish, chat_publish] = stack.publishes
    assert alert_topic_publish["MessageStructure"] == "json"
    assert chat_publish["TopicArn"] == stack.stack.chat_topic_arn and "MessageStructure" not in chat_publish
    [(subject, email)] = stack.emails()
    [alert] = stack.alerts(stack.inbox)
    [(pager_subject, alarm)] = stack.pages()
    [chat] = stack.chats()
    assert result.pages_sent == [alert["notification_id"]]

    # A busy fleet never suppresses a page: the triage explains it.
    [figures] = alert["runner_types"]
    [finding] = figures["triage"]["findings"]
    assert finding["cause"] == "saturated" and finding["detail"] == "40 of 40 runners busy (100%)"
    assert alert["likely_cause"] == (
        "linux.2xlarge: Saturated: 40 of 40 runners busy (100%). First: raise the autoscaler's "
        "runners_maximum_count (or its pool size) for this runner type"
    )

    assert subject == pager_subject == alert_topic_publish["Subject"]
    assert (
        subject == "ALARM: P2 linux.2xlarge, oldest 1h54m, 14 queued: Jobs are queueing (jobs-queueing) team ci-infra"
    )
    assert "Saturated: 40 of 40 runners busy (100%)" in email and alert["silence"]["command"] in email

    assert alarm["AlarmName"].startswith(f"{alert['source']['stack']}: {alert['title']} [")
    assert alarm["NewStateValue"] == "ALARM"
    fields = description_fields(alarm["AlarmDescription"])
    assert (fields["TEAM"], fields["PRIORITY"], fields["RUNBOOK"]) == (
        "ci-infra",
        "P2",
        "https://runbooks.example.com/jobs-queueing",
    )
    assert fields["SUMMARY"] == alert["summary"]

    assert chat["metadata"]["threadId"] == alert["dedup_key"]
    assert "40 of 40 runners busy" in chat["content"]["description"]


def test_pager_and_chat_keep_one_identity_from_first_page_to_resolve(stack: Subscribed) -> None:
    stack.tick(busy_fleet(0))
    stack.tick(busy_fleet(60, size=20, age=174 * 60))  # repeat_interval 1h: a repeat, with new figures
    stack.tick(busy_fleet(61, size=0, age=0, busy=3))
    stack.tick(busy_fleet(66, size=0, age=0, busy=3))  # clear for keep_firing_for: the resolve
    pages = stack.pages()
    chats = stack.chats()
    alerts = stack.alerts(stack.inbox)
    assert [a["page"] for a in alerts] == ["new", "repeat", "resolved"]
    assert [body["NewStateValue"] for _, body in pages] == ["ALARM", "ALARM", "OK"]
    assert [subject.split(":")[0] for subject, _ in pages] == ["ALARM", "ALARM", "OK"]
    assert len({body["AlarmName"] for _, body in pages}) == 1
    assert len({body["AlarmArn"] for _, body in pages}) == 1
    assert len({chat["metadata"]["threadId"] for chat in chats}) == 1 and len(chats) == 3
    assert len({a["title"] for a in alerts}) == 1
    assert pages[1][1]["NewStateReason"] != pages[0][1]["NewStateReason"]  # figures move in the body only
    assert "Recovered" in pages[2][1]["NewStateReason"]


def test_filter_policies_route_by_priority_and_team(stack: Subscribed) -> None:
    stack.tick(snapshot(minutes(0), runner_type("linux.2xlarge", 0, 0), runner_type("rocm.gpu", 3, 400, team="rocm")))
    [rocm_page] = stack.alerts(stack.rocm)
    assert rocm_page["team"] == "rocm" and [r["runner_type"] for r in rocm_page["runner_types"]] == ["rocm.gpu"]
    assert len(stack.pages()) == 1  # P2 reaches the pager
    stack.alerts(stack.inbox)

    def failure(minute: float) -> CollectorFailure:
        return CollectorFailure(minutes(minute), "Sandbox.Timedout", "Task timed out", f"r{minute}")

    for minute in (1, 2, 3):
        stack.tick(failure(minute))
    # The rocm page holds through the failed collection: same team page, no resolve-and-reopen.
    [health] = stack.alerts(stack.inbox)
    assert health["rule"] == "queuewatch-health" and health["priority"] == "P3"
    subject, email = stack.emails()[-1]
    assert subject.startswith("ALARM: P3") and "queuewatch monitor degraded" in email
    assert stack.pages() == []  # P3: not the pager's
    assert stack.alerts(stack.rocm) == []  # not rocm's team


def test_a_silence_pages_no_topic_and_keeps_the_state(stack: Subscribed) -> None:
    put_silence(
        stack.dynamodb,
        "state",
        SilenceRecord("s1", ("linux.*",), None, None, T0, minutes(30), "alice", "AMI rollout, INC-123"),
    )
    result = stack.tick(busy_fleet(0))
    assert result.firing == [InstanceKey("jobs-queueing", "linux.2xlarge")]
    assert stack.publishes == [] and stack.pages() == [] and stack.chats() == []
    assert InstanceKey("jobs-queueing", "linux.2xlarge") in load_state(stack.dynamodb, "state").instances


def test_a_chat_topic_that_refuses_is_retried_without_paging_twice(stack: Subscribed) -> None:
    refusals = [1]

    def refuse_chat(params: dict[str, Any], **_: Any) -> None:
        if params["TopicArn"] == stack.stack.chat_topic_arn and refusals[0]:
            refusals[0] -= 1
            raise ClientError({"Error": {"Code": "Throttling", "Message": "Rate exceeded"}}, "Publish")

    stack.sns.meta.events.register("provide-client-params.sns.Publish", refuse_chat)
    first = stack.tick(busy_fleet(0))
    assert len(first.pages_sent) == 1 and "to the chat topic: " in first.pages_failed[0]
    [group] = load_state(stack.dynamodb, "state").groups.values()
    assert group.outbox is not None and group.outbox.pending == ("chat",)
    assert len(stack.pages()) == 1 and stack.chats() == []
    second = stack.tick(busy_fleet(1))  # after the outbox lease: only the chat topic again
    assert second.pages_retried == [group.outbox.notification_id]
    assert stack.pages() == [] and len(stack.chats()) == 1
    assert load_state(stack.dynamodb, "state").groups[group.key].outbox is None
