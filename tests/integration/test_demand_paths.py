"""The autoscaler's job-retry and dead-letter queues beside each runner type, in moto: found under upstream's
names, read without consuming, judged, paged with the job a dead-lettered request likely names, and an
unreadable one named with its reason."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from support import T0, StackInMoto, arriving_now, runner_type, snapshot, with_signals

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, Snapshot
from queuewatch.runtime.metric_names import runner_type_dimensions
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_state_table
from queuewatch_cli.devkit.seed import put_queue_ages, put_queued_jobs
from queuewatch_cli.main import main

JOBS = "jobs"
ACCOUNT = "123456789012"
# Upstream's multi-runner names (modules/multi-runner/queues.tf, modules/runners/job-retry/main.tf).
LINUX = "gh-ci-linux-x64-queued-builds"
LINUX_RETRY = "gh-ci-linux-x64-job-retry"
LINUX_DEAD = "gh-ci-linux-x64-queued-builds_dead_letter"
ARM = "gh-ci-linux-arm64-queued-builds.fifo"
ARM_DEAD = "gh-ci-linux-arm64-queued-builds_dead_letter.fifo"
WINDOWS = "gh-ci-windows-queued-builds"  # neither path deployed
CONFIG = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra}}
discovery:
  - {queue_name_pattern: "{prefix}-{runner_type}-queued-builds", prefix: gh-ci}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1h, queue_size: 50}}
"""


class SqsCalls:
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def __call__(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1


def clients_counting(calls: SqsCalls) -> AwsClients:
    session = boto3.Session()
    session.events.register_first("before-call.sqs", calls)
    return AwsClients(session)


@pytest.fixture
def fleet(aws: None) -> dict[str, str]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    urls = {name: sqs.create_queue(QueueName=name)["QueueUrl"] for name in (LINUX, LINUX_RETRY, LINUX_DEAD, WINDOWS)}
    for name in (ARM, ARM_DEAD):
        attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
        urls[name] = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]  # type: ignore[arg-type]
    return urls


def message_subject(message: Any) -> str:
    return str(json.loads(message["Body"])["Subject"])


def snap_of(config_text: str = CONFIG, calls: SqsCalls | None = None, jobs_table: str | None = None) -> Snapshot:
    clients = clients_counting(calls or SqsCalls())
    config = parse_config(config_text, source="t.yaml")
    return collect(config, clients, now=T0, account_id=ACCOUNT, snapshot_id="s1", jobs_table=jobs_table)


def test_both_paths_are_found_beside_each_build_queue_and_read_without_consuming(fleet: dict[str, str]) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.send_message(QueueUrl=fleet[LINUX_RETRY], MessageBody='{"id": 1}', DelaySeconds=600)  # upstream delays it
    sqs.send_message(QueueUrl=fleet[ARM_DEAD], MessageBody='{"id": 2}', MessageGroupId="g")
    calls = SqsCalls()
    snap = snap_of(calls=calls)
    found = {rt.name: rt for rt in snap.runner_types}
    assert set(found) == {"linux-x64", "linux-arm64", "windows"}  # the paths are no runner types of their own
    assert (found["linux-x64"].job_retry_queue, found["linux-x64"].dead_letter_queue) == (LINUX_RETRY, LINUX_DEAD)
    assert (found["linux-arm64"].job_retry_queue, found["linux-arm64"].dead_letter_queue) == (None, ARM_DEAD)
    assert found["linux-x64"].value(SignalName.JOB_RETRY_CHECKS) == 1  # a delayed check counts
    assert found["linux-x64"].value(SignalName.DEAD_LETTERED) == 0
    assert found["linux-x64"].value(SignalName.DEAD_LETTER_AGE) == 0  # empty: its oldest is 0 old, not asked
    assert found["linux-arm64"].value(SignalName.DEAD_LETTERED) == 1
    # Not deployed: no signal at all, which no rule judges (not a 0, not a degraded signal)
    assert SignalName.JOB_RETRY_CHECKS not in found["linux-arm64"].signals
    assert not {SignalName.JOB_RETRY_CHECKS, SignalName.DEAD_LETTERED} & set(found["windows"].signals)
    # One listing, one read per queue, and nothing that takes a message
    assert calls.calls["ListQueues"] == 1
    assert calls.calls["GetQueueAttributes"] == 3 + 3  # three build queues, three path queues
    assert not {"ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility"} & set(calls.calls)
    kept = sqs.get_queue_attributes(QueueUrl=fleet[ARM_DEAD], AttributeNames=["ApproximateNumberOfMessages"])
    assert kept["Attributes"]["ApproximateNumberOfMessages"] == "1"


