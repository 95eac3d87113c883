"""The README's several-stacks step that hands the first stack's topic to the second runs as written, with
queuewatch alone (no AWS CLI): `queuewatch stack-output` prints the output's value and nothing else."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import boto3
import pytest

from queuewatch_cli.main import main

README = Path(__file__).parents[2] / "README.md"
TOPIC_STEP = re.compile(r"^TOPIC=\$\((?P<command>[^)]*)\)$", re.M)


def stack_with_topic(name: str, region: str) -> str:
    """A stack like the first one deployed: its AlertTopicArn output names its topic; the topic's ARN."""
    template = {
        "Resources": {"AlertTopic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"AlertTopicArn": {"Value": {"Ref": "AlertTopic"}}, "StateTableName": {"Value": "state"}},
    }
    cloudformation = boto3.client("cloudformation", region_name=region)
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))
    [stack] = cloudformation.describe_stacks(StackName=name)["Stacks"]
    return str(next(o["OutputValue"] for o in stack["Outputs"] if o["OutputKey"] == "AlertTopicArn"))


def test_the_readmes_topic_step_prints_the_first_stacks_topic(aws: None, capsys: pytest.CaptureFixture[str]) -> None:
    [command] = TOPIC_STEP.findall(README.read_text(encoding="utf-8"))
    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/queuewatch"
    topic = stack_with_topic("queuewatch-use1", "us-east-1")
    assert main(argv[1:]) == 0
    assert capsys.readouterr().out == f"{topic}\n"


def test_an_unknown_output_is_named_with_the_ones_there(aws: None, capsys: pytest.CaptureFixture[str]) -> None:
    stack_with_topic("queuewatch-use1", "us-east-1")
    assert main(["stack-output", "--stack", "queuewatch-use1@us-east-1", "AlertTopicArm"]) == 2
    assert "did you mean 'AlertTopicArn'? expected one of: AlertTopicArn, StateTableName" in capsys.readouterr().err
