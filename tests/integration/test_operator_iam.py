"""The README's one IAM table for operators, held to the calls each command makes against a stack in moto.

Each command runs through `queuewatch` (main) with `--stack`; every AWS call it makes is recorded from
botocore's every client. Each call must be in the command's row (or the `--stack` row), and each action a row
names must be called by some run of that command: the table names nothing the code does not need.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.client import BaseClient
from support import StackInMoto, minutes, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.config.load import parse_config
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_slo_table
from queuewatch_cli.devkit.seed import put_finished_job
from queuewatch_cli.main import main

REPO = Path(__file__).resolve().parents[2]
STACK = "queuewatch"
ROW = re.compile(r"^\| (?P<command>[^|]+) \| (?P<actions>[^|]+) \|$", re.MULTILINE)
ACTION = re.compile(r"`([a-z0-9]+:[A-Za-z]+)`")
FLEET = """\
version: 1
defaults: {rule: {team: ci-infra}}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds"}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m, queue_size: 0}}
"""


def iam_table() -> dict[str, set[str]]:
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("The IAM an operator needs") :].split("\n\n", 2)[1]
    rows: dict[str, set[str]] = {}
    for row in ROW.finditer(table):
        actions = set(ACTION.findall(row["actions"]))
        cell = row["command"].strip()
        named = re.findall(r"`([^`]+)`", cell)
        for command in named if re.fullmatch(r"(`[^`]+`(, )?)+", cell) else [cell]:
            rows[command] = actions
    return rows


@pytest.fixture
def calls(aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    monkeypatch.delenv("QUEUEWATCH_STACK", raising=False)
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    stack = StackInMoto.create()  # the state table, "state", with one alert firing: status reads its figures
    for minute in (0, 1, 2):
        stack.evaluate(snapshot(minutes(minute), runner_type("linux-x64", 5, 3600)), parse_config(FLEET))
    create_jobs_table(dynamodb, "jobs")
    now = datetime.now(UTC)
    for job in range(3):  # capacity has jobs to size
        put_finished_job(
            dynamodb, "jobs", "linux-x64", job, now - timedelta(hours=1, minutes=job), run=timedelta(minutes=5), now=now
        )
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="gh-ci-linux-x64-queued-builds")
    outputs = {
        "StateTableName": "state",
        "JobsTableName": "jobs",
        "SloTableName": "slos",
        "MetricsNamespace": "Queuewatch",
    }
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName=STACK, TemplateBody=json.dumps(template)
    )
    made: list[str] = []
    make_api_call = BaseClient._make_api_call  # type: ignore[attr-defined]

    def recorded(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        made.append(f"{client.meta.service_model.service_id.hyphenize()}:{operation}")
        return make_api_call(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", recorded)  # every client, whatever session made it
    return made


def test_each_command_calls_only_what_its_row_names_and_every_action_named_is_called(
    calls: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = iam_table()
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    since = (datetime.now(UTC) - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    with_slos = tmp_path / "slos.yaml"
    with_slos.write_text(
        FLEET + "slos:\n  - {name: linux-fast, match: ['linux-*'], objective: 99%, queue_time_under: 2m}\n"
    )
    create_slo_table(boto3.client("dynamodb", region_name="us-east-1"), "slos")
    slo = ["slo", "--config", str(with_slos), "--slo-table", "slos", "--jobs-table", "jobs"]
    runs: dict[str, list[list[str]]] = {
        "status": [["status", "--stack", STACK]],
        "history": [["history", "--stack", STACK], ["history", "--stack", STACK, "--alert", "linux-x64"]],
        "silence add": [["silence", "add", "--stack", STACK, "--match", "linux*", "--for", "1h", "--comment", "x"]],
        "silence list": [["silence", "list", "--stack", STACK]],
        "silence extend": [["silence", "extend", "--stack", STACK, "SILENCE", "--by", "1h"]],
        "silence expire": [["silence", "expire", "--stack", STACK, "SILENCE"]],
        "backtest": [
            ["backtest", "--stack", STACK, "--config", str(fleet), "--from", since, "--quiet"],
            [
                "backtest",
                "--stack",
                STACK,
                "--config",
                str(fleet),
                "--from",
                since,
                "--quiet",
                "--source",
                "cloudwatch",
            ],
        ],
        "capacity": [["capacity", "--stack", STACK, "--from", "1d"]],
        "check-config --jobs-table": [
            ["check-config", str(with_slos), "--jobs-table", "jobs", "--region", "us-east-1"]
        ],
        "slo": [
            [*slo, "--region", "us-east-1"],
            [*slo, "--region", "us-east-1", "--plot", str(tmp_path / "slo.png"), "--state-table", "state"],
            ["slo", "--stack", STACK, "--config", str(with_slos), "--plot", str(tmp_path / "by-stack.png")],
        ],
    }
    for command, argvs in runs.items():
        called: set[str] = set()
        for given in argvs:
            argv = given
            if "SILENCE" in given:
                [silence] = load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").silences
                argv = [silence.silence_id if arg == "SILENCE" else arg for arg in given]
            calls.clear()
            code = main(argv)
            assert code == 0, (argv, capsys.readouterr())
            called |= set(calls)
        allowed = table[command] | table["every command with `--stack`"]
        assert called <= allowed, f"{command} calls {sorted(called - allowed)}, which the README's row does not name"
        assert table[command] <= called, f"the README names {sorted(table[command] - called)} for {command}, unused"


def test_the_table_covers_every_operator_command_and_the_docs_hold_no_second_one() -> None:
    table = iam_table()
    assert {"status", "history", "silence add", "silence list", "silence extend", "silence expire"} <= set(table)
    assert {"backtest", "capacity", "track backfill", "slo", "check-config --jobs-table"} <= set(table)
    for doc in (REPO / "docs").glob("*.md"):
        assert "| `silence add` |" not in doc.read_text(), f"{doc.name} holds a second IAM table"
