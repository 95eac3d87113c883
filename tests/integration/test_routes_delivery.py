"""Routes through SNS: the subscriptions `make build` writes, each stood in for by an SQS queue with the same
filter policy (moto's SNS applies filter policies), get exactly what `queuewatch routes test` answers; through
the evaluate stage, a team's page and its resolve reach that team's pager alone, and a ticket goes where routes
name `ticket` and nowhere else (in a stack with a chat topic and in one without)."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from support import StackInMoto, minutes, runner_type, snapshot

from queuewatch.adapters.sns import publish
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.model.rules import ALERT_KINDS, Priority
from queuewatch.model.snapshot import SloReading, SloWindowCount, Snapshot
from queuewatch_cli.commands.build.subscriptions import subscriptions

CONFIG = """
version: 1
defaults: {rule: {team: ci-infra, keep_firing_for: 0s}}
runner_types:
  - {name: linux.2xlarge, queue: {name: ci-queued-builds}}
  - {name: linux.gpu, queue: {name: gpu-queued-builds}, team: gpu-infra}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 10m}, group_by: team}
  - {name: jobs-stuck, thresholds: {queue_time: 1h}, priority: P1, group_by: team}
slos:
  - {name: gpu-fast, match: ["linux.gpu"], objective: 99%, queue_time_under: 2m, team: gpu-infra}
receivers:
  - {name: ci-pager, pager: "https://pager.example.com/ci"}
  - {name: gpu-pager, pager: "https://pager.example.com/gpu"}
  - {name: mail, email: oncall@example.com}
  - {name: chat, chat: true}
routes:
  - {receiver: ci-pager, teams: [ci-infra], priority: P2}
  - {receiver: gpu-pager, teams: [gpu-infra], priority: P1}
  - {receiver: mail, priority: P2, kinds: [page, monitor]}
  - {receiver: mail, kinds: [ticket]}
  - {receiver: chat, kinds: [page, ticket, monitor]}
"""


class Receivers:
    """The stack's topics in moto, and a queue per receiver subscribed as the build subscribes it."""

    def __init__(self, config: Config, chat: bool = True) -> None:
        self.moto = StackInMoto.create(chat=chat)
        self.config = config
        self.sqs = boto3.client("sqs", region_name="us-east-1")
        self.queues: dict[str, str] = {}
        for name, resource in subscriptions(config).items():
            if name.endswith("HeartbeatSubscription"):
                continue
            receiver = name.removeprefix("Receiver").removesuffix("Subscription")
            policy = json.dumps(resource["Properties"]["FilterPolicy"])
            self.queues[receiver] = self.moto.subscribe_queue(receiver, attributes={"FilterPolicy": policy})
        if chat:
            self.queues["Chat"] = self.moto.subscribe_queue("chat", topic_arn=self.moto.stack.chat_topic_arn)

    def drain(self) -> dict[str, list[dict[str, Any]]]:
        """Each receiver's messages since the last drain (the envelope's attributes and its message)."""
        got: dict[str, list[dict[str, Any]]] = {}
        for receiver, url in self.queues.items():
            messages = []
            while batch := self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
                for message in batch:
                    self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                    envelope = json.loads(message["Body"])
                    attributes = {k: v["Value"] for k, v in envelope.get("MessageAttributes", {}).items()}
                    messages.append({"attributes": attributes, "subject": envelope.get("Subject", "")})
            got[receiver] = messages
        return got

    def reached(self) -> set[str]:
        return {receiver for receiver, messages in self.drain().items() if messages}


@pytest.fixture
def receivers(aws: None) -> Receivers:
    return Receivers(parse_config(CONFIG))


CAMEL = {"ci-pager": "CiPager", "gpu-pager": "GpuPager", "mail": "Mail", "chat": "Chat"}


@pytest.mark.parametrize("status", ["firing", "resolved"])
def test_sns_delivers_exactly_what_routes_test_answers(receivers: Receivers, status: str) -> None:
    routing = receivers.config.routing
    for team in ("ci-infra", "gpu-infra"):
        for priority in Priority:
            for kind in ALERT_KINDS:
                attributes: dict[str, str | list[str]] = {
                    "status": status, "kind": kind, "priority": priority.value, "severity": priority.severity,
                    "team": team, "teams": [team], "rule": "jobs-queueing", "runner_type": "multiple",
                }  # fmt: skip
                topic = receivers.moto.stack.topic_arn
                publish(receivers.moto.sns, topic, subject="s", message="m", attributes=attributes)
                answered = {CAMEL[r.name] for r in routing.destinations(attributes) if not r.chat}
                assert receivers.reached() - {"Chat"} == answered, (team, priority, kind, status)


