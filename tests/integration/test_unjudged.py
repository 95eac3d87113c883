"""Nothing unjudged at run time: a discovered runner type no rule selects, and a mistyped rule glob that
selects none of the discovered runner types it was meant for, are on the monitor page and in `status`."""

from __future__ import annotations

import json
from typing import Any

import boto3
from support import StackInMoto, minutes, runner_type, snapshot

from queuewatch.config.load import check_config_bytes, parse_config
from queuewatch_cli.commands.status.status import show_status

FLEET = """\
version: 1
defaults: {rule: {team: ci-infra}}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds"}
monitor: {for: 2m}
rules:
  - {name: linux-queueing, match: ["linux-*"], thresholds: {queue_time: 5m}}
  - {name: gpu-queueing, match: ["*-nvida-gpu-*"], thresholds: {queue_time: 30m}, priority: P1}
"""
DISCOVERED = ("linux-x64", "linux-arm64", "ci-nvidia-gpu-a100")


def pages_of(inbox: str) -> list[dict[str, Any]]:
    messages = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox, MaxNumberOfMessages=10)
    return [
        json.loads(json.loads(m["Body"])["Message"]) | {"subject": json.loads(m["Body"])["Subject"]}
        for m in messages.get("Messages", [])
    ]


def test_check_config_cannot_know_the_discovered_names_so_the_config_passes() -> None:
    assert check_config_bytes(FLEET.encode(), "fleet.yaml").config.discovery  # no error: the names come later


def test_a_discovered_runner_type_no_rule_selects_pages_the_monitor_with_the_glob_that_nearly_did(
    aws: None,
) -> None:
    config = parse_config(FLEET, source="fleet.yaml")
    stack = StackInMoto.create()
    inbox = stack.subscribe_queue("inbox")
    pages: list[dict[str, Any]] = []
    for minute in (0, 1, 2):
        stack.evaluate(snapshot(minutes(minute), *(runner_type(name) for name in DISCOVERED)), config)
        pages += pages_of(inbox)
    [page] = pages
    assert page["rule"] == "queuewatch-health" and page["subject"].startswith("ALARM: P3 runner types no rule judges")
    [row] = page["runner_types"]
    assert row["runner_type"] == "rules:unjudged" and row["breached"] == ["unjudged"]
    finding = row["missing"]["rules"]
    assert finding.startswith("1 runner type no rule selects: ci-nvidia-gpu-a100")
    assert "rule 'gpu-queueing': '*-nvida-gpu-*' selects no watched runner type; did you mean '*-nvidia-gpu-*'?" in (
        finding
    )
    text = show_status(boto3.client("dynamodb", region_name="us-east-1"), "state", minutes(3), as_json=False)
    degraded = text.split("degraded signals (the queuewatch-health rule's instances): ")[1]
    assert degraded.startswith(
        "1\n  watched runner types no rule judges (the monitor page lists them): firing since 2026-11-21 18:02 UTC\n"
        "    rules: 1 runner type no rule selects: ci-nvidia-gpu-a100"
    )


def test_every_discovered_runner_type_judged_and_no_near_miss_is_quiet(aws: None) -> None:
    config = parse_config(FLEET.replace("*-nvida-gpu-*", "*-nvidia-gpu-*"), source="fleet.yaml")
    stack = StackInMoto.create()
    for minute in (0, 1, 2, 3):
        result = stack.evaluate(snapshot(minutes(minute), *(runner_type(name) for name in DISCOVERED)), config)
        assert not [key for key in result.firing if key.runner_type == "rules:unjudged"]
