"""What the tests share: snapshots to order, the fixed clock they start from, template.yaml, and what SNS accepted."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import boto3
import pytest
import yaml

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.config import Config
from queuewatch.evaluate import EvaluationResult, Stack
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import CollectorFailure, Observation, Reading, RunnerTypeSnapshot, Snapshot, observed_at
from queuewatch_cli.common.template import TemplateLoader, read_template
from queuewatch_cli.devkit.handlers import REPO_ROOT
from queuewatch_cli.devkit.moto_tables import create_state_table

T0 = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)


def fake_aws_environment(patch: pytest.MonkeyPatch) -> None:
    """No test may reach real AWS: fake credentials, a fixed region, no endpoint override."""
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        patch.delenv(key, raising=False)
    patch.setenv("AWS_ACCESS_KEY_ID", "testing")
    patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    patch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    patch.setenv("AWS_REGION", "us-east-1")
    patch.setenv("POWERTOOLS_SERVICE_NAME", "queuewatch")
    patch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Queuewatch")


def arriving_now(observation: Snapshot | CollectorFailure) -> Callable[[], datetime]:
    """The evaluator's wall clock for a tick that arrives as it is made: it reads the observation's own time."""
    return lambda: observed_at(observation)


def minutes(n: float) -> datetime:
    return T0 + timedelta(minutes=n)


def runner_type(
    name: str,
    queue_size: float | None = 0,
    queue_time: float | None = 0,
    *,
    region: str = "us-east-1",
    team: str | None = None,
    missing: str = "no datapoints in the last 10m",
) -> RunnerTypeSnapshot:
    signals = {
        SignalName.QUEUE_SIZE: Reading.of(queue_size) if queue_size is not None else Reading.missing(missing),
        SignalName.QUEUE_TIME: Reading.of(queue_time) if queue_time is not None else Reading.missing(missing),
    }
    queue = "gh-ci-" + name.replace(".", "-") + "-queued-builds"
    return RunnerTypeSnapshot(name=name, region=region, queue_name=queue, team=team, signals=signals)


def snapshot(at: datetime, *runner_types: RunnerTypeSnapshot) -> Snapshot:
    return Snapshot(snapshot_id=f"snap-{at:%H%M%S}", collected_at=at, runner_types=list(runner_types))


CloudFormationLoader = TemplateLoader  # the template read as the build reads it: short tags as long form


def load_template() -> dict[str, Any]:
    """template.yaml as CloudFormation makes it: its Fn::ForEach loops unrolled and its nested applications
    (templates/) written into it, one logical id per resource."""
    return read_template(REPO_ROOT / "template.yaml")


def load_template_as_written() -> dict[str, Any]:
    """template.yaml as written, its loops still loops."""
    text = (REPO_ROOT / "template.yaml").read_text(encoding="utf-8")
    return yaml.load(text, Loader=CloudFormationLoader)  # type: ignore[no-any-return]


def shipped_pager_priorities() -> list[str]:
    """The priorities the shipped config's routes send to its pager: its pager receiver's filter policy."""
    from queuewatch.config.load import load_config

    routing = load_config(REPO_ROOT / "config" / "queuewatch.yaml").routing
    [pager] = [receiver for receiver in routing.receivers if receiver.pager]
    return list(routing.filter_policy(pager.name)["priority"])


@cache
def session() -> boto3.Session:
    """One botocore session for the test run: clients stay new per test, their models load once."""
    return boto3.Session()


class Inbox:
    """What SNS accepted for the topic: each Publish that returned a MessageId, in order."""

    def __init__(self, sns: Any) -> None:
        self._accepted: list[dict[str, Any]] = []
        self._asked = threading.local()
        self.attach(sns)

    def attach(self, sns: Any) -> None:
        """Record what this client publishes too."""
        sns.meta.events.register("before-parameter-build.sns.Publish", self._on_publish)
        sns.meta.events.register("after-call.sns.Publish", self._on_accepted)

    def _on_publish(self, params: dict[str, Any], **_: Any) -> None:
        message = params["Message"]
        if params.get("MessageStructure") == "json":  # one body per protocol: the alert is the default
            message = json.loads(message)["default"]
        self._asked.message = message

    def _on_accepted(self, parsed: dict[str, Any], **_: Any) -> None:
        if "MessageId" in parsed:
            self._accepted.append(json.loads(self._asked.message))

    def drain(self) -> list[dict[str, Any]]:
        out, self._accepted = self._accepted, []
        return out


@dataclass
class StackInMoto:
    """The stack's state table and topics in moto, as template.yaml deploys them, and the evaluator's view of them."""

    dynamodb: Any
    sns: Any
    stack: Stack

    @classmethod
    def create(
        cls,
        table: str = "state",
        *,
        name: str = "test",
        region: str = "us-east-1",
        chat: bool = False,
        clients: AwsClients | None = None,
    ) -> StackInMoto:
        """Clients from `clients` (retries, deadline) when given, else plain boto3 ones."""
        dynamodb = clients.dynamodb(region) if clients else boto3.client("dynamodb", region_name=region)
        sns = clients.sns(region) if clients else boto3.client("sns", region_name=region)
        create_state_table(dynamodb, table)
        alert_topic = sns.create_topic(Name=f"{table}-alerts")["TopicArn"]
        chat_topic = sns.create_topic(Name=f"{table}-chat")["TopicArn"] if chat else None
        stack = Stack(name=name, table=table, topic_arn=alert_topic, chat_topic_arn=chat_topic, region=region)
        return cls(dynamodb, sns, stack)

    def subscribe_queue(
        self, queue: str, topic_arn: str | None = None, attributes: dict[str, str] | None = None
    ) -> str:
        """An SQS queue subscribed to the alert topic (or `topic_arn`); its URL."""
        sqs = boto3.client("sqs", region_name=self.stack.region)
        url = sqs.create_queue(QueueName=queue)["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.sns.subscribe(
            TopicArn=topic_arn or self.stack.topic_arn, Protocol="sqs", Endpoint=arn, Attributes=attributes or {}
        )
        return url

    def evaluate(
        self,
        observation: Observation,
        config: Config,
        memory: EvaluatorMemory | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> EvaluationResult:
        """One tick; unless a clock is given, it arrives as it is made (the wall clock reads its own time)."""
        wall = arriving_now(observation) if clock is None else clock
        return evaluate(observation, config, self.dynamodb, self.sns, self.stack, memory=memory, clock=wall)


def with_signals(base: RunnerTypeSnapshot, **readings: Reading) -> RunnerTypeSnapshot:
    """The runner type with more signals: keyword names are SignalName values."""
    signals = dict(base.signals)
    signals.update({SignalName(name): reading for name, reading in readings.items()})
    return base.model_copy(update={"signals": signals})


def count(window_sum: float, usual: float, *, fleet_wide: bool | None = None) -> Reading:
    """A count signal: its total over the triage window and its usual total per window."""
    return Reading(
        value=window_sum / 15, age_seconds=60, window_sum=window_sum, baseline_sum=usual, fleet_wide=fleet_wide
    )


def level(value: float, *, first: float | None = None, last: float | None = None, mean: float | None = None) -> Reading:
    """A level signal: its latest value, where it stood over the window, and its baseline mean."""
    return Reading(value=value, age_seconds=60, window_first=first, window_last=last, baseline_mean=mean)


def race[T](copies: int, prepare: Callable[[], Callable[[], T]]) -> list[T]:
    """Prepare `copies` calls, each in its own thread, then release them together; their results.

    A call that raises fails the test here (with the first error), rather than vanishing with its thread.
    """
    barrier = threading.Barrier(copies)
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            call = prepare()
            barrier.wait()
            results.append(call())
        except BaseException as error:  # noqa: BLE001 - re-raised below, in the test's own thread
            errors.append(error)
            barrier.abort()  # the others stop waiting for this one

    threads = [threading.Thread(target=run) for _ in range(copies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
