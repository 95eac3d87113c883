"""Under the upstream webhook's `queue_selection_strategy: all` (v7.9), one job's scale-up request sits in every
matching queue: a page counts the job once in its total, its subject and its summary."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest
from support import T0, StackInMoto, arriving_now

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import put_queue_ages, put_queued_jobs

JOBS = "jobs"
POOLS = ("linux-a", "linux-b", "linux-c")  # three pools whose labels all take the job
CONFIG = """
version: 1
defaults: {region: us-east-1, queue_source: sqs, queue_selection_strategy: STRATEGY, rule: {team: ci-infra}}
runner_types:
  - {name: linux-a, queue: {name: gh-ci-linux-a-queued-builds}, labels: [self-hosted, linux, x64]}
  - {name: linux-b, queue: {name: gh-ci-linux-b-queued-builds}, labels: [self-hosted, linux, x64]}
  - {name: linux-c, queue: {name: gh-ci-linux-c-queued-builds}, labels: [self-hosted, linux, x64]}
rules:
  - {name: jobs-queueing, thresholds: {queue_size: 0}}
"""


@pytest.fixture
def one_job_on_three_queues(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    for pool in POOLS:
        url = sqs.create_queue(QueueName=f"gh-ci-{pool}-queued-builds")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": 7, "repositoryName": "pytorch"}))
    put_queue_ages(
        boto3.client("cloudwatch", region_name="us-east-1"), {f"gh-ci-{p}-queued-builds": 120 for p in POOLS}, T0
    )


def page(
    strategy: str, jobs_table: str | None, queue_source: str = "sqs", title: str | None = None
) -> tuple[dict[str, Any], str]:
    text = CONFIG.replace("STRATEGY", strategy).replace("queue_source: sqs", f"queue_source: {queue_source}")
    if title is not None:
        text = text.replace("name: jobs-queueing,", f"name: jobs-queueing, title: {title!r},")
    if strategy == "first":  # each pool its own labels: each job goes to one queue
        text = text.replace(", labels: [self-hosted, linux, x64]", "")
    config = parse_config(text, source="t.yaml")
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=jobs_table)
    moto = StackInMoto.create(table=f"state-{strategy}-{jobs_table}")
    inbox = moto.subscribe_queue(f"inbox-{strategy}-{jobs_table}")
    moto.evaluate(snap, config, clock=arriving_now(snap))
    [message] = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=inbox)["Messages"]
    body = json.loads(message["Body"])
    return json.loads(body["Message"]), str(body["Subject"])


def test_with_tracking_a_job_on_three_queues_is_counted_once(one_job_on_three_queues: None) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    # The track stage routes the job to one runner type: the first whose labels take it.
    put_queued_jobs(dynamodb, JOBS, "linux-a", [T0 - timedelta(minutes=2)], now=T0, first_id=7,
                    labels=("self-hosted", "linux", "x64"))  # fmt: skip
    alert, subject = page("all", JOBS)
    assert alert["runner_types_affected"] == 3  # each pool's queue holds the request: each is queueing
    assert [f["queue_size"] for f in alert["runner_types"]] == [1, 1, 1]
    assert alert["jobs_queued"] == 1 and alert["total_queue_size"] == 1  # not 3
    assert "1 job in all, each counted once" in alert["summary"]
    assert "3 queued" not in subject
    # status lists each pool with its own queue's request, and says the page's total: the one job
    status = show_status(dynamodb, "state-all-jobs", T0, as_json=False)
    assert "jobs queued at the last page: 1 job, the tracked jobs, each counted once" in status


def test_with_tracking_and_queue_source_jobs_a_job_on_three_queues_is_paged_as_one(
    one_job_on_three_queues: None,
) -> None:
    """Judged on the worse of the jobs and the queue, each pool's figure is 1: summed, the one job would be paged as
    "3 jobs, each counted once". The page counts the tracked job once."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    put_queued_jobs(dynamodb, JOBS, "linux-a", [T0 - timedelta(minutes=2)], now=T0, first_id=7,
                    labels=("self-hosted", "linux", "x64"))  # fmt: skip
    alert, subject = page("all", JOBS, queue_source="jobs")
    assert [f["queue_size"] for f in alert["runner_types"]] == [1, 1, 1]
    assert alert["jobs_queued"] == 1 and alert["total_queue_size"] == 1
    assert "1 job in all, each counted once" in alert["summary"]
    assert "3 jobs" not in alert["summary"] and "3 queued" not in subject


def test_with_tracking_all_dispatch_more_requests_in_one_queue_than_jobs_tracked_gives_bounds(aws: None) -> None:
    """Two requests wait in one queue and no job is tracked: at least two jobs are queued, so the page's total is
    neither the tracked count (0) nor a sum of the queues."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    for pool in POOLS:
        url = sqs.create_queue(QueueName=f"gh-ci-{pool}-queued-builds")["QueueUrl"]
        for job in (7, 8):
            sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": job, "repositoryName": "pytorch"}))
    put_queue_ages(
        boto3.client("cloudwatch", region_name="us-east-1"), {f"gh-ci-{p}-queued-builds": 120 for p in POOLS}, T0
    )
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS)
    alert, _ = page("all", JOBS, queue_source="jobs")
    assert alert["jobs_queued"] is None and alert["total_queue_size"] is None
    assert "jobs in all between 2 jobs and more" in alert["summary"], alert["summary"]


def test_with_tracking_a_subject_short_of_room_says_the_job_once(one_job_on_three_queues: None) -> None:
    """A long title leaves the subject room only for a short wording, the one that says the page's total queued:
    under `all` dispatch that total is the one tracked job, never the three queues' requests summed."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    put_queued_jobs(dynamodb, JOBS, "linux-a", [T0 - timedelta(minutes=2)], now=T0, first_id=7,
                    labels=("self-hosted", "linux", "x64"))  # fmt: skip
    _, subject = page("all", JOBS, title="Linux x64 jobs are queueing on the shared pools")
    assert "1 queued" in subject, subject
    assert "3 queued" not in subject


