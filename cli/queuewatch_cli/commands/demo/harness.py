"""The demo's world: an in-process moto (or the local stack's moto server) holding the demo's queues, tables
and topics, the real handlers run on real-shaped events, and what each tick paged as people see it. The demo's
parts (incident.py, tracked.py, escalation.py, slo.py, decisions.py) each take this harness; run.py plays them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import boto3

from queuewatch.alerting.alert import Alert
from queuewatch.notifications import Origin
from queuewatch_cli.commands.demo.views import chat_view, email_view, pager_view
from queuewatch_cli.devkit.handlers import (
    REPO_ROOT,
    FakeContext,
    arrives_when_made,
    destination_record,
    load_event,
    load_handler_module,
    scheduled_event,
)
from queuewatch_cli.devkit.moto_tables import create_state_table
from queuewatch_cli.devkit.seed import put_evaluator_figures, put_queue_ages

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_sqs import SQSClient

REGION = "us-east-1"
STATE_TABLE = "queuewatch-demo-state"
JOBS_TABLE = "queuewatch-demo-jobs"
INCIDENT_QUEUE = "gh-ci-linux-2xlarge-queued-builds"
HEALTHY_QUEUES = {
    "gh-ci-linux-4xlarge-queued-builds": 0,
    "gh-ci-linux-g5-4xlarge-nvidia-gpu-queued-builds": 0,
    "gh-ci-linux-arm64-2xlarge-queued-builds": 0,  # found by discovery, not named in the config
}
DEMO_ENV = {
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "QUEUEWATCH_CONFIG": str(REPO_ROOT / "config" / "queuewatch.yaml"),
    "STATE_TABLE": STATE_TABLE,
    "STACK_NAME": "queuewatch-demo",
    "DASHBOARD_NAME": "queuewatch-demo-queuewatch",  # template.yaml: ${AWS::StackName}-queuewatch
    "POWERTOOLS_SERVICE_NAME": "queuewatch",
    "POWERTOOLS_METRICS_NAMESPACE": "Queuewatch",
    "POWERTOOLS_LOG_LEVEL": "WARNING",
    "POWERTOOLS_METRICS_DISABLED": "true",
}


def job_message(job_id: int) -> str:
    """A queued-build message shaped like the terraform-aws-github-runner webhook's."""
    return json.dumps(
        {
            "id": job_id,
            "eventType": "workflow_job",
            "repositoryName": "pytorch",
            "repositoryOwner": "pytorch",
            "installationId": 12345678,
            "queueId": INCIDENT_QUEUE,
            "repoOwnerType": "Organization",
        }
    )


def put_age_datapoints(cloudwatch: CloudWatchClient, at: datetime, incident_age: float) -> None:
    """The demo's queues' ages: the incident's, and the healthy queues' young ones."""
    put_queue_ages(cloudwatch, {INCIDENT_QUEUE: incident_age, **HEALTHY_QUEUES}, at)