def queueing(minute: float, gpu_wait: float, ci_wait: float = 0) -> Snapshot:
    return snapshot(
        minutes(minute),
        runner_type("linux.2xlarge", 3 if ci_wait else 0, ci_wait),
        runner_type("linux.gpu", 3 if gpu_wait else 0, gpu_wait, team="gpu-infra"),
    )


def test_a_teams_page_and_its_resolve_reach_its_pager_alone(receivers: Receivers) -> None:
    receivers.moto.evaluate(queueing(0, 7200), receivers.config)  # P1 jobs-stuck (P2 held back) on the GPU fleet
    got = receivers.drain()
    assert [m["attributes"]["priority"] for m in got["GpuPager"]] == ["P1"]
    assert got["CiPager"] == [] and len(got["Mail"]) == 1 and len(got["Chat"]) == 1
    receivers.moto.evaluate(queueing(1, 0), receivers.config)
    got = receivers.drain()
    assert [(m["attributes"]["status"], m["attributes"]["priority"]) for m in got["GpuPager"]] == [("resolved", "P1")]
    assert got["CiPager"] == [] and len(got["Mail"]) == 1 and len(got["Chat"]) == 1


def test_an_escalations_resolves_reach_every_receiver_its_pages_reached(receivers: Receivers) -> None:
    """A P2 page (mail, chat; under the GPU pager's P1 floor), then the P1 (its pager too), then the queue clears:
    each receiver gets a resolve for every page it got, at that page's priority."""
    receivers.moto.evaluate(queueing(0, 900), receivers.config)
    first = receivers.drain()
    receivers.moto.evaluate(queueing(1, 3700), receivers.config)
    second = receivers.drain()
    receivers.moto.evaluate(queueing(2, 0), receivers.config)
    third = receivers.drain()
    for receiver in ("GpuPager", "Mail", "Chat"):
        paged = [m["attributes"]["priority"] for m in first[receiver] + second[receiver] if "ALARM" in m["subject"]]
        closed = [
            m["attributes"]["priority"] for m in second[receiver] + third[receiver] if m["subject"].startswith("OK")
        ]
        assert sorted(paged) == sorted(closed), receiver
    assert first["GpuPager"] == [] and [m["attributes"]["priority"] for m in second["GpuPager"]] == ["P1"]


TICKET = {259200: 20, 21600: 20}  # 2% late over 3d and 6h: a ticket's burn rate, under every page's


def with_ticket(minute: float) -> Snapshot:
    spans = (300, 1800, 3600, 21600, 259200)
    windows = [SloWindowCount(seconds=s, good=1000 - TICKET.get(s, 0), bad=TICKET.get(s, 0)) for s in spans]
    return queueing(minute, 0).model_copy(update={"slos": [SloReading(name="gpu-fast", windows=windows)]})


@pytest.mark.parametrize("chat", [True, False], ids=["chat-topic", "no-chat-topic"])
def test_a_ticket_goes_where_routes_name_ticket_and_nowhere_else(aws: None, chat: bool) -> None:
    """One rule in every deploy: e-mail (its route names ticket) and chat get it; no pager does, whether or not
    the stack has a chat topic."""
    stack = Receivers(parse_config(CONFIG), chat=chat)
    stack.moto.evaluate(with_ticket(0), stack.config)
    got = stack.drain()
    assert [m["attributes"]["kind"] for m in got["Mail"]] == ["ticket"]
    assert got["GpuPager"] == [] and got["CiPager"] == []
    assert len(got.get("Chat", [])) == (1 if chat else 0)


def test_without_a_route_naming_ticket_a_ticket_never_reaches_the_alert_topic(aws: None) -> None:
    """Chat alone takes tickets: an unfiltered subscription of one's own on the alert topic gets none."""
    config = parse_config(CONFIG.replace("  - {receiver: mail, kinds: [ticket]}\n", ""))
    stack = Receivers(config)
    unfiltered = stack.moto.subscribe_queue("own")
    stack.moto.evaluate(with_ticket(0), config)
    assert len(stack.drain()["Chat"]) == 1
    assert stack.sqs.receive_message(QueueUrl=unfiltered).get("Messages", []) == []
