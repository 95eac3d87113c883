"""`queuewatch history`: the evaluator logs each publish's outcome as it sends, once, and the command reads
that log back over a window, filtered."""

from __future__ import annotations

import argparse
import json
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from faults import inject
from support import T0, StackInMoto, minutes, runner_type, snapshot

from queuewatch.adapters.state_table.sent_log import read_entries
from queuewatch.config.load import parse_config
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.history.history import run_history
from queuewatch_cli.main import main

CONFIG = parse_config(
    """
version: 1
defaults:
  rule: {team: ci-infra, keep_firing_for: 0s}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}, team: rocm}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2, group_by: team}
""",
    source="test.yaml",
)


def tick(minute: float, *queueing: str) -> Snapshot:
    return snapshot(
        minutes(minute),
        *(runner_type(name, 14, 114 * 60) if name in queueing else runner_type(name) for name in ("linux.2xlarge",)),
        runner_type("rocm.gpu", 3, 600, team="rocm")
        if "rocm.gpu" in queueing
        else runner_type("rocm.gpu", team="rocm"),
    )


@pytest.fixture
def stack(aws: None) -> StackInMoto:
    return StackInMoto.create()


def history(*flags: str, now_minute: float = 30) -> list[str]:
    lines: list[str] = []
    parser_args = {
        "stack": None,
        "table": "state",
        "region": "us-east-1",
        "since": "1h",
        "until": "now",
        "rule": None,
        "runner_type": None,
        "team": None,
        "json": False,
    }
    for flag, value in zip(flags[::2], flags[1::2], strict=True):
        parser_args[flag] = value
    run_history(argparse.Namespace(**parser_args), now=minutes(now_minute), out=lines.append)
    return lines


def test_pages_and_resolves_are_logged_with_rule_runner_types_team_and_priority(stack: StackInMoto) -> None:
    stack.evaluate(tick(0, "linux.2xlarge", "rocm.gpu"), CONFIG)
    stack.evaluate(tick(1, "rocm.gpu"), CONFIG)  # linux.2xlarge recovers: ci-infra's page resolves

    lines = history()

    assert lines[0] == "queuewatch history of queuewatch@us-east-1, 2026-11-21 17:30 UTC to 2026-11-21 18:30 UTC:"
    assert len(lines) == 4
    assert lines[1].startswith("  2026-11-21 18:00 UTC  page     P2  jobs-queueing / ci-infra  team=ci-infra  to alert")
    assert lines[1].split("to alert: ")[1].startswith("sent  [linux.2xlarge]")
    assert "  page     P2  jobs-queueing / rocm  team=rocm  to alert: sent  [rocm.gpu]" in lines[2]
    assert lines[3].startswith("  2026-11-21 18:01 UTC  resolve  P2  jobs-queueing / ci-infra  team=ci-infra")
    assert history("team", "rocm")[1:] == [lines[2]]
    assert history("runner_type", "linux.*")[1:] == [lines[1], lines[3]]
    assert history("rule", "other")[1:] == ["  nothing sent"]
    [first, *_] = [json.loads(line) for line in history("json", True)]  # type: ignore[arg-type]
    assert (first["kind"], first["outcome"], first["runner_types"], first["priority"]) == (
        "page",
        "sent",
        ["linux.2xlarge"],
        "P2",
    )
    assert history("since", "2026-11-21T18:01")[1:] == [lines[3]]


def test_a_refused_publish_is_logged_with_its_reason_then_its_retry(stack: StackInMoto) -> None:
    inject(stack.sns, "Publish", "5xx", only_call=0)
    result = stack.evaluate(tick(0, "linux.2xlarge"), CONFIG)
    assert result.pages_failed
    stack.evaluate(tick(1, "linux.2xlarge"), CONFIG)  # the outbox's lease is over: published now

    lines = history()

    assert "page     P2  jobs-queueing / ci-infra  team=ci-infra  to alert: FAILED (" in lines[1]
    assert lines[1].startswith("  2026-11-21 18:00 UTC")
    assert lines[2].startswith("  2026-11-21 18:01 UTC  page") and "to alert: sent" in lines[2]
    assert len(lines) == 3


def test_a_page_published_twice_after_a_lost_clearing_write_is_logged_once(stack: StackInMoto) -> None:
    def clearing(params: Any) -> bool:
        item = params["Item"]
        return bool(item["sk"]["S"].startswith("group#") and "outbox" not in item)

    inject(stack.dynamodb, "PutItem", "5xx", when=clearing, only_call=0)
    with pytest.raises(ClientError):  # the evaluation fails after SNS accepted the page; the outbox keeps it
        stack.evaluate(tick(0, "linux.2xlarge"), CONFIG, memory=EvaluatorMemory())
    sent = stack.sns.meta.events  # the next tick runs in a new container: it remembers nothing
    publishes: list[str] = []
    sent.register("before-call.sns.Publish", lambda **_: publishes.append("publish"))
    result = stack.evaluate(tick(1, "linux.2xlarge"), CONFIG, memory=EvaluatorMemory())
    assert publishes == ["publish"] and result.pages_retried  # SNS got the page a second time

    entries = read_entries(boto3.client("dynamodb", region_name="us-east-1"), "state", T0, minutes(5))

    assert [(e.kind, e.outcome, e.notification_id.endswith("#1")) for e in entries] == [("new", "sent", True)]


def test_the_command_reads_the_stacks_log(stack: StackInMoto, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--table", "state", "--region", "us-east-1", "--since", "30d"]) == 0
    assert capsys.readouterr().out.endswith("  nothing sent\n")
    assert main(["history", "--table", "state", "--region", "us-east-1", "--since", "31d"]) == 2
    assert "--since: the log keeps 30 days" in capsys.readouterr().err
