"""Every AWS call retries in botocore's standard mode, boundedly; the tick deadline keeps a tick inside its timeout.

The clients are the ones the functions use (AwsClients, RETRY_CONFIG), against moto,
with faults injected below botocore's retry machinery (tests/faults.py). No test
sleeps: botocore's waits are recorded (conftest.retry_sleeps) and, where time
matters, a fake clock advances by each attempt's timeout and each wait.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.config import Config as BotoConfig
from botocore.exceptions import ClientError, ConnectTimeoutError, ReadTimeoutError
from botocore.retries import standard
from conftest import RetrySleeps
from faults import FAULTS, RETRIED_FAULTS, inject
from moto import mock_aws
from support import T0, load_template

from queuewatch.adapters.aws.clients import (
    RETRY_CONFIG,
    TICK_MARGIN_SECONDS,
    AwsClients,
    Deadline,
    retry_delay_bound,
    total_attempts,
    worst_case_call_seconds,
    worst_case_tail_seconds,
)
from queuewatch.adapters.aws.errors import DeadlineExceeded
from queuewatch_cli.devkit.moto_tables import create_state_table

QUEUE = "gh-ci-linux-2xlarge-queued-builds"
METRIC_QUERY = {
    "Id": "q1",
    "MetricStat": {
        "Metric": {"Namespace": "AWS/SQS", "MetricName": "ApproximateAgeOfOldestMessage"},
        "Period": 60,
        "Stat": "Maximum",
    },
}
FAKE_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}
KEY = {"pk": {"S": "queuewatch"}, "sk": {"S": "probe"}}

# Every AWS call the functions make: (service, the call).
CALLS: dict[str, tuple[str, Callable[[Any, dict[str, str]], Any]]] = {
    "GetQueueAttributes": ("sqs", lambda c, w: c.get_queue_attributes(QueueUrl=w["queue"], AttributeNames=["All"])),
    "ListQueues": ("sqs", lambda c, w: c.list_queues(QueueNamePrefix="gh-ci-")),
    "GetMetricData": (
        "cloudwatch",
        lambda c, w: c.get_metric_data(
            MetricDataQueries=[METRIC_QUERY], StartTime=T0 - timedelta(minutes=10), EndTime=T0
        ),
    ),
    "Query": (
        "dynamodb",
        lambda c, w: c.query(
            TableName="state", KeyConditionExpression="pk = :p", ExpressionAttributeValues={":p": {"S": "queuewatch"}}
        ),
    ),
    "PutItem": ("dynamodb", lambda c, w: c.put_item(TableName="state", Item=KEY)),
    "DeleteItem": ("dynamodb", lambda c, w: c.delete_item(TableName="state", Key=KEY)),
    "Publish": ("sns", lambda c, w: c.publish(TopicArn=w["topic"], Message="probe")),
}
RAISED = {
    "read-timeout": ReadTimeoutError,
    "connect-timeout": ConnectTimeoutError,
    "throttling": ClientError,
    "5xx": ClientError,
    "access-denied": ClientError,
}


class LongestWaits(standard.ExponentialBackoff):
    """botocore's backoff with its random factor at 1: every wait is its longest."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{**kwargs, "random": lambda: 1.0})


class World(dict[str, str]):
    """A queue, the state table and the topic in one moto for the whole module; one botocore session."""

    session: boto3.Session

    def clients(self) -> AwsClients:
        """Fresh clients (faults and botocore's retry quota are per client) on the shared session."""
        return AwsClients(self.session)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with pytest.MonkeyPatch.context() as env, mock_aws():
        for key, value in FAKE_CREDENTIALS.items():
            env.setenv(key, value)
        made = World()
        made.session = boto3.Session()
        clients = made.clients()
        made["queue"] = clients.sqs("us-east-1").create_queue(QueueName=QUEUE)["QueueUrl"]
        create_state_table(clients.dynamodb("us-east-1"), "state")
        made["topic"] = clients.sns("us-east-1").create_topic(Name="alerts")["TopicArn"]
        yield made


def client_for(clients: AwsClients, service: str) -> Any:
    return getattr(clients, service)("us-east-1")


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("operation", sorted(CALLS))
def test_every_call_retries_transient_faults_in_standard_mode_and_gives_up_in_bounded_attempts(
    world: World, retry_sleeps: RetrySleeps, operation: str, fault: str
) -> None:
    service, call = CALLS[operation]
    client = client_for(world.clients(), service)
    injected = inject(client, operation, fault)
    with pytest.raises(RAISED[fault]):
        call(client, world)
    expected = total_attempts(RETRY_CONFIG) if fault in RETRIED_FAULTS else 1
    assert injected.attempts == expected == len(retry_sleeps) + 1
    assert all(0 <= wait <= retry_delay_bound(n) for n, wait in enumerate(retry_sleeps, start=1))


def test_max_attempts_3_means_four_attempts() -> None:
    # botocore counts `max_attempts` as retries (and rewrites it as total_max_attempts once a client is made).
    assert BotoConfig(retries={"mode": "standard", "max_attempts": 3}).retries["max_attempts"] == 3  # type: ignore[attr-defined]
    assert total_attempts(BotoConfig(retries={"mode": "standard", "max_attempts": 3})) == 4
    assert RETRY_CONFIG.retries["mode"] == "standard"  # type: ignore[attr-defined]
    assert total_attempts(RETRY_CONFIG) == 4