def test_a_job_retry_check_older_than_30_minutes_pages_and_a_younger_one_does_not(fleet: dict[str, str]) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.send_message(QueueUrl=fleet[LINUX_RETRY], MessageBody='{"id": 1}')
    config = parse_config(CONFIG, source="t.yaml")
    fired = {}
    for age in (20 * 60, 95 * 60):
        put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {LINUX_RETRY: age}, T0)
        snap = snap_of()
        linux = {rt.name: rt for rt in snap.runner_types}["linux-x64"]
        assert linux.value(SignalName.JOB_RETRY_AGE) == age
        moto = StackInMoto.create(table=f"state{age}")
        result = moto.evaluate(snap, config, clock=arriving_now(snap))
        fired[age] = [str(key) for key in result.firing]
        # windows has neither path, linux-arm64 no job-retry queue: nothing to judge there, nothing degraded
        assert not result.degraded
    assert fired == {20 * 60: [], 95 * 60: ["job-retry#linux-x64"]}


def test_a_dead_lettered_request_pages_with_the_job_it_likely_names(fleet: dict[str, str]) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.send_message(QueueUrl=fleet[LINUX_DEAD], MessageBody='{"id": 7}')
    # AWS/SQS ages a dead-lettered message from its move to the dead-letter queue, not from its send: the
    # request was sent 45 minutes ago and dead-lettered 40 minutes ago, after scale-up's receives failed.
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {LINUX_DEAD: 40 * 60}, T0)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    # Three jobs of linux-x64 still queued: 3h, 45m and 36m ago. The one queued 36 minutes ago is the nearest
    # to the move, but came after it: it cannot be the dead-lettered request's job.
    for job_id, minutes, repo in ((1, 180, "pytorch/vision"), (7, 45, "pytorch/pytorch"), (9, 36, "pytorch/audio")):
        put_queued_jobs(
            dynamodb, JOBS, "linux-x64", [T0 - timedelta(minutes=minutes)], now=T0, first_id=job_id, repo=repo
        )
    config = parse_config(CONFIG, source="t.yaml")
    snap = snap_of(jobs_table=JOBS)
    linux = {rt.name: rt for rt in snap.runner_types}["linux-x64"]
    assert [(job.repo, job.run_id) for job in linux.dead_letter_jobs] == [("pytorch/pytorch", 10_000_007)]

    moto = StackInMoto.create()
    inbox = moto.subscribe_queue("inbox")
    result = moto.evaluate(snap, config, clock=arriving_now(snap))
    assert [str(key) for key in result.firing] == ["dead-letter#linux-x64"]
    [message] = sqs.receive_message(QueueUrl=inbox)["Messages"]
    alert = json.loads(json.loads(message["Body"])["Message"])
    assert alert["title"] == "Scale-up requests dead-lettered (dead-letter)"
    [row] = alert["runner_types"]
    assert row["queue"] == LINUX_DEAD and row["breached"] == ["dead_lettered"]
    assert [(job["repo"], job["run_id"]) for job in row["oldest_jobs"]] == [("pytorch/pytorch", 10_000_007)]
    assert row["jobs_note"].startswith("jobs inferred, not read")
    assert "likely pytorch/pytorch run 10000007, queued 45m ago" in alert["summary"]
    assert message_subject(message) == (
        "ALARM: P2 linux-x64, 1 dead-lettered, oldest 40m: Scale-up requests dead-lettered (dead-letter)"
    )


def test_with_tracking_off_the_page_says_the_job_is_unknown(fleet: dict[str, str]) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.send_message(QueueUrl=fleet[LINUX_DEAD], MessageBody='{"id": 7}')
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {LINUX_DEAD: 42 * 60}, T0)
    config = parse_config(CONFIG, source="t.yaml")
    snap = snap_of()
    moto = StackInMoto.create()
    inbox = moto.subscribe_queue("inbox")
    moto.evaluate(snap, config, clock=arriving_now(snap))
    [message] = sqs.receive_message(QueueUrl=inbox)["Messages"]
    [row] = json.loads(json.loads(message["Body"])["Message"])["runner_types"]
    assert row["oldest_jobs"] == []
    assert row["jobs_note"].startswith("job unknown: tracking is off")


