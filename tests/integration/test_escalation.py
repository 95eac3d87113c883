"""One problem, one incident: a higher-priority rule's page holds back a lower one's on the same runner type,
in the real evaluator against moto DynamoDB and SNS."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from support import StackInMoto, minutes, race, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import put_silence
from queuewatch.adapters.state_table.transition_log import read_transitions
from queuewatch.alerting.alert import dedup_key
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.model.snapshot import Snapshot

CONFIG = """
version: 1
defaults:
  rule: {team: ci-infra, keep_firing_for: 0s, repeat_interval: 4h}
runner_types:
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds, region: us-west-2}}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 5m}
    priority: P2
  - name: jobs-stuck
    thresholds: {queue_time: 30m}
    priority: P1
    group_by: runner_type
    title: Jobs stuck in the queue
"""
RT = "linux-x64@us-west-2"


class Pager:
    """The stack in moto, and every body SNS accepted, per protocol."""

    def __init__(self, config_text: str = CONFIG) -> None:
        self.config: Config = parse_config(config_text, source="test.yaml")
        self.moto = StackInMoto.create()
        self.sent: list[dict[str, Any]] = []
        self.moto.sns.meta.events.register("before-parameter-build.sns.Publish", self._capture)

    def _capture(self, params: dict[str, Any], **_: Any) -> None:
        bodies = json.loads(params["Message"])
        self.sent.append({**bodies, "alert": json.loads(bodies["default"]), "https": json.loads(bodies["https"])})

    def tick(self, observation: Snapshot, config: Config | None = None) -> None:
        self.moto.evaluate(observation, config or self.config)

    def drain(self) -> list[dict[str, Any]]:
        out, self.sent = self.sent, []
        return out

    def key(self, rule: str, group: str) -> str:
        return dedup_key(self.moto.stack.name, rule, group, self.moto.stack.scope)


def queue(at: float, waited_minutes: float) -> Snapshot:
    return snapshot(minutes(at), runner_type(RT, 40, waited_minutes * 60, region="us-west-2"))


@pytest.fixture
def pager(aws: None) -> Pager:
    return Pager()


def test_both_crossing_at_once_page_once_at_the_higher_priority(pager: Pager) -> None:
    pager.tick(queue(0, 45))
    alerts = [sent["alert"] for sent in pager.drain()]
    assert [(a["priority"], a["rule"], a["status"]) for a in alerts] == [("P1", "jobs-stuck", "firing")]
    assert alerts[0]["title"] == f"Jobs stuck in the queue on {RT}"


def test_an_escalation_closes_the_lower_page_as_superseded_after_raising_the_higher(pager: Pager) -> None:
    pager.tick(queue(0, 10))
    (first,) = pager.drain()
    assert first["alert"]["priority"] == "P2"
    # Mid-incident, the rules' team and the P2 rule's wording change: its close still goes out as its page went.
    changed = parse_config(
        CONFIG.replace("priority: P2", "priority: P2\n    title: Renamed").replace(
            "team: ci-infra", "team: other-team"
        ),
        source="t.yaml",
    )
    pager.tick(queue(1, 45), changed)
    raised, closed = pager.drain()
    p1, p2 = pager.key("jobs-stuck", RT), pager.key("jobs-queueing", "all")
    assert (raised["alert"]["priority"], raised["alert"]["status"], raised["alert"]["dedup_key"]) == (
        "P1",
        "firing",
        p1,
    )
    assert raised["alert"]["supersedes"] == [p2]
    assert raised["alert"]["summary"].startswith("Escalated from P2")
    alert = closed["alert"]
    assert (alert["status"], alert["dedup_key"], alert["superseded_by"]) == ("resolved", p2, [p1])
    assert (alert["priority"], alert["team"], alert["title"]) == ("P2", "ci-infra", first["alert"]["title"])
    assert alert["summary"].startswith(f"Superseded by P1 'Jobs stuck in the queue on {RT}'")
    assert closed["https"]["NewStateValue"] == "OK"
    assert closed["https"]["AlarmName"] == first["https"]["AlarmName"]
    assert closed["https"]["NewStateReason"].startswith("Superseded by P1 ")
    assert "superseded" in closed["email"].splitlines()[0] or "Superseded" in closed["email"]
    # Still escalated: nothing more; the lower page stays closed while the higher one holds it.
    pager.tick(queue(2, 46), changed)
    assert pager.drain() == []


def test_when_the_higher_page_recovers_the_lower_one_pages_again(pager: Pager) -> None:
    pager.tick(queue(0, 10))
    pager.tick(queue(1, 45))
    pager.drain()
    pager.tick(queue(2, 8))  # below 30m, still above 5m
    pages = [(s["alert"]["rule"], s["alert"]["status"]) for s in pager.drain()]
    assert sorted(pages) == [("jobs-queueing", "firing"), ("jobs-stuck", "resolved")]
    # Once: the lower page is back, and the ticks after it, still breaching, page nothing more until it ends.
    pager.tick(queue(3, 9))
    pager.tick(queue(4, 9))
    assert pager.drain() == []
    pager.tick(queue(5, 0))
    assert [(s["alert"]["rule"], s["alert"]["status"]) for s in pager.drain()] == [("jobs-queueing", "resolved")]


def test_an_escalation_retried_or_raced_pages_once(pager: Pager) -> None:
    pager.tick(queue(0, 10))
    pager.drain()
    escalation = queue(1, 45)
    race(4, lambda: lambda: pager.tick(escalation))
    pager.tick(escalation)  # Lambda's retry of the same tick
    pages = [(s["alert"]["rule"], s["alert"]["status"]) for s in pager.drain()]
    assert sorted(pages) == [("jobs-queueing", "resolved"), ("jobs-stuck", "firing")]


def test_a_silenced_higher_page_does_not_hold_back_the_lower_one(pager: Pager) -> None:
    silence = SilenceRecord(
        silence_id="s1",
        matchers=(RT,),
        rule="jobs-stuck",
        team=None,
        starts_at=minutes(-1),
        ends_at=minutes(0) + timedelta(hours=1),
        author="oncall",
        comment="the P1 rule is being tuned",
    )
    put_silence(pager.moto.dynamodb, pager.moto.stack.table, silence)
    pager.tick(queue(0, 45))
    assert [s["alert"]["rule"] for s in pager.drain()] == ["jobs-queueing"]


def test_equal_priorities_both_page(aws: None) -> None:
    # (for one team check-config refuses it: an escalation at one priority; another team's may be meant)
    pager = Pager(CONFIG.replace("priority: P1", "priority: P2\n    team: gpu-infra"))
    pager.tick(queue(0, 45))
    assert sorted(s["alert"]["rule"] for s in pager.drain()) == ["jobs-queueing", "jobs-stuck"]


def test_the_higher_rule_removed_mid_escalation_resolves_and_the_lower_pages_again(pager: Pager) -> None:
    pager.tick(queue(0, 10))
    pager.tick(queue(1, 45))
    pager.drain()
    without_p1 = parse_config(CONFIG.partition("  - name: jobs-stuck")[0], source="t.yaml")
    pager.tick(queue(2, 46), without_p1)
    sent = [(s["alert"]["rule"], s["alert"]["status"], s["alert"]["priority"]) for s in pager.drain()]
    assert sorted(sent) == [("jobs-queueing", "firing", "P2"), ("jobs-stuck", "resolved", "P1")]
    # The removed rule judged nothing; its alert's history still has the queue's figures at its resolve.
    resolved = read_transitions(pager.moto.dynamodb, pager.moto.stack.table, "jobs-stuck", RT)[-1]
    assert (resolved.status, resolved.queue_size, resolved.queue_time) == ("resolved", 40, 46 * 60)
