"""A pipeline built on CloudWatch alarms (pytorch/alerting-infra's shape: SNS -> SQS with raw message delivery
-> its own parser) takes queuewatch's page when the stack says queue subscribers get the alarm body."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import boto3
import pytest
from consumers import CLOUDWATCH, description_fields
from support import StackInMoto, minutes, runner_type, snapshot

from queuewatch.alerting.alert import QueueBody
from queuewatch.config.load import parse_config

CONFIG = """version: 1
defaults: {rule: {for: 0s, keep_firing_for: 0s}}
runner_types:
  - {name: linux.2xlarge, queue: {name: q-2x}, team: ci-infra}
  - {name: linux.4xlarge, queue: {name: q-4x}, team: rocm}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}
"""


def bodies(url: str) -> list[str]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    return [m["Body"] for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])]


def run_incident(queue_body: QueueBody) -> tuple[list[str], str]:
    moto = StackInMoto.create()
    moto.stack = replace(moto.stack, queue_body=queue_body)
    url = moto.subscribe_queue("alarm-pipeline", attributes={"RawMessageDelivery": "true"})
    config = parse_config(CONFIG, source="pipeline.yaml")
    queueing = snapshot(
        minutes(0),
        runner_type("linux.2xlarge", 4, 900, team="ci-infra"),
        runner_type("linux.4xlarge", 2, 300, team="rocm"),
    )
    moto.evaluate(queueing, config)
    fired = bodies(url)
    moto.evaluate(snapshot(minutes(1), runner_type("linux.2xlarge"), runner_type("linux.4xlarge")), config)
    return fired, bodies(url)[0]


def test_a_raw_sqs_subscriber_gets_a_cloudwatch_alarm_that_opens_and_closes_under_one_name(aws: None) -> None:
    [fired], resolved = run_incident("cloudwatch-alarm")
    page: dict[str, Any] = json.loads(fired)
    close: dict[str, Any] = json.loads(resolved)
    for body in (page, close):
        CLOUDWATCH.validate(body)  # bare: no SNS envelope around it
    assert (page["NewStateValue"], close["NewStateValue"]) == ("ALARM", "OK")
    assert page["AlarmName"] == close["AlarmName"] and page["AlarmName"].startswith("test: ")
    fields = description_fields(page["AlarmDescription"])
    assert fields["TEAMS"] == "ci-infra, rocm"
    assert fields["RUNNER_TYPES"] == "linux.2xlarge, linux.4xlarge"
    assert "SILENCE" in fields and "VIEW" in fields


@pytest.mark.parametrize("queue_body", ["alert"])
def test_by_default_a_queue_subscriber_gets_the_json_alert(aws: None, queue_body: QueueBody) -> None:
    [fired], _ = run_incident(queue_body)
    assert json.loads(fired)["version"] == "queuewatch.alert/v1"