def test_a_path_queue_that_cannot_be_read_is_named_with_its_reason_never_a_quiet_zero(fleet: dict[str, str]) -> None:
    config_text = CONFIG.replace(
        "discovery:",
        "runner_types:\n  - {name: linux-x64, queue: {name: " + LINUX + "}, dead_letter_queue: gh-ci-linux-x64-dlq}\n"
        "discovery:",
    )
    config = parse_config(config_text, source="t.yaml")
    snap = snap_of(config_text)
    linux = {rt.name: rt for rt in snap.runner_types}["linux-x64"]
    assert linux.job_retry_queue == LINUX_RETRY  # upstream's name, found by the listing
    assert linux.dead_letter_queue == "gh-ci-linux-x64-dlq"  # the config's name, which SQS does not know
    dead = linux.signals[SignalName.DEAD_LETTERED]
    assert dead.value is None and "gh-ci-linux-x64-dlq" in (dead.error or "")
    assert "NonExistentQueue" in (dead.error or "") or "QueueDoesNotExist" in (dead.error or "")
    moto = StackInMoto.create()
    result = moto.evaluate(snap, config, clock=arriving_now(snap))
    assert "linux-x64" in result.degraded  # the monitor page and status name it


def test_paths_switched_off_are_not_read(fleet: dict[str, str]) -> None:
    calls = SqsCalls()
    off = CONFIG.replace("rule: {team: ci-infra}", "rule: {team: ci-infra}, job_retry: {max_age: null}, "
                         "dead_letter: {max_messages: null}")  # fmt: skip
    snap = snap_of(off, calls)
    assert calls.calls["GetQueueAttributes"] == 3
    assert all(rt.job_retry_queue is None and rt.dead_letter_queue is None for rt in snap.runner_types)


def test_status_lists_a_path_alert_under_its_runner_type_with_that_queues_figures(aws: None) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    linux = with_signals(
        runner_type("linux-x64", 14, 114 * 60), dead_lettered=Reading.of(2), dead_letter_age=Reading.of(42 * 60)
    ).model_copy(update={"dead_letter_queue": LINUX_DEAD})
    stack = StackInMoto.create()
    stack.evaluate(snapshot(T0, linux), config)
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    # What the evaluator's EMF lines give CloudWatch (moto does not extract them): the build queue's and the
    # dead-letter queue's figures of linux-x64
    cloudwatch.put_metric_data(
        Namespace="Queuewatch",
        MetricData=[
            {
                "MetricName": metric,
                "Dimensions": [{"Name": k, "Value": v} for k, v in runner_type_dimensions("queuewatch", "linux-x64")],
                "Timestamp": T0,
                "Value": value,
            }
            for metric, value in (("QueueSize", 14), ("QueueTime", 6840), ("DeadLettered", 2), ("DeadLetterAge", 2520))
        ],
    )
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    text = show_status(dynamodb, "state", T0 + timedelta(seconds=30), False, cloudwatch, "Queuewatch", "queuewatch")
    [line] = [line for line in text.splitlines() if "linux-x64" in line and "dead-lettered" in line]
    assert "dead-lettered requests 2, oldest dead-lettered request 42m" in line
    assert "dead-letter / all" in text  # the rule's page, listing the runner type


def test_the_silence_a_dead_letter_page_prints_is_taken_against_the_config(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    config_file = tmp_path / "queuewatch.yaml"
    config_file.write_text(CONFIG)
    flags = ["--table", "state", "--region", "us-east-1", "--config", str(config_file)]
    silence = [
        "silence",
        "add",
        *flags,
        "--rule",
        "dead-letter",
        "--match",
        "linux-x64",
        "--for",
        "2h",
        "--comment",
        "x",
    ]
    assert main(silence) == 0
    [stored] = load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").silences
    assert stored.rule == "dead-letter"


def test_a_dead_letter_alert_resolves_when_its_queue_is_emptied_or_removed(aws: None) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    stack = StackInMoto.create()
    inbox = stack.subscribe_queue("inbox")
    plain = runner_type("linux-x64")
    dead = with_signals(plain, dead_lettered=Reading.of(1), dead_letter_age=Reading.of(60))
    assert [str(k) for k in stack.evaluate(snapshot(T0, dead), config).firing] == ["dead-letter#linux-x64"]
    # The queue is deleted (redrive switched off): no such path any more, and the alert on it resolves.
    stack.evaluate(snapshot(T0 + timedelta(minutes=1), plain), config)  # clear: keeps firing 5 minutes
    later = stack.evaluate(snapshot(T0 + timedelta(minutes=7), plain), config)
    assert later.firing == [] and not later.degraded
    messages = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox, MaxNumberOfMessages=10)
    statuses = sorted(json.loads(json.loads(m["Body"])["Message"])["status"] for m in messages["Messages"])
    assert statuses == ["firing", "resolved"]
