"""The `queuewatch` command line: config checks and silences against a moto state table."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest

from queuewatch.adapters.state_table.alerts import load_state
from queuewatch_cli.devkit.handlers import REPO_ROOT
from queuewatch_cli.devkit.moto_tables import create_state_table
from queuewatch_cli.main import main


def test_check_config_passes_the_shipped_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(REPO_ROOT / "config" / "queuewatch.yaml")]) == 0
    assert "OK" in capsys.readouterr().out


OTHER_ACCOUNT_FLEET = """\
version: 1
defaults: {region: us-east-1}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds"}
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", region: eu-west-1}
runner_types:
  - {name: gpu.a100, queue: {name: gpu-a100-queued-builds, account_id: "444455556666", region: us-west-2}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 5m}}
"""


def test_check_config_and_the_build_say_which_accounts_and_regions_are_read_and_the_deploy_parameter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(OTHER_ACCOUNT_FLEET)
    expected = [
        "  reads the stack's own account in eu-west-1, us-east-1",
        "  reads account 444455556666 in us-west-2",
        "  deploy with WatchedAccountIds=444455556666 (leave out the stack's own account)",
    ]
    assert main(["check-config", str(fleet)]) == 0
    said = capsys.readouterr().out
    assert all(line in said for line in expected), said
    assert main(["stage-config", str(fleet), "--into", str(tmp_path / "staged")]) == 0
    said = capsys.readouterr().out
    assert all(line in said for line in expected), said
    fleet.write_text(OTHER_ACCOUNT_FLEET.replace(', account_id: "444455556666"', ""))
    assert main(["check-config", str(fleet)]) == 0
    said = capsys.readouterr().out
    assert "WatchedAccountIds stays empty" in said and "444455556666" not in said


def test_check_config_names_every_problem_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "version: 1\n"
        "runner_types:\n"
        "  - {name: linux.2xlarge, queue: {name: 'bad/name'}}\n"
        "rules:\n"
        "  - name: jobs-queueing\n"
        "    thresholds: {queue_time: soon}\n"
        "    priorty: P2\n"
    )
    assert main(["check-config", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3: runner_types[0].queue.name" in err
    assert f"{bad}:6: rules[0].thresholds.queue_time" in err
    assert f"{bad}:7: rules[0].priorty: unknown key 'priorty'; did you mean 'priority'?" in err


def test_silence_add_list_expire(aws: None, capsys: pytest.CaptureFixture[str]) -> None:
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    base = ["--table", "state", "--region", "us-east-1"]
    assert main(["silence", "add", *base, "--match", "linux.*", "--for", "2h", "--comment", "AMI rollout"]) == 0
    [silence] = load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").silences
    assert silence.matchers == ("linux.*",) and silence.comment == "AMI rollout" and silence.author
    assert round((silence.ends_at - silence.starts_at).total_seconds()) == 7200
    capsys.readouterr()
    assert main(["silence", "list", *base]) == 0
    assert silence.silence_id in capsys.readouterr().out
    assert main(["silence", "expire", *base, silence.silence_id]) == 0
    [expired] = load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").silences
    assert expired.ends_at <= datetime.now(UTC)
    assert main(["silence", "expire", *base, "nope"]) == 2  # too short a prefix to name one silence
    assert main(["silence", "expire", *base, "nonexist"]) == 1
    assert main(["silence", "add", *base, "--for", "soon", "--comment", "x"]) == 2
