"""Operator commands find their stacks by name (CloudFormation outputs, in moto), act on several at once,
and answer every error in one line with a documented exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, NoCredentialsError

from queuewatch.adapters.state_table.alerts import load_state
from queuewatch_cli.common import failures
from queuewatch_cli.devkit.moto_tables import create_state_table
from queuewatch_cli.main import main


def deploy(name: str, region: str, table: str, outputs: dict[str, str] | None = None) -> None:
    """A stack with template.yaml's outputs that the commands read (moto's CloudFormation keeps outputs)."""
    create_state_table(boto3.client("dynamodb", region_name=region), table)
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {k: {"Value": v} for k, v in (outputs or {"StateTableName": table}).items()},
    }
    boto3.client("cloudformation", region_name=region).create_stack(StackName=name, TemplateBody=json.dumps(template))


@pytest.fixture
def fleet(aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("QUEUEWATCH_STACK", raising=False)
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    deploy("queuewatch", "us-east-1", "queuewatch-StateTable-ABC123")
    deploy("queuewatch", "eu-west-1", "queuewatch-StateTable-XYZ789")


def silences_in(region: str, table: str) -> list[str]:
    return [s.comment for s in load_state(boto3.client("dynamodb", region_name=region), table).silences]


SILENCE = ["--match", "linux.*", "--for", "1h", "--comment", "AMI rollout"]


def test_the_stack_name_finds_its_table_and_region(fleet: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--stack", "queuewatch@eu-west-1", "--no-figures"]) == 0
    assert "queuewatch status of queuewatch-StateTable-XYZ789" in capsys.readouterr().out
    assert main(["silence", "add", "--stack", "queuewatch", "--region", "eu-west-1", *SILENCE]) == 0
    assert silences_in("eu-west-1", "queuewatch-StateTable-XYZ789") == ["AMI rollout"]
    assert silences_in("us-east-1", "queuewatch-StateTable-ABC123") == []


def test_a_fleet_across_regions_is_silenced_and_shown_in_one_command(
    fleet: None, capsys: pytest.CaptureFixture[str]
) -> None:
    both = ["--stack", "queuewatch@us-east-1", "--stack", "queuewatch@eu-west-1"]
    assert main(["silence", "add", *both, *SILENCE]) == 0
    out = capsys.readouterr().out
    assert "on queuewatch@us-east-1 until" in out and "on queuewatch@eu-west-1 until" in out
    assert silences_in("us-east-1", "queuewatch-StateTable-ABC123") == ["AMI rollout"]
    assert silences_in("eu-west-1", "queuewatch-StateTable-XYZ789") == ["AMI rollout"]
    assert main(["status", *both, "--no-figures"]) == 0
    out = capsys.readouterr().out
    assert "== queuewatch@us-east-1\n" in out and "== queuewatch@eu-west-1\n" in out
    assert out.count("active silences: 1") == 2
    assert main(["silence", "list", *both]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_the_default_stacks_come_from_the_environment_then_the_config_file(
    fleet: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", "--no-figures"]) == 2
    assert "--stack: none given; expected --stack NAME" in capsys.readouterr().err
    saved = tmp_path / "config" / "queuewatch" / "config.yaml"
    saved.parent.mkdir(parents=True)
    saved.write_text("stacks: [queuewatch@eu-west-1]\n")
    assert main(["status", "--no-figures"]) == 0
    assert "queuewatch-StateTable-XYZ789" in capsys.readouterr().out
    monkeypatch.setenv("QUEUEWATCH_STACK", "queuewatch@us-east-1")  # the environment wins over the file
    assert main(["status", "--no-figures"]) == 0
    assert "queuewatch-StateTable-ABC123" in capsys.readouterr().out
    saved.write_text("stack: [oops\n")
    monkeypatch.delenv("QUEUEWATCH_STACK")
    assert main(["status", "--no-figures"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"queuewatch: {saved}: not readable YAML") and len(err.splitlines()) == 1


def test_a_stack_not_there_or_not_queuewatch_is_one_line(fleet: None, capsys: pytest.CaptureFixture[str]) -> None:
    deploy("other", "us-east-1", "unrelated", {"BucketName": "b"})
    assert main(["status", "--stack", "nope"]) == 2
    assert (
        capsys.readouterr().err
        == "queuewatch: --stack nope: no stack of that name in us-east-1 (name it NAME@REGION)\n"
    )
    assert main(["silence", "list", "--stack", "other"]) == 2
    err = capsys.readouterr().err
    assert "--stack other: the stack in us-east-1 has no StateTableName output" in err and len(err.splitlines()) == 1
    assert main(["status", "--stack", "bad_name!"]) == 2
    assert "--stack: found 'bad_name!', expected a stack name" in capsys.readouterr().err


@pytest.mark.parametrize(
    "command",
    [
        ["status", "--stack", "queuewatch"],
        ["status", "--table", "state"],
        ["history", "--stack", "queuewatch"],
        ["silence", "list", "--stack", "queuewatch"],
        ["silence", "add", "--stack", "queuewatch", *SILENCE],
        ["silence", "expire", "--stack", "queuewatch", "abc"],
    ],
    ids=lambda command: " ".join(command[:2]),
)
def test_no_region_is_one_line_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    assert main(command) == failures.NOT_SET_UP == 3
    err = capsys.readouterr().err
    assert err.startswith("queuewatch: no AWS region: pass --region, or --stack NAME@REGION, or set AWS_DEFAULT_REGION")
    assert len(err.splitlines()) == 1


def test_no_credentials_is_one_line_and_exit_3(
    fleet: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unsigned(*_: object) -> None:
        raise NoCredentialsError  # what botocore raises before sending, when it finds no credentials

    monkeypatch.setattr("queuewatch_cli.common.stacks.describe_outputs", unsigned)
    assert main(["status", "--stack", "queuewatch"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("queuewatch: no AWS credentials:") and len(err.splitlines()) == 1


def test_an_endpoint_that_does_not_answer_is_one_line_and_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard: nothing listens
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    assert main(["status", "--stack", "queuewatch"]) == 3
    err = capsys.readouterr().err
    assert "nothing answers there" in err and "queuewatch local up" in err and len(err.splitlines()) == 1


def test_aws_refusing_is_one_line_and_exit_4(
    fleet: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def denied(*_: object) -> None:
        error = {"Error": {"Code": "AccessDeniedException", "Message": "not authorized to perform: dynamodb:Query"}}
        raise ClientError(error, "Query")  # type: ignore[arg-type]

    monkeypatch.setattr("queuewatch_cli.commands.silence.silences.load_state", denied)
    assert main(["silence", "list", "--stack", "queuewatch"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("queuewatch: AWS refused Query: AccessDeniedException: not authorized")
    assert len(err.splitlines()) == 1


def test_bad_flags_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["silence", "add", "--stack", "queuewatch", "--match", "x"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "queuewatch silence add: the following arguments are required: --for, --comment "
        "(see queuewatch silence add --help)\n"
    )
    assert main(["status", "--bogus"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_a_bug_is_one_line_and_exit_70_with_the_traceback_on_request(
    fleet: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*_: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr("queuewatch_cli.commands.silence.silences.load_state", broken)
    assert main(["silence", "list", "--stack", "queuewatch"]) == 70
    err = capsys.readouterr().err
    assert err == (
        "queuewatch: internal error, please report it: ZeroDivisionError: division by zero "
        "(set QUEUEWATCH_DEBUG=1 for the traceback)\n"
    )
    monkeypatch.setenv("QUEUEWATCH_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["silence", "list", "--stack", "queuewatch"])


def test_a_bad_config_file_is_named_and_exit_2(fleet: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nrules: []\n")
    assert main(["status", "--stack", "queuewatch", "--no-figures", "--config", str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err


def test_backtest_takes_its_region_from_the_stack(
    fleet: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str | None] = []

    def replay(args: Any) -> int:
        seen.append(args.region)
        return 0

    monkeypatch.setattr("queuewatch_cli.commands.backtest.run.run_backtest", replay)
    assert main(["backtest", "--stack", "queuewatch@eu-west-1", "--config", "c.yaml", "--from", "1d"]) == 0
    assert seen == ["eu-west-1"]
    both = ["--stack", "queuewatch@us-east-1", "--stack", "queuewatch@eu-west-1"]
    assert main(["backtest", *both, "--config", "c.yaml", "--from", "1d"]) == 2
    assert "backtest reads one stack's tables; name one" in capsys.readouterr().err


def test_backtest_and_capacity_read_the_jobs_of_the_stack_named(
    fleet: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[str, str | None]] = []

    def backtest(args: Any) -> int:
        seen.append(("b", args.jobs_table))
        return 0

    def capacity(args: Any) -> int:
        seen.append(("c", args.table))
        return 0

    monkeypatch.setattr("queuewatch_cli.commands.backtest.run.run_backtest", backtest)
    monkeypatch.setattr("queuewatch_cli.commands.capacity.run.run_capacity", capacity)
    outputs = {"StateTableName": "tracked-state", "JobsTableName": "tracked-jobs"}
    deploy("tracked", "eu-west-1", "tracked-state", outputs)
    assert main(["backtest", "--stack", "tracked@eu-west-1", "--config", "c.yaml", "--from", "1d"]) == 0
    assert main(["capacity", "--stack", "tracked@eu-west-1", "--from", "14d"]) == 0
    assert seen == [("b", "tracked-jobs"), ("c", "tracked-jobs")]
    # A stack without tracking has no jobs: backtest reads CloudWatch, capacity says why it cannot answer.
    assert main(["backtest", "--stack", "queuewatch@eu-west-1", "--config", "c.yaml", "--from", "1d"]) == 0
    assert seen[-1] == ("b", None)
    assert main(["capacity", "--stack", "queuewatch@eu-west-1"]) == 2
    assert "no JobsTableName output: tracking is off there" in capsys.readouterr().err


def test_track_backfill_takes_the_rule_from_the_stack(fleet: None, capsys: pytest.CaptureFixture[str]) -> None:
    command = ["track", "backfill", "--archive", "gone", "--from", "1d"]
    assert main([*command, "--stack", "queuewatch"]) == 2
    assert "--stack queuewatch: no TrackRuleArn output" in capsys.readouterr().err
    rule = "arn:aws:events:us-east-1:123456789012:rule/bus/track"
    deploy("tracked", "us-east-1", "tracked-state", {"StateTableName": "tracked-state", "TrackRuleArn": rule})
    assert main([*command, "--stack", "tracked"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("queuewatch track backfill: --archive gone:") and len(err.splitlines()) == 1


def test_backtest_reads_the_jobs_table_in_the_stacks_region_not_the_profiles(
    fleet: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The profile's region is us-east-1 (AWS_DEFAULT_REGION); the stack and its jobs table are in eu-west-1.
    from queuewatch_cli.devkit.moto_tables import create_jobs_table

    create_jobs_table(boto3.client("dynamodb", region_name="eu-west-1"), "tracked-jobs")
    deploy(
        "tracked", "eu-west-1", "tracked-state", {"StateTableName": "tracked-state", "JobsTableName": "tracked-jobs"}
    )
    config = tmp_path / "c.yaml"
    config.write_text(
        "version: 1\n"
        "runner_types: [{name: linux, queue: {name: q-linux}}]\n"
        "rules: [{name: slow, team: ci-infra, thresholds: {queue_time: 5m}}]\n"
    )
    argv = ["backtest", "--stack", "tracked@eu-west-1", "--config", str(config), "--from", "1d", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith("replayed: the tracked jobs in tracked-jobs")
