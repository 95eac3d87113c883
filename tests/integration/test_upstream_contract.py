"""Contract tests: what the upstream autoscaler (github-aws-runners/terraform-aws-github-runner) does with a job's
scale-up request when it cannot start a runner, played on moto (tests/upstream_autoscaler.py), with queuewatch's
real stages beside it: the bus's workflow_job events through the track stage, the collector and the evaluator,
one tick a minute. Tracking is on; the rule pages past 10 minutes of queue time.

Each case pages within one tick of its rule's threshold. Where upstream deleted the request while GitHub still
holds the job queued, the page names the drop, counted and with the job's repository and run; where upstream
kept it (handed back, or dead-lettered), the page says no drop, and each job is counted once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from support import T0, StackInMoto
from upstream_autoscaler import Tracker, Upstream, bus_event

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.alerting.triage import held_by_copies, triage
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import load_config, parse_config
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.devkit.seed import put_queue_ages

JOBS = "jobs"
EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"
PREFIX = "multi-runner-linux-x64"
BUILD = f"{PREFIX}-queued-builds"
LABELS = ["self-hosted", "linux", "x64"]
THRESHOLD = timedelta(minutes=10)
TICK = timedelta(minutes=1)
RUNS = {101: 9001, 102: 9002}  # job -> its workflow run


def config_for(*, job_retry: bool = False, dead_letter: bool = False) -> Config:
    paths = (f", job_retry_queue: {PREFIX}-job-retry" if job_retry else "") + (
        f", dead_letter_queue: {BUILD}_dead_letter" if dead_letter else ""
    )
    return parse_config(
        f"""
version: 1
defaults:
  region: us-east-1
  rule: {{team: ci-infra, keep_firing_for: 5m}}
  job_retry: {{max_age: 30m}}
  dead_letter: {{max_messages: 0}}
runner_types:
  - {{name: linux-x64, queue: {{name: {BUILD}}}, labels: [self-hosted, linux, x64]{paths}}}
rules:
  - {{name: jobs-queueing, thresholds: {{queue_time: 10m, queue_size: 0}}, for: 0s, priority: P2}}