def test_without_tracking_all_dispatch_gives_the_bounds_not_a_sum(one_job_on_three_queues: None) -> None:
    alert, subject = page("all", None)
    assert alert["jobs_queued"] is None and alert["total_queue_size"] is None
    assert "jobs in all between 1 job and 3" in alert["summary"]
    assert "3 queued" not in subject
    status = show_status(boto3.client("dynamodb", region_name="us-east-1"), "state-all-None", T0, as_json=False)
    assert "jobs queued at the last page: between 1 job and 3: with queue_selection_strategy all" in status


def test_without_tracking_first_dispatch_sums_the_requests(one_job_on_three_queues: None) -> None:
    alert, subject = page("first", None)  # three requests are three jobs when each goes to one queue
    assert alert["jobs_queued"] == 3 and alert["total_queue_size"] == 3
    assert subject.startswith("ALARM: P2 3 runner types")


def test_under_all_dispatch_a_request_for_a_job_tracked_elsewhere_is_not_called_tracking_blind(
    one_job_on_three_queues: None,
) -> None:
    """The job is tracked under linux-a; linux-b's and linux-c's queues hold its request too. Judged on the worse
    of the jobs and the queue, all three queue, but the jobs' events are arriving: no row blames tracking."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    put_queued_jobs(dynamodb, JOBS, "linux-a", [T0 - timedelta(minutes=2)], now=T0, first_id=7,
                    labels=("self-hosted", "linux", "x64"))  # fmt: skip
    alert, _ = page("all", JOBS, queue_source="jobs")
    assert "tracking blind" not in show_status(dynamodb, "state-all-jobs", T0, as_json=False)  # nor the monitor
    causes = {row["runner_type"]: [f["cause"] for f in row["triage"]["findings"]] for row in alert["runner_types"]}
    assert set(causes) == set(POOLS)
    assert all("jobs_untracked" not in found for found in causes.values()), causes


def test_under_first_dispatch_a_request_with_no_tracked_job_is_tracking_blind(one_job_on_three_queues: None) -> None:
    """The same queues under `first` dispatch: each request is its own job, and none is tracked."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    alert, _ = page("first", JOBS, queue_source="jobs")
    assert "tracking blind: pending since" in show_status(dynamodb, "state-first-jobs", T0, as_json=False)
    for row in alert["runner_types"]:
        assert row["triage"]["findings"][0]["cause"] == "jobs_untracked"


GPU_CONFIG = """
version: 1
defaults: {region: us-east-1, queue_source: jobs, queue_selection_strategy: all, rule: {team: ci-infra}}
runner_types:
  - {name: linux-a, queue: {name: gh-ci-linux-a-queued-builds}, labels: [self-hosted, linux, x64]}
  - {name: linux-b, queue: {name: gh-ci-linux-b-queued-builds}, labels: [self-hosted, linux, x64]}
  - {name: gpu-a100, queue: {name: gh-ci-gpu-a100-queued-builds}, labels: [self-hosted, linux, gpu], exact_match: true}
rules:
  - {name: jobs-queueing, thresholds: {queue_size: 0}}
"""


def test_under_all_dispatch_a_job_tracked_on_other_pools_does_not_hide_a_blind_gpu_pool(aws: None) -> None:
    """One x64 job is tracked under linux-a, its request in linux-a's and linux-b's queues. The GPU pool's queue
    holds a request an hour old, and no job its labels take is tracked anywhere: the x64 job cannot be in its queue
    (its exact labels are not the job's), so the GPU jobs' events are not arriving: the monitor says tracking
    blind for the GPU pool alone, and its row of the page leads with that finding."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    for pool in ("linux-a", "linux-b", "gpu-a100"):
        url = sqs.create_queue(QueueName=f"gh-ci-{pool}-queued-builds")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"id": 7, "repositoryName": "pytorch"}))
    ages = {
        "gh-ci-linux-a-queued-builds": 120,
        "gh-ci-linux-b-queued-builds": 120,
        "gh-ci-gpu-a100-queued-builds": 3600,
    }
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), ages, T0)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    put_queued_jobs(dynamodb, JOBS, "linux-a", [T0 - timedelta(minutes=2)], now=T0, first_id=7,
                    labels=("self-hosted", "linux", "x64"))  # fmt: skip
    config = parse_config(GPU_CONFIG, source="t.yaml")
    snap = collect(config, AwsClients(), now=T0, account_id="123456789012", snapshot_id="s1", jobs_table=JOBS)
    moto = StackInMoto.create(table="state-gpu")
    inbox = moto.subscribe_queue("inbox-gpu")
    moto.evaluate(snap, config, clock=arriving_now(snap))
    [message] = sqs.receive_message(QueueUrl=inbox)["Messages"]
    alert = json.loads(json.loads(message["Body"])["Message"])
    causes = {row["runner_type"]: [f["cause"] for f in row["triage"]["findings"]] for row in alert["runner_types"]}
    assert causes["gpu-a100"][0] == "jobs_untracked", causes
    assert "jobs_untracked" not in causes["linux-a"] + causes["linux-b"], causes
    status = show_status(dynamodb, "state-gpu", T0, as_json=False)
    assert "tracking blind: pending since" in status
    untracked_line = next(line for line in status.splitlines() if "no job tracked queued" in line)
    assert "gpu-a100: 1 scale-up request, the oldest 1h" in untracked_line
    assert "linux-b" not in untracked_line
