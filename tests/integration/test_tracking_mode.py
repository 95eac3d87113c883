"""Which way the stack sees GitHub's waiting jobs, said where an operator looks: check-config and the build
name the autoscaler's bus and matcher config, or say once what queue-only cannot see; with the jobs table,
check-config and status count the last day's jobs that map to no runner type, by label set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from matcher_configs import pytorch_like, written
from support import T0, StackInMoto, arriving_now

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.alerting.alert import Alert
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.autoscaler import QUEUE_ONLY_BLIND, matcher_config_path
from queuewatch.model.matcher import parse
from queuewatch.notifications.chat import chat_notification
from queuewatch.notifications.cloudwatch import Origin, cloudwatch_alarm
from queuewatch.notifications.email import email_text
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.stage import track
from queuewatch_cli.commands.check_config.check import check_config
from queuewatch_cli.commands.status.status import status
from queuewatch_cli.devkit.handlers import load_event
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_state_table
from queuewatch_cli.main import build_parser, main

FLEET = """\
version: 1
autoscaler: {prefix: pt}
defaults: {region: us-east-1}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 5m}}
"""
QUEUE_ONLY = FLEET.replace("autoscaler: {prefix: pt}\n", "").replace(
    "rules:", 'discovery:\n  - {queue_name_pattern: "pt-{runner_type}-queued-builds"}\nrules:'
)
JOBS = "jobs"


def test_check_config_and_the_build_name_the_bus_and_matcher_config_or_say_once_what_queue_only_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    for command in (["check-config", str(fleet)], ["stage-config", str(fleet), "--into", str(tmp_path / "a")]):
        assert main(command) == 0
        said = capsys.readouterr().out
        assert (
            "deploy with AutoscalerPrefix=pt: jobs tracked from its bus pt-runners, routed as its webhook routes "
            f"them (matcher config {matcher_config_path('pt')})"
        ) in said
        assert QUEUE_ONLY_BLIND not in said
    fleet.write_text(QUEUE_ONLY)
    for command in (["check-config", str(fleet)], ["stage-config", str(fleet), "--into", str(tmp_path / "b")]):
        assert main(command) == 0
        said = capsys.readouterr().out
        assert said.count(QUEUE_ONLY_BLIND) == 1, said
        for blind in ("deletes at runners_maximum_count", "error it does not retry", "job-retry checks dropped"):
            assert blind in said


def test_the_prefix_alone_discovers_the_build_queues_under_it() -> None:
    config = parse_config(FLEET, source="t.yaml")
    [discovery] = config.discovery
    assert discovery.runner_type_of("pt-linux-x64-gpu-a100-queued-builds") == "linux-x64-gpu-a100"
    assert discovery.runner_type_of("other-linux-queued-builds") is None
    single = parse_config(FLEET.replace("{prefix: pt}", "{prefix: pt, layout: single-runner}"), source="t.yaml")
    assert single.discovery[0].runner_type_of("pt-queued-builds") == "pt"


@pytest.fixture
def jobs_with_unrouted(aws: None) -> Any:
    """A day of a PyTorch-like fleet's jobs: two of GPU a100, three whose GPU no runner type has, one hosted."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    router = Router(parse_config(FLEET, source="t.yaml"), parse([("/p", written(pytorch_like()))]))
    labels = [
        ["self-hosted", "linux", "x64", "gpu-a100"],
        ["self-hosted", "linux", "x64", "gpu-a100"],
        ["self-hosted", "linux", "x64", "gpu-b200"],
        ["Self-Hosted", "linux", "x64", "gpu-b200"],
        ["self-hosted", "linux", "x64", "gpu-b200"],
        ["ubuntu-latest"],
    ]
    for job_id, job_labels in enumerate(labels, start=1):
        body = load_event("track_queued.json")["detail"]
        body["workflow_job"] |= {"id": job_id, "labels": job_labels}
        track(WorkflowJobEvent.model_validate(body), router, dynamodb, JOBS, T0)
    return dynamodb


UNROUTED = [
    "jobs of the last day that map to no runner type: 3, in 1 label sets (most first)",
    "       3  [gpu-b200,linux,self-hosted,x64]",
]


def test_check_config_with_the_jobs_table_counts_the_last_days_unrouted_jobs_by_label_set(
    jobs_with_unrouted: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET)
    assert check_config([str(fleet)], now=T0, jobs_table=JOBS, region="us-east-1") == 0
    said = capsys.readouterr().out.splitlines()
    assert all(line in said for line in UNROUTED), said


def deploy(outputs: dict[str, str]) -> None:
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), outputs["StateTableName"])
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {k: {"Value": v} for k, v in outputs.items()},
    }
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName="qw", TemplateBody=json.dumps(template)
    )


def test_status_counts_the_unrouted_jobs_where_tracking_is_on(
    jobs_with_unrouted: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("QUEUEWATCH_STACK", raising=False)
    deploy({"StateTableName": "state", "JobsTableName": JOBS})
    args = build_parser().parse_args(["status", "--stack", "qw@us-east-1", "--no-figures"])
    assert status(args, now=T0) == 0
    said = capsys.readouterr().out
    assert all(line in said.splitlines() for line in UNROUTED), said
    assert QUEUE_ONLY_BLIND not in said


def test_status_says_once_what_a_queue_only_stack_cannot_see(
    aws: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("QUEUEWATCH_STACK", raising=False)
    deploy({"StateTableName": "state"})
    args = build_parser().parse_args(["status", "--stack", "qw@us-east-1", "--no-figures"])
    assert status(args, now=T0) == 0
    assert capsys.readouterr().out.count(QUEUE_ONLY_BLIND) == 1


PAGED = """
version: 1
defaults: {region: us-east-1, queue_source: sqs, rule: {team: ci-infra}}
runner_types:
  - {name: linux-a, queue: {name: gh-ci-linux-a-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_size: 0}}
"""


@pytest.mark.parametrize("jobs_table", [None, JOBS], ids=["queue-only", "tracking"])
def test_every_page_of_a_queue_only_stack_says_once_what_it_cannot_see(aws: None, jobs_table: str | None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.create_queue(QueueName="gh-ci-linux-a-queued-builds")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": 7}))
    if jobs_table:
        create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), jobs_table)
    config = parse_config(PAGED, source="t.yaml")
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=jobs_table)
    moto = StackInMoto.create()
    inbox = moto.subscribe_queue("inbox")
    moto.evaluate(snap, config, clock=arriving_now(snap))
    [message] = sqs.receive_message(QueueUrl=inbox)["Messages"]
    alert = Alert.model_validate_json(json.loads(message["Body"])["Message"])
    origin = Origin(account_id="123456789012", region="us-east-1", topic_arn="arn:aws:sns:us-east-1:123456789012:t")
    bodies = {
        "email": email_text(alert),
        "chat": json.dumps(chat_notification(alert)),
        "pager": json.dumps(cloudwatch_alarm(alert, origin)),
    }
    expected = 1 if jobs_table is None else 0
    assert alert.blind_spots == (QUEUE_ONLY_BLIND if jobs_table is None else None)
    for name, body in bodies.items():
        assert body.count("runners_maximum_count") == expected, name
