"""`queuewatch demo`: the incident that motivated queuewatch, end to end, on an in-process moto.

14 jobs queue on linux.2xlarge, the oldest 114 minutes old, while the other
runner types are healthy. Jobs kept arriving as usual, but the scale-up Lambda
stopped consuming them 15 minutes ago: the triage names that from the queue's
AWS/SQS history. The real handlers run on real-shaped events; the page is
shown as the pager, the chat channel and an e-mail subscriber get it (--json: also
the raw SNS notification and the JSON alert). The next tick pages nothing; the
autoscaler then drains the queue and the resolve arrives; status, history and a
backtest show the operator's side; part 3 escalates a queue from P2 to P1 as one incident; part 4 pages on a
queue-time SLO's burn rate and shows `queuewatch slo`.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from unittest.mock import patch

import boto3

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.state_table.sent_log import read_entries
from queuewatch.alerting.alert import Alert
from queuewatch.base.wording import moment
from queuewatch.notifications import Origin
from queuewatch_cli.backtest.run import run_backtest
from queuewatch_cli.demo_decisions import show_decisions
from queuewatch_cli.demo_escalation import show_escalation
from queuewatch_cli.demo_slo import show_slo
from queuewatch_cli.history import history_lines
from queuewatch_cli.localrun import (
    REPO_ROOT,
    FakeContext,
    arrives_when_made,
    destination_record,
    load_event,
    load_handler_module,
    scheduled_event,
)
from queuewatch_cli.moto_tables import create_jobs_table, create_state_table
from queuewatch_cli.seed import put_evaluator_figures, put_queue_ages
from queuewatch_cli.stacks import Target
from queuewatch_cli.status import show_status
from queuewatch_cli.views import chat_view, email_view, pager_view

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_cloudwatch.type_defs import DimensionTypeDef, MetricDatumTypeDef
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

    def put_history(self, at: datetime) -> None:
        """The incident queue's last 3h15m in AWS/SQS: one job a minute arrives throughout, the scale-up
        Lambda deleted one a minute until 15 minutes ago and none since, and the backlog grew from 3."""
        dimensions: list[DimensionTypeDef] = [{"Name": "QueueName", "Value": INCIDENT_QUEUE}]

        def point(metric: str, minutes_ago: int, value: float) -> MetricDatumTypeDef:
            stamp = at - timedelta(minutes=minutes_ago)
            return {"MetricName": metric, "Dimensions": dimensions, "Timestamp": stamp, "Value": value}

        data = [point("NumberOfMessagesSent", ago, 1) for ago in range(1, 196)]
        data += [point("NumberOfMessagesDeleted", ago, 1) for ago in range(16, 196)]
        data += [point("ApproximateNumberOfMessagesVisible", ago, 3 + (15 - ago) * 11 / 14) for ago in range(1, 16)]
        data.append(point("ApproximateAgeOfOldestMessage", 15, 99 * 60))
        for start in range(0, len(data), 500):
            self.cloudwatch.put_metric_data(Namespace="AWS/SQS", MetricData=data[start : start + 500])

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

    def run(self) -> int:
        self.setup()
        start = self.start
        self.out(
            "queuewatch demo: 14 jobs queued on linux.2xlarge, the oldest 114 minutes old; the scale-up Lambda "
            "stopped consuming 15 minutes ago; other runner types idle."
        )

        self.put_history(start)
        self.put_ages(start, 114 * 60)
        first = self.show(f"tick 1 at {start:%H:%M}", self.tick(start), ("pager", "chat", "email"))

        at = start + timedelta(minutes=1)
        self.put_ages(at, 115 * 60)
        second = self.show(f"tick 2 at {at:%H:%M} (still queueing)", self.tick(at))
        # What CloudWatch extracts from the evaluator's EMF lines (moto does not), for status's figures.
        namespace = DEMO_ENV["POWERTOOLS_METRICS_NAMESPACE"]
        stack = DEMO_ENV["STACK_NAME"]
        put_evaluator_figures(self.cloudwatch, namespace, {"linux.2xlarge": (14, 115 * 60)}, at, stack)
        self.out(f"\n=== queuewatch status --stack {stack}, while the incident fires:")
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        self.out(
            show_status(dynamodb, STATE_TABLE, at + timedelta(seconds=30), False, self.cloudwatch, namespace, stack)
        )

        depth = self.sqs.get_queue_attributes(QueueUrl=self.urls[INCIDENT_QUEUE], AttributeNames=["All"])["Attributes"]
        self.out(
            f"\nThe autoscaler's queue was only read: {depth['ApproximateNumberOfMessages']} visible, "
            f"{depth['ApproximateNumberOfMessagesNotVisible']} in flight. The autoscaler now starts runners "
            "and drains it."
        )
        self.sqs.purge_queue(QueueUrl=self.urls[INCIDENT_QUEUE])
        at = start + timedelta(minutes=2)
        self.put_ages(at, 0)
        third = self.show(f"tick 3 at {at:%H:%M} (drained; keep_firing_for 5m starts)", self.tick(at))

        at = start + timedelta(minutes=7)
        self.put_ages(at, 0)
        fourth = self.show(f"tick 4 at {at:%H:%M} (clear for 5m)", self.tick(at))
        self.history(start - timedelta(minutes=1), at + timedelta(minutes=1))

        ok = (
            len(first) == 1
            and not second
            and not third
            and len(fourth) == 1
            and json.loads(fourth[0]["Message"])["status"] == "resolved"
        )
        replayed = self.replay(start)
        self.out(
            "\n"
            + (
                "demo OK: one page, no duplicate, one resolve; the backtest of its history pages at the same "
                "minute, and a 150-job threshold would not have paged"
                if ok and replayed
                else "demo FAILED: see the ticks above"
            )
        )
        tracked_ok = self.run_tracked(start + timedelta(minutes=10))
        escalated = show_escalation(self, start + timedelta(minutes=20), Path(os.environ["QUEUEWATCH_CONFIG"]))
        decided = show_decisions(self.out, Path(os.environ["QUEUEWATCH_CONFIG"]), JOBS_TABLE, REGION, start)
        slo_ok = show_slo(self, JOBS_TABLE, Path(os.environ["QUEUEWATCH_CONFIG"]))
        self.out(
            "\nThe demo's state ends with it. To try status, history, silences and backtest on a local stack: "
            "queuewatch local up (and queuewatch local down to stop it)."
        )
        return 0 if ok and replayed and tracked_ok and escalated and decided and slo_ok else 1

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

    def history(self, since: datetime, until: datetime) -> None:
        """`queuewatch history` over the incident: what the evaluator logged as it sent."""
        stack = DEMO_ENV["STACK_NAME"]
        self.out(f"\n=== queuewatch history --stack {stack} --since {since:%H:%M}:")
        target = Target(stack, REGION, STATE_TABLE)
        entries = read_entries(boto3.client("dynamodb", region_name=REGION), STATE_TABLE, since, until)
        for line in history_lines([(target, entries)], since, until, as_json=False):
            self.out(line)

    def replay(self, start: datetime) -> bool:
        """`queuewatch backtest` on the history the demo put in CloudWatch, from its first tick, against the
        same config with a 150-job threshold; True if only the first pages, at the demo's minute."""
        config = Path(os.environ["QUEUEWATCH_CONFIG"])
        with tempfile.TemporaryDirectory(prefix="queuewatch-demo-") as folder:  # removed when the replay ends
            raised = Path(folder) / "queue-size-150.yaml"
            text = config.read_text()
            raised.write_text(text.replace("queue_size: 0 }", "queue_size: 150 }", 1))
            end = start + timedelta(minutes=8)
            command = (
                f"queuewatch backtest --config {config.relative_to(REPO_ROOT)} --compare queue-size-150.yaml "
                f"--from {start:%Y-%m-%dT%H:%M} --to {end:%Y-%m-%dT%H:%M}"
            )
            self.out(
                f"\n=== {command}\n(the demo's history, replayed through the same rules; --plot FILE.png draws it)"
            )
            lines: list[str] = []
            args = argparse.Namespace(
                config=str(config),
                compare=str(raised),
                start=start.isoformat(),
                end=end.isoformat(),
                plot=None,
                region=None,
                stack=None,
                quiet=True,
            )
            code = run_backtest(args, AwsClients(), now=end + timedelta(minutes=1), out=lines.append)
            changed = raised.read_text() != text
        for line in lines:
            self.out(line.replace(str(raised), "queue-size-150.yaml").replace(str(config), str(config.name)))
        report = "\n".join(lines)
        only_a = report.split("pages only A sends: ", 1)[-1]
        return (
            code == 0
            and changed
            and only_a.startswith(f"1\n    {moment(start)} -> ")
            and "pages only B sends: 0" in report
        )

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

    def tracked_ticks(self, at: datetime) -> tuple[list[dict[str, Any]], ...]:
        """Part 2's ticks: the jobs queue, then start; what each tick paged."""
        created = at - timedelta(minutes=114)
        jobs = range(9_100_000, 9_100_014)
        for job_id in jobs:
            self.track("queued", job_id, created)
        self.put_ages(at, 0)
        fifth = self.show(f"tick 5 at {at:%H:%M} (jobs queued, no scale-up request)", self.tick(at), ("email",))
        started = at + timedelta(seconds=30)
        self.out(f"\nAt {started:%H:%M:%S} runners take the 14 jobs: their in_progress events arrive.")
        for job_id in jobs:
            self.track("in_progress", job_id, created, started)
        at += timedelta(minutes=1)
        self.put_ages(at, 0)
        sixth = self.show(f"tick 6 at {at:%H:%M} (jobs started; keep_firing_for 5m starts)", self.tick(at))
        at += timedelta(minutes=5)
        self.put_ages(at, 0)
        seventh = self.show(f"tick 7 at {at:%H:%M} (clear for 5m)", self.tick(at))
        return fifth, sixth, seventh

    def run_tracked(self, at: datetime) -> bool:
        """The second incident, which only tracking sees: GitHub holds 14 jobs queued for 114 minutes while
        the autoscaler's queue is empty (its runners never took the jobs, or the requests were dropped)."""
        self.out(
            "\n\nPart 2, with job tracking on (AutoscalerEventBusName set): GitHub's workflow_job events reach "
            "TrackFunction. 14 jobs have waited 114 minutes on linux.2xlarge, and the autoscaler's queue is empty: "
            "the scale-up Lambda took their requests, and no runner took the jobs."
        )
        create_jobs_table(boto3.client("dynamodb", region_name=REGION), JOBS_TABLE)
        # What the template gives the functions when tracking is on, for this part only.
        with patch.dict(os.environ, {"JOBS_TABLE": JOBS_TABLE}):
            fifth, sixth, seventh = self.tracked_ticks(at)
        paged = [json.loads(envelope["Message"]) for envelope in fifth]
        ok = (
            len(paged) == 1
            and paged[0]["runner_types"][0]["triage"]["findings"][0]["cause"] == "no_scale_up_request"
            and paged[0]["max_queue_time_seconds"] == 114 * 60
            and not sixth
            and len(seventh) == 1
            and json.loads(seventh[0]["Message"])["status"] == "resolved"
        )
        verdict = "tracked jobs paged, dropped requests named first, one resolve"
        self.out("\n" + (f"demo OK: {verdict}" if ok else "demo FAILED: see the ticks above"))
        return ok


