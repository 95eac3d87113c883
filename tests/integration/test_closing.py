"""What closes a page: a resolve reaches whoever got the page, worded as that page was, whatever changed since."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from support import StackInMoto, minutes, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import put_silence
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult
from queuewatch.model.snapshot import CollectorFailure, Snapshot

RULES = """
version: 1
defaults:
  rule:
    team: ci-infra
    runbook_url: https://runbooks.example.com/jobs-queueing
    keep_firing_for: 0s
    repeat_interval: 1h
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}, team: rocm}
rules:
"""
QUEUEING = (
    RULES
    + """
  - name: jobs-queueing
    thresholds: {queue_time: 1m, queue_size: 0}
    priority: P1
    group_by: runner_type
monitor:
  for: 10m
  priority: P3
"""
)
RENAMED = QUEUEING.replace("jobs-queueing", "jobs-waiting").replace("runbooks.example.com", "wiki.example.com")
REMOVED = (
    RULES
    + """
  - name: rocm-queueing
    match: ['rocm.*', 'linux.*']
    thresholds: {queue_size: 100}
    priority: P3
    team: rocm
"""
)
PAGER_FILTER = {"priority": ["P0", "P1", "P2"]}  # the default pager filter (template.yaml)


class Pagers:
    """A state table and the alert topic with a P0-P2 filtered pager, as the stack deploys them."""

    def __init__(self, config: str) -> None:
        self.config = parse_config(config, source="test.yaml")
        self.moto = StackInMoto.create(name="prod")
        self.sqs = boto3.client("sqs", region_name="us-east-1")
        self.pager = self.moto.subscribe_queue("pager", attributes={"FilterPolicy": json.dumps(PAGER_FILTER)})

    def tick(self, observation: Snapshot | CollectorFailure) -> EvaluationResult:
        return self.moto.evaluate(observation, self.config)

    def paged(self) -> list[dict[str, Any]]:
        """What the filtered pager received since the last call."""
        out = []
        while batch := self.sqs.receive_message(QueueUrl=self.pager, MaxNumberOfMessages=10).get("Messages", []):
            for message in batch:
                self.sqs.delete_message(QueueUrl=self.pager, ReceiptHandle=message["ReceiptHandle"])
                out.append(json.loads(json.loads(message["Body"])["Message"]))
        return out


def fleet(at: float, linux: float = 0, rocm: float = 0) -> Snapshot:
    return snapshot(
        minutes(at),
        runner_type("linux.2xlarge", linux, linux * 60),
        runner_type("rocm.gpu", rocm, rocm * 60, team="rocm"),
    )


@pytest.mark.parametrize("change", ["removed", "renamed"])
def test_a_rule_removed_or_renamed_while_it_fires_resolves_as_it_paged(aws: None, change: str) -> None:
    pagers = Pagers(QUEUEING)
    pagers.tick(fleet(0, linux=14))
    [page] = pagers.paged()
    assert (page["status"], page["priority"], page["rule"]) == ("firing", "P1", "jobs-queueing")
    # The config changes under the firing alert: the rule goes, or comes back under another name.
    pagers.config = parse_config(REMOVED if change == "removed" else RENAMED, source="test.yaml")
    pagers.tick(fleet(1, linux=0))
    [resolve] = [p for p in pagers.paged() if p["rule"] == "jobs-queueing"]
    assert resolve["status"] == "resolved" and resolve["dedup_key"] == page["dedup_key"]
    for field in ("priority", "team", "title", "group_by", "runbook_url"):
        assert resolve[field] == page[field], field


def test_a_team_silence_holds_on_a_tick_whose_collection_failed(aws: None) -> None:
    pagers = Pagers(QUEUEING)
    put_silence(
        pagers.moto.dynamodb,
        "state",
        SilenceRecord("s1", (), None, "rocm", minutes(-1), minutes(60), "oncall", "ROCm fleet maintenance"),
    )
    pagers.tick(fleet(0, rocm=5))
    assert pagers.paged() == []  # rocm's alert fires, silenced by team
    # The collector fails: rocm.gpu is not in this tick's observation, so its team is not observed.
    for minute in (1, 2, 3):
        pagers.tick(CollectorFailure(at=minutes(minute), error_type="Timeout", error_message="x", request_id="r"))
        assert [p for p in pagers.paged() if p["rule"] == "jobs-queueing"] == []
    pagers.tick(fleet(4, rocm=5))
    assert pagers.paged() == []


def test_an_alert_silenced_after_it_paged_still_resolves_to_whoever_got_the_page(aws: None) -> None:
    pagers = Pagers(QUEUEING)
    pagers.tick(fleet(0, linux=14))
    [page] = pagers.paged()
    put_silence(
        pagers.moto.dynamodb,
        "state",
        SilenceRecord("s1", ("linux.*",), None, None, minutes(1), minutes(60), "oncall", "known, AMI rollout"),
    )
    pagers.tick(fleet(2, linux=14))
    assert pagers.paged() == []  # silenced: no repeat, no update
    pagers.tick(fleet(3, linux=0))
    [resolve] = pagers.paged()
    assert (resolve["status"], resolve["dedup_key"], resolve["priority"]) == ("resolved", page["dedup_key"], "P1")


ALL_TEAMS = QUEUEING.replace("group_by: runner_type", "group_by: all")


def test_a_resolve_reaches_every_team_its_page_reached_after_the_config_moves_them(aws: None) -> None:
    pagers = Pagers(ALL_TEAMS)
    rocm_only = pagers.moto.subscribe_queue("rocm-pager", attributes={"FilterPolicy": json.dumps({"teams": ["rocm"]})})
    pagers.tick(fleet(0, linux=14, rocm=5))
    [page] = pagers.paged()
    assert (page["team"], page["teams"]) == ("ci-infra", ["ci-infra", "rocm"])
    # Mid-incident the config moves both: the rule to another team, and rocm.gpu to a team of its own.
    moved = ALL_TEAMS.replace("    team: ci-infra", "    team: platform").replace("team: rocm}", "team: gpu-platform}")
    pagers.config = parse_config(moved, source="test.yaml")
    pagers.tick(
        snapshot(
            minutes(1),
            runner_type("linux.2xlarge", 0, 0),
            runner_type("rocm.gpu", 0, 0, team="gpu-platform"),
        )
    )
    [resolve] = pagers.paged()
    assert (resolve["status"], resolve["dedup_key"]) == ("resolved", page["dedup_key"])
    assert resolve["team"] == "ci-infra"
    assert {"ci-infra", "rocm"} <= set(resolve["teams"])  # whoever routed the page by team gets its resolve
    got = []
    while batch := pagers.sqs.receive_message(QueueUrl=rocm_only, MaxNumberOfMessages=10).get("Messages", []):
        got += [json.loads(json.loads(m["Body"])["Message"])["status"] for m in batch]
        for message in batch:
            pagers.sqs.delete_message(QueueUrl=rocm_only, ReceiptHandle=message["ReceiptHandle"])
    assert got == ["firing", "resolved"]
