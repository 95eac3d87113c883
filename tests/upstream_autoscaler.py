"""The upstream autoscaler's control plane (github-aws-runners/terraform-aws-github-runner), as its code treats a
job's scale-up request, played on moto's SQS: what it keeps, hands back, deletes and dead-letters. Each method
says which upstream file and version it reproduces; nothing here is upstream's code.

The contract tests drive queuewatch's real stages beside it: job events as the autoscaler's bus delivers them
(events/track_queued.json, GitHub's workflow_job payload), the track stage, the collector and the evaluator.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from queuewatch.config import Config
from queuewatch.track import Router
from queuewatch.track.events import WorkflowJobBusEvent
from queuewatch.track.stage import track
from queuewatch_cli.devkit.handlers import load_event
from queuewatch_cli.devkit.moto_tables import create_jobs_table

SCALE_ERRORS = frozenset(
    {
        "UnfulfillableCapacity",
        "MaxSpotInstanceCountExceeded",
        "TargetCapacityLimitExceededException",
        "RequestLimitExceeded",
        "ResourceLimitExceeded",
        "MaxSpotFleetRequestCountExceeded",
        "InsufficientInstanceCapacity",
        "InsufficientCapacityOnHost",
    }
)
"""Upstream's default `scale_errors` (variables.tf, v7.11.0): the CreateFleet error codes scale-up retries.
VcpuLimitExceeded and UnauthorizedOperation are not among them."""


def bus_event(action: str, job_id: int, run_id: int, labels: list[str], at: datetime) -> dict[str, Any]:
    """The autoscaler's bus event for a job (`detail-type: workflow_job`), from events/track_queued.json."""
    event = copy.deepcopy(load_event("track_queued.json"))
    event["time"] = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    event["id"] = f"{job_id}-{action}"
    detail = event["detail"]
    detail["action"] = action
    job = detail["workflow_job"]
    stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
    job.update(id=job_id, run_id=run_id, status=action, labels=labels, created_at=stamp, started_at=stamp)
    repo = detail["repository"]["full_name"]
    job["html_url"] = f"https://github.com/{repo}/actions/runs/{run_id}/job/{job_id}"
    job["run_url"] = f"https://api.github.com/repos/{repo}/actions/runs/{run_id}"
    return event


