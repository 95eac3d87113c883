"""One dialect across the commands, each rule held by a table: every command finds its tables from --stack (slo
included), the page's own silence command names the stack, a destructive command needs an unambiguous id of at
least 8 characters, a cancelled silence reads as cancelled, and an unknown alert is said to be unknown."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest

from queuewatch.adapters.slo_table.counters import Contribution, count_job
from queuewatch.adapters.state_table.alerts import load_state, put_silence
from queuewatch.adapters.state_table.known_names import put_known
from queuewatch.alerting.alert import silence_for
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.known import KnownNames
from queuewatch.model.rules import HEALTH_RULE
from queuewatch_cli.common.stacks import boto_client
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_slo_table, create_state_table
from queuewatch_cli.main import main

REGION = "us-east-1"
CONFIG = """
version: 1
runner_types:
  - {name: linux.2xlarge, team: ci-infra, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 30m}}
slos:
  - {name: linux-fast, objective: 99%, queue_time_under: 2m, team: ci-infra}
"""


@pytest.fixture
def stack(aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A stack `qw` with template.yaml's table outputs (SloTableName included); its config file."""
    for name in ("QUEUEWATCH_STACK", "QUEUEWATCH_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home"))
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    create_state_table(dynamodb, "qw-state")
    create_slo_table(dynamodb, "qw-slos")
    create_jobs_table(dynamodb, "qw-jobs")
    outputs = {"StateTableName": "qw-state", "JobsTableName": "qw-jobs", "SloTableName": "qw-slos"}
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {k: {"Value": v} for k, v in outputs.items()},
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(StackName="qw", TemplateBody=json.dumps(template))
    config = tmp_path / "qw.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    return config


def test_slo_finds_its_tables_from_the_stack(stack: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    now = datetime.now(UTC)
    keep = now + timedelta(days=30)
    for number in range(10):
        at = now - timedelta(minutes=20)
        count_job(
            dynamodb, "qw-slos", number, [Contribution("linux-fast", "bad" if number < 1 else "good", at, keep)], keep
        )
    assert main(["slo", "--stack", f"qw@{REGION}", "--config", str(stack), "--json"]) == 0
    [summary] = json.loads(capsys.readouterr().out)
    assert (summary["jobs"], summary["bad"]) == (10, 1)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--stack", "nope"], "--stack nope: no stack of that name in us-east-1"),
        (["--slo-table", "qw-slos"], "--slo-table and --jobs-table: name both tables, or neither and --stack NAME"),
        ([], "--stack: none given"),
    ],
)
def test_slo_without_a_way_to_its_tables_says_which(
    stack: Path, flags: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["slo", *flags, "--region", REGION, "--config", str(stack)]) == 2
    assert said in capsys.readouterr().err


def test_the_local_stack_has_every_table_output_the_commands_read(aws: None) -> None:
    from queuewatch_cli.commands.demo.local import register_stack

    cloudformation = boto3.client("cloudformation", region_name=REGION)
    register_stack(lambda service: boto_client(service, REGION))
    [described] = cloudformation.describe_stacks(StackName="queuewatch-demo")["Stacks"]
    outputs = {o["OutputKey"] for o in described.get("Outputs", [])}
    assert {"StateTableName", "JobsTableName", "SloTableName"} <= outputs


@pytest.mark.parametrize(
    ("rule", "group_by", "group", "members"),
    [
        ("jobs-queueing", "all", "all", ["linux.2xlarge"]),
        ("jobs-queueing", "team", "ci-infra", ["linux.2xlarge"]),
        (HEALTH_RULE, "all", "all", ["collector", "discovery:us-east-1"]),
    ],
)
def test_the_pages_silence_command_names_the_stack_and_is_accepted(
    stack: Path, rule: str, group_by: str, group: str, members: list[str]
) -> None:
    names = KnownNames(frozenset({"jobs-queueing", HEALTH_RULE}), frozenset({"ci-infra"}), frozenset({"linux.2xlarge"}))
    put_known(boto3.client("dynamodb", region_name=REGION), "qw-state", names, datetime.now(UTC))  # as evaluators do
    command = silence_for(rule, group_by, group, members, "qw", REGION).command
    words = shlex.split(command)
    assert words[words.index("--stack") + 1] == f"qw@{REGION}"
    assert "--table" not in words and "--region" not in words
    assert main(words[1:]) == 0
    [silence] = load_state(boto3.client("dynamodb", region_name=REGION), "qw-state").silences
    assert silence.rule == rule