class Demo:
    """The demo's world: its clients, the handlers it runs, its queues and inbox; what a tick paged, as seen."""

    def __init__(self, out: Callable[[str], None], raw: bool = False, start: datetime | None = None) -> None:
        self.out = out
        self.raw = raw  # also the raw SNS notification and JSON alert of every page
        self.sqs: SQSClient = boto3.client("sqs", region_name=REGION)
        self.cloudwatch: CloudWatchClient = boto3.client("cloudwatch", region_name=REGION)
        self.collect = load_handler_module("collect").lambda_handler
        self.evaluator = load_handler_module("evaluate")
        self.urls: dict[str, str] = {}
        self.inbox_url = ""
        self.start = start or datetime.now(UTC).replace(second=0, microsecond=0)
        self.tracker = load_handler_module("track")  # reads JOBS_TABLE when invoked, as Lambda would

    def setup(self) -> None:
        for name in [INCIDENT_QUEUE, *HEALTHY_QUEUES]:
            self.urls[name] = self.sqs.create_queue(QueueName=name)["QueueUrl"]
        create_state_table(boto3.client("dynamodb", region_name=REGION), STATE_TABLE)
        sns = boto3.client("sns", region_name=REGION)
        topic_arn = sns.create_topic(Name="queuewatch-demo-alerts")["TopicArn"]
        os.environ["ALERT_TOPIC_ARN"] = topic_arn
        self.inbox_url = self.sqs.create_queue(QueueName="demo-pager-inbox")["QueueUrl"]
        inbox_arn = self.sqs.get_queue_attributes(QueueUrl=self.inbox_url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=inbox_arn)
        for job_id in range(14):
            self.sqs.send_message(QueueUrl=self.urls[INCIDENT_QUEUE], MessageBody=job_message(9_000_000 + job_id))

    def put_ages(self, at: datetime, incident_age: float) -> None:
        put_age_datapoints(self.cloudwatch, at, incident_age)

    def tick(self, at: datetime) -> dict[str, Any]:
        event = scheduled_event(at)
        snapshot = self.collect(event, FakeContext("queuewatch-collect"))
        record = destination_record(event, snapshot, at=at + timedelta(seconds=3))
        arrives_when_made(self.evaluator, record)  # the demo's minutes pass in seconds
        return self.evaluator.lambda_handler(record, FakeContext("queuewatch-evaluate"))  # type: ignore[no-any-return]

    def received(self) -> list[dict[str, Any]]:
        messages = self.sqs.receive_message(QueueUrl=self.inbox_url, MaxNumberOfMessages=10).get("Messages", [])
        for message in messages:
            self.sqs.delete_message(QueueUrl=self.inbox_url, ReceiptHandle=message["ReceiptHandle"])
        return [json.loads(m["Body"]) for m in messages]

    def show(
        self, label: str, result: dict[str, Any], views: tuple[str, ...] = ("pager", "email")
    ) -> list[dict[str, Any]]:
        """What the tick sent, as people see it: `views` of a page (pager, chat, email); a resolve in one line each."""
        pages = self.received()
        paged = "nothing paged" if not pages else f"{len(pages)} page(s)"
        self.out(f"\n=== {label}: evaluation {result['outcome']}, {paged}")
        origin = Origin.of_topic(os.environ["ALERT_TOPIC_ARN"])
        for envelope in pages:
            alert_json = json.loads(envelope["Message"])
            if self.raw:
                self.out("--- the SNS notification, as an SQS subscriber receives it:")
                self.out(json.dumps(envelope, indent=2))
                self.out("--- its Message, the queuewatch alert:")
                self.out(json.dumps(alert_json, indent=2))
            alert = Alert.model_validate(alert_json)
            if alert.status == "resolved":
                self.out(f"resolved: {alert.subject}")
                views = ("pager",) if not self.raw else views
            drawn = {"pager": pager_view(alert, origin), "chat": chat_view(alert), "email": email_view(alert)}
            for view in views:
                for line in drawn[view]:
                    self.out(line)
        return pages

    def track(
        self,
        action: str,
        job_id: int,
        created: datetime,
        started: datetime | None = None,
        labels: list[str] | None = None,
    ) -> None:
        """One workflow_job event through TrackFunction's handler, as the autoscaler's bus delivers it."""
        event = load_event(f"track_{action}.json")
        job = event["detail"]["workflow_job"]
        if labels is not None:
            job["labels"] = labels
        run_id = 10_200_000_000 + job_id
        job.update(id=job_id, run_id=run_id, created_at=created.isoformat(), status=action)
        job["html_url"] = f"https://github.com/pytorch/pytorch/actions/runs/{run_id}/job/{job_id}"
        job["started_at"] = (started or created).isoformat()
        event["time"] = (started or created).isoformat()
        self.tracker.lambda_handler(event, FakeContext("queuewatch-track"))

    def leave_incident(self, at: datetime) -> None:
        """For the local stack: 5 jobs queue 40 minutes on linux.4xlarge at `at`, paged and left firing."""
        queue = "gh-ci-linux-4xlarge-queued-builds"
        for job_id in range(5):
            self.sqs.send_message(QueueUrl=self.urls[queue], MessageBody=job_message(9_200_000 + job_id))
        put_queue_ages(self.cloudwatch, {**dict.fromkeys([INCIDENT_QUEUE, *HEALTHY_QUEUES], 0), queue: 40 * 60}, at)
        self.tick(at)
        self.received()
        namespace, stack = DEMO_ENV["POWERTOOLS_METRICS_NAMESPACE"], DEMO_ENV["STACK_NAME"]
        put_evaluator_figures(self.cloudwatch, namespace, {"linux.4xlarge": (5, 40 * 60)}, at, stack)