def run_demo(
    out: Callable[[str], None] = print,
    *,
    raw: bool = False,
    endpoint_url: str | None = None,
    after: Callable[[Callable[[str], Any]], None] | None = None,
    start: datetime | None = None,
) -> int:
    """The demo on an in-process moto, or on the moto server at `endpoint_url` (`queuewatch local up`: then
    its timeline starts at `start`, in the past, and an incident is left firing now), then `after` with a
    client maker, while the demo's environment still holds."""
    with ExitStack() as stack:
        # The demo turns EMF output off to keep the page readable; Powertools warns about that.
        stack.enter_context(warnings.catch_warnings())
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        # The demo's environment ends with the demo.
        env = {**DEMO_ENV, "AWS_ENDPOINT_URL": endpoint_url} if endpoint_url else DEMO_ENV
        stack.enter_context(patch.dict(os.environ, env))
        if endpoint_url is None:
            from moto import mock_aws  # a development dependency: only the demo needs it

            stack.enter_context(mock_aws())
        demo = Demo(out, raw, start)
        code = demo.run()
        if endpoint_url is not None:
            demo.leave_incident(datetime.now(UTC).replace(second=0, microsecond=0))
        if after is not None:
            after(lambda service: boto3.client(service, region_name=REGION))  # type: ignore[call-overload]
        return code
    return 1  # pragma: no cover - ExitStack does not swallow exceptions