def _silence(silence_id: str, starts: datetime, ends: datetime) -> None:
    put_silence(
        boto3.client("dynamodb", region_name=REGION),
        "qw-state",
        SilenceRecord(silence_id, ("linux.*",), None, None, starts, ends, "alice", "AMI rollout"),
    )


@pytest.mark.parametrize("action", ["expire", "extend"])
@pytest.mark.parametrize(
    ("given", "code", "said"),
    [
        ("a", 2, "silence id 'a': give at least 8 characters"),
        ("abcdef1", 2, "silence id 'abcdef1': give at least 8 characters"),
        ("abcdef12", 0, "silence abcdef123456"),
        ("abcdef123456", 0, "silence abcdef123456"),
        ("abcdef99", 1, "no silence 'abcdef99'"),
    ],
)
def test_a_command_that_changes_a_silence_needs_8_characters_of_its_id(
    stack: Path, action: str, given: str, code: int, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    _silence("abcdef123456", now - timedelta(minutes=5), now + timedelta(hours=1))
    _silence("abcdff000000", now - timedelta(minutes=5), now + timedelta(hours=1))  # shares 'abcd'
    extra = ["--by", "1h"] if action == "extend" else []
    assert main(["silence", action, given, "--stack", "qw", "--region", REGION, *extra]) == code
    captured = capsys.readouterr()
    assert said in captured.out + captured.err
    ends = {
        s.silence_id: s.ends_at for s in load_state(boto3.client("dynamodb", region_name=REGION), "qw-state").silences
    }
    changed = ends["abcdef123456"] != now + timedelta(hours=1)
    assert changed == (code == 0) and ends["abcdff000000"] == now + timedelta(hours=1)


@pytest.mark.parametrize(
    ("starts_in", "ends_in", "cancel", "shown"),
    [
        (timedelta(hours=2), timedelta(hours=3), True, "cancelled"),
        (timedelta(hours=2), timedelta(hours=3), False, "scheduled"),
        (timedelta(minutes=-5), timedelta(hours=1), False, "active"),
        (timedelta(minutes=-5), timedelta(hours=1), True, "expired"),
    ],
)
def test_a_cancelled_scheduled_silence_reads_as_cancelled(
    stack: Path,
    starts_in: timedelta,
    ends_in: timedelta,
    cancel: bool,
    shown: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    _silence("abcdef123456", now + starts_in, now + ends_in)
    base = ["--stack", "qw", "--region", REGION]
    if cancel:
        assert main(["silence", "expire", "abcdef12", *base]) == 0
    capsys.readouterr()
    assert main(["silence", "list", "--all", *base]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert line.split()[1] == shown
    if shown == "cancelled":
        assert "before its start" in line and "until" not in line
    assert main(["status", *base, "--no-figures"]) == 0
    status = capsys.readouterr().out
    assert ("scheduled silences: 1" in status) == (shown == "scheduled")


@pytest.mark.parametrize(
    ("alert", "said"),
    [
        ("jobs-queuing/linux.2xlarge", "no rule 'jobs-queuing' (its config and alerts); did you mean jobs-queueing"),
        ("jobs-queueing/linux.2xlarg", "no runner type 'linux.2xlarg' (its config and alerts); did you mean linux.2xl"),
        ("linux.2xlarg", "did you mean linux.2xlarge?"),
        ("jobs-queueing/zzz", "knows no runner type 'zzz' (its config and alerts); known: linux.2xlarge"),
    ],
)  # fmt: skip
def test_history_of_an_unknown_alert_says_it_is_unknown(
    stack: Path, alert: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    names = KnownNames(frozenset({"jobs-queueing", HEALTH_RULE}), frozenset({"ci-infra"}), frozenset({"linux.2xlarge"}))
    put_known(boto3.client("dynamodb", region_name=REGION), "qw-state", names, datetime.now(UTC))
    assert main(["history", "--stack", "qw", "--region", REGION, "--alert", alert]) == 2
    assert said in capsys.readouterr().err
    # A known alert with nothing recorded reads as quiet, which it is.
    assert main(["history", "--stack", "qw", "--region", REGION, "--alert", "jobs-queueing/linux.2xlarge"]) == 0
    assert "no change of state recorded" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--stack", "qw"], "budget in jobs: 0 of 0 jobs over 28d at today's 0 a day"),  # the table read: empty
        (["--jobs-table", "qw-jobs"], "budget in jobs: 0 of 0 jobs over 28d at today's 0 a day"),
        ([], "unknown here (no jobs' history read: --stack NAME gives it at today's volume)"),
    ],
)
def test_check_config_finds_the_jobs_table_from_the_stack(
    stack: Path, flags: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check-config", str(stack), *flags, "--region", REGION]) == 0
    assert said in capsys.readouterr().out