""",
        source="contract.yaml",
    )


class Run:
    """Two jobs queued at T0 on the bus, dispatched to the build queue; then a tick a minute: upstream acts
    (`act`), the collector reads, the evaluator judges; the pages each tick sent, by rule."""

    def __init__(
        self,
        upstream: Upstream,
        config: Config,
        *,
        region: str = "us-east-1",
        tracked: bool = True,
        labels: list[str] = LABELS,
        also: tuple[Upstream, ...] = (),
    ) -> None:
        """`also`: the other runner configs the webhook dispatches each job to (`queue_selection_strategy: all`)."""
        self.upstream, self.config, self.region = upstream, config, region
        self.stack = StackInMoto.create(region=region)
        self.clients = AwsClients()  # the collector's, made once per container as deployed: warm ticks reuse them
        self.inbox = self.stack.subscribe_queue("inbox")
        # The jobs table lives in the stack's home region (us-east-1 here), whatever the queues' region.
        self.tracker = Tracker(boto3.client("dynamodb", region_name="us-east-1"), JOBS, config) if tracked else None
        for job_id, run_id in RUNS.items():
            event = bus_event("queued", job_id, run_id, labels, T0)
            if self.tracker is not None:
                self.tracker.deliver(event, T0 + timedelta(seconds=1))
            for each in (upstream, *also):
                each.webhook(event)
        self.snapshot: Snapshot | None = None

    def tick(self, at: datetime, ages: dict[str, float]) -> dict[str, dict[str, Any]]:
        put_queue_ages(boto3.client("cloudwatch", region_name=self.region), ages, at)
        self.snapshot = collect(
            self.config,
            self.clients,
            now=at,
            account_id="123456789012",
            snapshot_id=f"s{at:%H%M}",
            jobs_table=JOBS if self.tracker is not None else None,
        )
        self.stack.evaluate(self.snapshot, self.config, clock=lambda: at)
        pages = {}
        sqs = boto3.client("sqs", region_name=self.region)
        for message in sqs.receive_message(QueueUrl=self.inbox, MaxNumberOfMessages=10).get("Messages", []):
            page = json.loads(json.loads(message["Body"])["Message"])
            pages[page["rule"]] = page
            sqs.delete_message(QueueUrl=self.inbox, ReceiptHandle=message["ReceiptHandle"])
        return pages

    def until_paged(
        self, act: Callable[[int], object], ages: Callable[[int], dict[str, float]], rule: str = "jobs-queueing"
    ) -> tuple[datetime, dict[str, Any]]:
        """Ticks until `rule` pages: when, and the page."""
        for minute in range(1, 40):
            act(minute)
            at = T0 + minute * TICK
            pages = self.tick(at, ages(minute))
            if rule in pages and pages[rule]["status"] == "firing":
                return at, pages[rule]
        raise AssertionError(f"{rule} never paged")

    def never_paged(
        self,
        act: Callable[[int], object],
        ages: Callable[[int], dict[str, float]],
        minutes: int,
        rules: tuple[str, ...] = ("jobs-queueing",),
    ) -> None:
        """`rules` never page. (queuewatch's own monitor may: moto publishes no AWS/SQS metric these read.)"""
        for minute in range(1, minutes + 1):
            act(minute)
            paged = set(self.tick(T0 + minute * TICK, ages(minute))) & set(rules)
            assert not paged, f"{paged} paged at minute {minute}"

    def runner_type(self, name: str | None = None) -> Any:
        assert self.snapshot is not None
        found = [rt for rt in self.snapshot.runner_types if name is None or rt.name == name]
        assert len(found) == 1, [rt.name for rt in self.snapshot.runner_types]
        return found[0]


def finding(page: dict[str, Any], cause: str, runner_type_name: str | None = None) -> str | None:
    [runner_type] = [f for f in page["runner_types"] if runner_type_name in (None, f["runner_type"])]
    found = [f for f in runner_type["triage"]["findings"] if f["cause"] == cause]
    return f"{found[0]['title']}: {found[0]['detail']}" if found else None


def on_time(at: datetime, threshold: timedelta = THRESHOLD) -> bool:
    """Paged at the first tick past the threshold, or the one after."""
    return T0 + threshold < at <= T0 + threshold + 2 * TICK


@pytest.fixture
def sqs(aws: None) -> Any:
    return boto3.client("sqs", region_name="us-east-1")


def test_requests_deleted_at_the_maximum_with_non_ephemeral_runners_page_as_dropped(sqs: Any) -> None:
    """Upstream: scale-up.ts (v7.11.0, scaleUp) at runners_maximum_count lists only ephemeral runners' messages for
    retry, so lambda.ts's handler lets the event source mapping delete non-ephemeral runners' requests; with job
    retry off (its default) nothing else holds them. v6 (v6.9.1 scale-up.ts) did the same: ScaleError, which
    hands a message back, is thrown at the maximum for ephemeral runners only. The queue reads 0 while GitHub
    holds both jobs queued: the page says their requests were dropped, names each job's repository and run, and
    never resolves while they wait."""
    upstream = Upstream.create(sqs, PREFIX)
    run = Run(upstream, config_for())
    outcomes: list[str] = []
    at, page = run.until_paged(lambda _: outcomes.extend(upstream.scale_up(at_maximum=True)), lambda _: {BUILD: 0})
    assert outcomes == ["deleted", "deleted"]
    assert on_time(at)
    said = finding(page, "no_scale_up_request")
    assert said is not None and said.startswith("Scale-up requests dropped")
    assert "the scale-up requests of 2 jobs were dropped" in said
    assert "pytorch/pytorch run 9001" in said and "pytorch/pytorch run 9002" in said
    assert "took other jobs" not in said
    assert page["max_queue_size"] == 2  # the jobs GitHub holds, not the empty queue
    for minute in range(12, 20):  # the queue stays empty: never a recovery while the jobs wait
        assert run.tick(T0 + minute * TICK, {BUILD: 0}).get("jobs-queueing", {}).get("status") != "resolved"


def test_requests_at_the_maximum_with_ephemeral_runners_are_handed_back_and_aws_age_misses_them(sqs: Any) -> None:
    """Upstream: scale-up.ts (v7.11.0) at runners_maximum_count with ephemeral runners lists the capped messages
    as batch item failures (lambda.ts logs 'SQS messages will be retried.'): they stay and are received again
    each time their visibility timeout ends. AWS's SQS metrics documentation: on a standard queue a message
    received three or more times and not deleted is moved to the back, and ApproximateAgeOfOldestMessage then
    reports the next message under that count, so poison-pill messages drop out of the age. Here AWS's age
    reads 0 past the third receive: the rule judges the jobs' own queue time, pages on time, and says no drop
    (both requests are still held)."""
    upstream = Upstream.create(sqs, PREFIX, ephemeral=True)
    run = Run(upstream, config_for())
    outcomes: list[str] = []

    def aws_age(minute: int) -> dict[str, float]:
        return {BUILD: 0 if minute >= 3 else minute * 60.0}  # received at each tick: past 3, out of the age

    at, page = run.until_paged(lambda _: outcomes.extend(upstream.scale_up(at_maximum=True)), aws_age)
    assert set(outcomes) == {"handed back"}
    assert on_time(at)
    found = run.runner_type()
    assert found.value(SignalName.SCALE_UP_REQUESTS) == 2
    assert found.value(SignalName.SCALE_UP_REQUEST_AGE) == 0  # what AWS reports
    assert found.value(SignalName.QUEUE_TIME) == at.timestamp() - T0.timestamp()  # the jobs' own wait
    assert finding(page, "no_scale_up_request") is None


@pytest.mark.parametrize("error", ["UnauthorizedOperation", "VcpuLimitExceeded"])
def test_a_launch_error_outside_scale_errors_deletes_the_requests_and_pages_as_dropped(sqs: Any, error: str) -> None:
    """Upstream: scale-up.ts (v7.11.0) counts a CreateFleet error whose code is not in `scale_errors`
    (variables.tf's default list: neither UnauthorizedOperation nor VcpuLimitExceeded) as non-retryable: it
    logs 'Some runner creation messages will not be retried through the current SQS batch.' at WARN and leaves
    the message out of the batch item failures, so it is deleted. The page names the drop."""
    upstream = Upstream.create(sqs, PREFIX)
    run = Run(upstream, config_for())
    at, page = run.until_paged(lambda _: upstream.scale_up(fleet_error=error), lambda _: {BUILD: 0})
    assert on_time(at)
    said = finding(page, "no_scale_up_request")
    assert said is not None and "the scale-up requests of 2 jobs were dropped" in said


def test_a_job_retry_check_dropped_after_a_github_error_pages_as_dropped(sqs: Any) -> None:
    """Upstream: with job_retry on, scale-up.ts (v7.11.0) deletes a request once it launched a runner and sends
    a delayed check to the job-retry queue (job-retry.ts publishRetryMessage); lambda.ts jobRetryCheck catches
    any error of the check (a GitHub 502), logs 'Error processing job retry: ...' at WARN and returns, so the
    check is deleted and the job never re-queued (upstream issue #5423). The runners started took other work or
    never registered: GitHub still holds the jobs queued. While the checks wait, no drop is claimed (each job
    counted once, on its path); once they are dropped, the job-retry queue is empty and healthy-looking, and
    the page names the drop."""
    upstream = Upstream.create(sqs, PREFIX, job_retry=True)
    run = Run(upstream, config_for(job_retry=True))
    upstream.scale_up()  # both launched; their checks wait on the job-retry queue
    assert upstream.launched == list(RUNS)
    seen = run.tick(T0 + 6 * TICK, {BUILD: 0, f"{PREFIX}-job-retry": 300})
    assert run.runner_type().value(SignalName.JOB_RETRY_CHECKS) == 2
    assert seen == {}  # under the threshold, nothing pages; the checks still hold the jobs

    def act(minute: int) -> None:
        if minute == 7:
            assert upstream.job_retry_meets_a_github_error() == 2

    at, page = run.until_paged(act, lambda _: {BUILD: 0})
    assert on_time(at)
    assert run.runner_type().value(SignalName.JOB_RETRY_CHECKS) == 0
    said = finding(page, "no_scale_up_request")
    assert said is not None and "the scale-up requests of 2 jobs were dropped" in said
    assert "its job-retry queue holds 0 checks" in said or "its job-retry queue 0 checks" in said


def test_a_job_retry_check_still_waiting_is_no_drop(sqs: Any) -> None:
    """Upstream: at runners_maximum_count with non-ephemeral runners and job_retry on, scale-up.ts (v7.11.0)
    deletes the requests but sends each a job-retry check, which re-queues the job while GitHub holds it queued
    (job-retry.ts checkAndRetryJob): the job is on a path, and no drop is claimed while the check waits."""
    upstream = Upstream.create(sqs, PREFIX, job_retry=True)
    run = Run(upstream, config_for(job_retry=True))
    at, page = run.until_paged(
        lambda minute: upstream.scale_up(at_maximum=True) if minute == 1 else None,
        lambda _: {BUILD: 0, f"{PREFIX}-job-retry": 300},
    )
    assert on_time(at)
    assert run.runner_type().value(SignalName.JOB_RETRY_CHECKS) == 2
    assert finding(page, "no_scale_up_request") is None


def test_insufficient_capacity_keeps_the_requests_then_dead_letters_them_counted_once(sqs: Any) -> None:
    """Upstream: InsufficientInstanceCapacity is in the default `scale_errors` (variables.tf, v7.11.0), so
    scale-up.ts lists the messages for retry and they stay; with `redrive_build_queue = {enabled = true,
    maxReceiveCount = 3}` (off by default) SQS moves each to the build queue's dead-letter queue past its third
    receive. The dead-letter rule pages at once, naming the jobs; the jobs-queueing page still pages on time,
    and since the dead-letter queue holds both requests it claims no drop: each job is counted once."""
    upstream = Upstream.create(sqs, PREFIX, max_receive_count=3)
    run = Run(upstream, config_for(dead_letter=True))
    dead_letter = f"{BUILD}_dead_letter"
    at, page = run.until_paged(
        lambda _: upstream.scale_up(fleet_error="InsufficientInstanceCapacity"),
        lambda minute: {BUILD: minute * 60.0, dead_letter: 60.0},
        rule="dead-letter",
    )
    assert at <= T0 + 5 * TICK  # paged the tick after the third receive moved them
    assert run.runner_type().value(SignalName.DEAD_LETTERED) == 2
    assert run.runner_type().value(SignalName.SCALE_UP_REQUESTS) == 0
    assert {job["run_id"] for job in page["runner_types"][0]["oldest_jobs"]} <= set(RUNS.values())
    at, page = run.until_paged(lambda _: None, lambda _: {BUILD: 0, dead_letter: 60.0})
    assert on_time(at)
    assert finding(page, "no_scale_up_request") is None


# --- one job, several queues: `queue_selection_strategy: all` ---------------------------------------------

ALL_DISPATCH = """
version: 1
defaults: {region: us-east-1, queue_selection_strategy: all, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types:
  - {name: linux-a, queue: {name: multi-runner-linux-a-queued-builds}, labels: [self-hosted, linux, x64]}
  - {name: linux-b, queue: {name: multi-runner-linux-b-queued-builds}, labels: [self-hosted, linux, x64]}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 10m, queue_size: 0}, for: 0s, priority: P2}
"""
ALL_AGES = {"multi-runner-linux-a-queued-builds": 0.0, "multi-runner-linux-b-queued-builds": 0.0}


def test_under_all_dispatch_a_request_kept_in_another_queue_holds_the_job(sqs: Any) -> None:
    """Upstream: the webhook's `queue_selection_strategy: all` (dispatch.ts, v7.9 and later) sends a job's request
    to every matching runner config's queue. linux-a is at its maximum with non-ephemeral runners (scale-up.ts,
    v7.11.0: deleted); linux-b with ephemeral runners (handed back). Each job is tracked under linux-a, yet its
    request waits in linux-b's queue: no drop is claimed. Each job counted once."""
    a = Upstream.create(sqs, "multi-runner-linux-a")
    b = Upstream.create(sqs, "multi-runner-linux-b", ephemeral=True)
    run = Run(a, parse_config(ALL_DISPATCH, source="all.yaml"), also=(b,))

    def act(_: int) -> None:
        a.scale_up(at_maximum=True)
        b.scale_up(at_maximum=True)

    at, page = run.until_paged(act, lambda _: ALL_AGES)
    assert on_time(at)
    assert finding(page, "no_scale_up_request", "linux-a") is None


def test_under_all_dispatch_requests_deleted_from_every_queue_are_counted_for_the_fleet(sqs: Any) -> None:
    """Upstream: as above, with both runner configs at their maximum with non-ephemeral runners: scale-up.ts
    (v7.11.0) deletes the request from each queue. The fleet's tracked jobs beyond every queue's requests are
    dropped: the page counts them for the fleet, at least, and names no job (which queue held which job's
    request cannot be told)."""
    a = Upstream.create(sqs, "multi-runner-linux-a")
    b = Upstream.create(sqs, "multi-runner-linux-b")
    run = Run(a, parse_config(ALL_DISPATCH, source="all.yaml"), also=(b,))

    def act(_: int) -> None:
        a.scale_up(at_maximum=True)
        b.scale_up(at_maximum=True)

    at, page = run.until_paged(act, lambda _: ALL_AGES)
    assert on_time(at)
    said = finding(page, "no_scale_up_request", "linux-a")
    assert said is not None and "the scale-up requests of at least 2 of the fleet's jobs were dropped" in said
    assert "pytorch/pytorch run" not in said


# --- the examples tell upstream's truth --------------------------------------------------------------------


def test_the_queue_only_example_cannot_see_requests_deleted_at_the_maximum(aws: None) -> None:
    """config/examples/upstream-multi-runner.yaml says: with the queue alone, a request deleted at the maximum
    (non-ephemeral runners; scale-up.ts, v7.11.0) reads as a queue that emptied. It does: nothing pages while
    GitHub holds both jobs queued, which is why tracking is the way to see it."""
    sqs = boto3.client("sqs", region_name="eu-west-1")
    upstream = Upstream.create(sqs, PREFIX)
    run = Run(upstream, load_config(EXAMPLES / "upstream-multi-runner.yaml"), region="eu-west-1", tracked=False)
    run.never_paged(lambda _: upstream.scale_up(at_maximum=True), lambda _: {BUILD: 0}, minutes=15)
    assert run.runner_type("linux-x64").value(SignalName.QUEUE_SIZE) == 0


def test_the_queue_only_example_reads_a_low_age_for_requests_handed_back_again_and_again(aws: None) -> None:
    """config/examples/upstream-multi-runner.yaml says: at the maximum with ephemeral runners (scale-up.ts,
    v7.11.0: handed back, received again and again) AWS's ApproximateAgeOfOldestMessage leaves out a request
    received three times or more, so the queue time reads low while the jobs wait; the queue size still
    counts them. With the queue alone and its rule needing both, nothing pages."""
    sqs = boto3.client("sqs", region_name="eu-west-1")
    upstream = Upstream.create(sqs, PREFIX, ephemeral=True)
    run = Run(upstream, load_config(EXAMPLES / "upstream-multi-runner.yaml"), region="eu-west-1", tracked=False)
    run.never_paged(
        lambda _: upstream.scale_up(at_maximum=True), lambda m: {BUILD: 0 if m >= 3 else m * 60.0}, minutes=15
    )
    found = run.runner_type("linux-x64")
    assert found.value(SignalName.QUEUE_SIZE) == 2 and found.value(SignalName.QUEUE_TIME) == 0


def test_the_job_retry_example_cannot_see_a_dropped_check(aws: None) -> None:
    """config/examples/upstream-job-retry-dead-letter.yaml says: a job-retry check that meets a GitHub error is
    deleted (lambda.ts jobRetryCheck, v7.11.0; upstream issue #5423) and leaves no message to age, so its
    `job-retry` rule never sees it. It does not: the job-retry queue reads 0 and nothing pages."""
    sqs = boto3.client("sqs", region_name="eu-west-1")
    upstream = Upstream.create(sqs, PREFIX, job_retry=True)
    config = load_config(EXAMPLES / "upstream-job-retry-dead-letter.yaml")
    run = Run(upstream, config, region="eu-west-1", tracked=False)

    def act(minute: int) -> None:
        if minute == 1:
            upstream.scale_up()
        if minute == 2:
            assert upstream.job_retry_meets_a_github_error() == 2

    run.never_paged(act, lambda _: {BUILD: 0}, minutes=40, rules=("jobs-queueing", "job-retry"))
    assert run.runner_type("linux-x64").value(SignalName.JOB_RETRY_CHECKS) == 0


def test_the_tracked_example_names_the_requests_deleted_at_the_maximum(aws: None) -> None:
    """config/examples/upstream-tracked.yaml says: with tracking, a job whose request upstream deleted (at the
    maximum with non-ephemeral runners: scale-up.ts, v7.11.0) is still counted, never a recovery, and the page
    names its request as dropped with the job's repository and run. It pages on time (queue time 5m)."""
    sqs = boto3.client("sqs", region_name="eu-west-1")
    key = "multi-runner-linux-x64-gpu"
    upstream = Upstream.create(sqs, key)
    config = load_config(EXAMPLES / "upstream-tracked.yaml")
    run = Run(upstream, config, region="eu-west-1", labels=["self-hosted", "linux", "x64", "gpu"])
    ages = {f"{key}-queued-builds": 0.0, "multi-runner-linux-x64-ubuntu-queued-builds": 0.0}
    at, page = run.until_paged(lambda _: upstream.scale_up(at_maximum=True), lambda _: ages)
    assert on_time(at, timedelta(minutes=5))
    said = finding(page, "no_scale_up_request")
    assert said is not None and "the scale-up requests of 2 jobs were dropped" in said
    assert "pytorch/pytorch run 9001" in said


def test_a_request_kept_by_the_keys_copy_in_another_region_holds_the_job(aws: None) -> None:
    """Upstream: the multi-runner module deployed in two regions (config/examples/upstream-multi-region.yaml),
    each region's webhook dispatching the job to its own `multi-runner-gpu-queued-builds`. In eu-west-1 the key
    is at its maximum with non-ephemeral runners (scale-up.ts, v7.11.0: deleted); in us-east-1 with ephemeral
    runners (handed back). The jobs are tracked under the key, gpu; the copy gpu@us-east-1 still holds their
    requests, so no drop is claimed. Once the copy deletes them too, the page names the drop."""
    west = Upstream.create(boto3.client("sqs", region_name="eu-west-1"), "multi-runner-gpu")
    east = Upstream.create(boto3.client("sqs", region_name="us-east-1"), "multi-runner-gpu", ephemeral=True)
    config = load_config(EXAMPLES / "upstream-multi-region.yaml")
    run = Run(west, config, region="eu-west-1", labels=["self-hosted", "linux", "x64", "gpu"], also=(east,))
    cloudwatch_east = boto3.client("cloudwatch", region_name="us-east-1")

    def act(minute: int) -> None:
        west.scale_up(at_maximum=True)
        east.scale_up(at_maximum=True)
        put_queue_ages(cloudwatch_east, {"multi-runner-gpu-queued-builds": 0.0}, T0 + minute * TICK)

    at, page = run.until_paged(act, lambda _: {"multi-runner-gpu-queued-builds": 0.0})
    assert on_time(at, timedelta(minutes=5))
    assert finding(page, "no_scale_up_request", "gpu") is None
    east.ephemeral = False  # the copy now deletes them as well
    for minute in range(7, 10):  # the page already sent repeats only after repeat_interval: read its triage
        act(minute)
        run.tick(T0 + minute * TICK, {"multi-runner-gpu-queued-builds": 0.0})
    assert run.runner_type("gpu@us-east-1").value(SignalName.QUEUE_SIZE) == 0
    snapshot = run.snapshot
    assert snapshot is not None
    [gpu] = [rt for rt in snapshot.runner_types if rt.name == "gpu"]
    copies = held_by_copies(snapshot.runner_types)["gpu"]
    findings = triage(gpu, window=900, baseline=10800, held_by_copies=copies).findings
    assert any("the scale-up requests of 2 jobs were dropped" in f.detail for f in findings)