@dataclass
class Upstream:
    """One runner config of the multi-runner module: its build queue, and where deployed its job-retry queue and
    its build queue's dead-letter queue (modules/multi-runner/queues.tf, modules/runners/job-retry)."""

    sqs: Any
    build_url: str
    job_retry_url: str | None = None
    dead_letter_url: str | None = None
    ephemeral: bool = False
    launched: list[int] = field(default_factory=list)

    @classmethod
    def create(
        cls,
        sqs: Any,
        key_prefix: str,
        *,
        job_retry: bool = False,
        max_receive_count: int | None = None,
        ephemeral: bool = False,
    ) -> Upstream:
        """The queues as upstream names them: `<prefix>-<key>-queued-builds`, `..._dead_letter` with
        `redrive_build_queue = {enabled = true, maxReceiveCount}` (off by default), `<prefix>-<key>-job-retry`
        with `job_retry.enable` (off by default)."""
        dead_letter_url = None
        attributes: dict[str, str] = {}
        if max_receive_count is not None:
            dead_letter_url = sqs.create_queue(QueueName=f"{key_prefix}-queued-builds_dead_letter")["QueueUrl"]
            arn = sqs.get_queue_attributes(QueueUrl=dead_letter_url, AttributeNames=["QueueArn"])["Attributes"]
            policy = {"deadLetterTargetArn": arn["QueueArn"], "maxReceiveCount": max_receive_count}
            attributes["RedrivePolicy"] = json.dumps(policy)
        build_url = sqs.create_queue(QueueName=f"{key_prefix}-queued-builds", Attributes=attributes)["QueueUrl"]
        job_retry_url = sqs.create_queue(QueueName=f"{key_prefix}-job-retry")["QueueUrl"] if job_retry else None
        return cls(sqs, build_url, job_retry_url, dead_letter_url, ephemeral)

    def webhook(self, event: dict[str, Any]) -> None:
        """The webhook's dispatch of a queued job to its runner config's build queue, the body naming the job
        (lambdas/functions/webhook/src/runners/dispatch.ts, v7.11.0). Upstream sends it with
        `delay_webhook_event` (30 s by default); moto's delays run on the wall clock, so the test's clock starts
        after it and the message is sent visible."""
        detail = event["detail"]
        body = {
            "id": detail["workflow_job"]["id"],
            "eventType": "workflow_job",
            "repositoryName": detail["repository"]["name"],
            "repositoryOwner": detail["repository"]["owner"]["login"],
            "installationId": 0,
            "repoOwnerType": "Organization",
        }
        self.sqs.send_message(QueueUrl=self.build_url, MessageBody=json.dumps(body))

    def scale_up(self, *, at_maximum: bool = False, fleet_error: str | None = None) -> list[str]:
        """One scale-up invocation on the batch it receives (lambda.ts scaleUpHandler and scale-runners/
        scale-up.ts, v7.11.0). The event source mapping deletes every record the handler does not list as a
        batch item failure:
        - at runners_maximum_count, only ephemeral runners' messages are listed (handed back, received again
          after the visibility timeout); non-ephemeral runners' are deleted;
        - CreateFleet failing with an error in `scale_errors` lists the messages; one outside it deletes them;
        - a message not handed back gets a job-retry check where job_retry is on (publishRetryMessage,
          scale-runners/job-retry.ts), sent with its delay (here visible: moto's delays run on the wall clock).
        Returns what happened to each message: "handed back", "deleted" or "launched"."""
        received = self.sqs.receive_message(
            QueueUrl=self.build_url, MaxNumberOfMessages=10, VisibilityTimeout=0, AttributeNames=["All"]
        ).get("Messages", [])
        outcomes = []
        for message in received:
            if at_maximum:
                kept = self.ephemeral
                outcome = "handed back" if kept else "deleted"
            elif fleet_error is not None:
                kept = fleet_error in SCALE_ERRORS
                outcome = "handed back" if kept else "deleted"
            else:
                kept, outcome = False, "launched"
                self.launched.append(json.loads(message["Body"])["id"])
            if not kept:
                self.sqs.delete_message(QueueUrl=self.build_url, ReceiptHandle=message["ReceiptHandle"])
                if self.job_retry_url is not None:
                    self.sqs.send_message(QueueUrl=self.job_retry_url, MessageBody=message["Body"])
            outcomes.append(outcome)
        return outcomes

    def job_retry_meets_a_github_error(self) -> int:
        """The job-retry function on its checks when GitHub answers an error (a 502): lambda.ts jobRetryCheck
        (v7.11.0) catches it, logs `Error processing job retry: ...` at WARN and returns, so Lambda deletes the
        check and the job is never re-queued (upstream issue #5423). Returns the checks dropped."""
        assert self.job_retry_url is not None
        received = self.sqs.receive_message(QueueUrl=self.job_retry_url, MaxNumberOfMessages=10).get("Messages", [])
        for message in received:
            self.sqs.delete_message(QueueUrl=self.job_retry_url, ReceiptHandle=message["ReceiptHandle"])
        return len(received)


class Tracker:
    """queuewatch's track stage on the bus's events, at the test's clock."""

    def __init__(self, dynamodb: Any, table: str, config: Config) -> None:
        self.dynamodb, self.table, self.router = dynamodb, table, Router(config)
        create_jobs_table(dynamodb, table)

    def deliver(self, event: dict[str, Any], now: datetime) -> None:
        parsed = WorkflowJobBusEvent.model_validate(event)
        result = track(parsed.detail, self.router, self.dynamodb, self.table, now, occurred_at=parsed.time)
        assert result.outcome == "applied", result