@pytest.mark.parametrize(("retry_after", "waits"), [(None, [1.0, 2.0, 4.0]), ("60000", [6.0, 7.0, 9.0])])
def test_a_throttled_call_waits_as_standard_mode_says_and_no_longer_than_the_bound(
    world: World,
    retry_sleeps: RetrySleeps,
    monkeypatch: pytest.MonkeyPatch,
    retry_after: str | None,
    waits: list[float],
) -> None:
    monkeypatch.setattr(standard, "ExponentialBackoff", LongestWaits)
    sqs = world.clients().sqs("us-east-1")  # made after the patch: its retry handler has the longest waits
    headers = {"x-amz-retry-after": retry_after} if retry_after else {}
    throttled = inject(sqs, "GetQueueAttributes", "throttling", headers=headers)
    with pytest.raises(ClientError, match="RequestThrottled"):
        sqs.get_queue_attributes(QueueUrl=world["queue"])
    assert throttled.attempts == 4
    assert retry_sleeps == waits
    if retry_after:  # AWS asked for a long wait: botocore caps it, and so does the bound
        assert retry_sleeps == [retry_delay_bound(n) for n in (1, 2, 3)]


def test_a_call_that_recovers_within_its_attempts_succeeds(world: World) -> None:
    sqs = world.clients().sqs("us-east-1")
    throttled = inject(sqs, "GetQueueAttributes", "throttling", failing_attempts=2)
    attributes = sqs.get_queue_attributes(QueueUrl=world["queue"], AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "0"
    assert (throttled.attempts, throttled.faulted) == (3, 2)


TICK_FUNCTIONS = ("CollectFunction", "EvaluateFunction")
"""The functions a schedule drives, whose tick has a deadline. The track functions apply one event each:
one that runs out of time fails, and Lambda retries it (the bus) or GitHub redelivers it (the webhook)."""


def function_timeouts() -> dict[str, int]:
    resources = load_template()["Resources"]
    return {name: resources[name]["Properties"]["Timeout"] for name in TICK_FUNCTIONS}


@pytest.mark.parametrize(("function", "timeout"), sorted(function_timeouts().items()))
def test_the_worst_case_tick_ends_inside_the_function_timeout_and_the_schedule(function: str, timeout: int) -> None:
    attempt = 2 + 5  # connect_timeout + read_timeout
    assert worst_case_call_seconds() == 4 * attempt + (6 + 7 + 9) == 50  # one call alone may outlast the timeout:
    assert worst_case_tail_seconds() == attempt + 9 == 16  # hence the deadline, and what may run past it
    clock = [100.0]
    deadline = Deadline.for_tick(timeout, clock=lambda: clock[0])
    budget = deadline.at - 100.0
    tick_bound = budget + worst_case_tail_seconds()
    print(f"{function}: Timeout {timeout}s; calls start until {budget:g}s; every call ends by {tick_bound:g}s")
    assert budget == timeout - 16 - TICK_MARGIN_SECONDS == 27
    assert tick_bound == timeout - TICK_MARGIN_SECONDS < timeout < 60  # the schedule: rate(1 minute)


@pytest.mark.parametrize("remaining", [45.0, 44.0, 40.5, 37.0, 31.0])
def test_a_tick_of_calls_that_all_fail_slowly_ends_by_its_bound(
    world: World, monkeypatch: pytest.MonkeyPatch, remaining: float
) -> None:
    """Simulated time: each attempt takes its full timeouts, each retry its longest wait, AWS asks for more."""
    clock = [0.0]

    def advance(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(standard, "ExponentialBackoff", LongestWaits)
    monkeypatch.setattr("botocore.endpoint.time", type("FakeTime", (), {"sleep": staticmethod(advance)}))
    clients = world.clients()
    clients.start_tick(Deadline.for_tick(remaining, clock=lambda: clock[0]))
    sqs = clients.sqs("us-east-1")
    inject(
        sqs,
        "GetQueueAttributes",
        "throttling",
        headers={"x-amz-retry-after": "60000"},
        on_attempt=lambda: advance(2 + 5),
    )
    outcomes = []
    while True:  # a tick that keeps making calls (like the evaluator's writes) until refused
        try:
            sqs.get_queue_attributes(QueueUrl=world["queue"])
        except DeadlineExceeded:
            outcomes.append("refused")
            break
        except ClientError:
            outcomes.append("failed")
    assert outcomes[-1] == "refused"
    # Calls start until remaining - tail - margin; what runs past that ends within the tail.
    assert clock[0] <= remaining - TICK_MARGIN_SECONDS


def test_after_the_deadline_no_request_is_sent(world: World) -> None:
    clients = world.clients()
    clients.start_tick(Deadline(at=0.0, clock=lambda: 1.0))
    sqs = clients.sqs("us-east-1")
    sent = inject(sqs, "GetQueueAttributes", "throttling", failing_attempts=0)  # counts attempts, fails none
    with pytest.raises(DeadlineExceeded, match="GetQueueAttributes not sent: the tick's time budget ran out"):
        sqs.get_queue_attributes(QueueUrl=world["queue"])
    assert sent.calls == 1 and sent.attempts == 0
    clients.start_tick(None)
    assert sqs.get_queue_attributes(QueueUrl=world["queue"])["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert sent.attempts == 1
