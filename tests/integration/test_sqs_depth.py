"""The lean GetQueueAttributes (adapters/sqs_depth.py) answers as botocore's client does: the same depths and
the same errors, against a moto server, through the benchmark's latency proxy and under mock_aws; it
retries what botocore retries, within the same budget, honours the tick's deadline, and the benchmark's
counters see its calls."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, ReadTimeoutError
from conftest import RetrySleeps
from faults import inject

from bench.counting import CallLog, counting_session
from bench.latency_proxy import LatencyProxy
from bench.motoserver import MotoServer
from queuewatch.adapters.aws.clients import AwsClients, Deadline, retry_delay_bound, total_attempts
from queuewatch.adapters.aws.errors import DeadlineExceeded, describe
from queuewatch.adapters.sqs import QueueDepth, read_queue_depth

REGION = "us-east-1"


def make_queues(client: Any) -> dict[str, str]:
    """Queues holding visible, in-flight and delayed messages, and an empty one."""
    urls = {name: client.create_queue(QueueName=name)["QueueUrl"] for name in ("visible", "mixed", "empty")}
    for _ in range(3):
        client.send_message(QueueUrl=urls["visible"], MessageBody="job")
    for _ in range(2):
        client.send_message(QueueUrl=urls["mixed"], MessageBody="job")
    client.receive_message(QueueUrl=urls["mixed"], MaxNumberOfMessages=1, VisibilityTimeout=600)
    client.send_message(QueueUrl=urls["mixed"], MessageBody="later", DelaySeconds=600)
    return urls


@pytest.fixture(scope="module")
def moto_server() -> Iterator[MotoServer]:
    with MotoServer() as server:
        yield server


@pytest.fixture
def endpoint(moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> str:
    moto_server.reset()
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.endpoint)
    return moto_server.endpoint


def test_the_same_depths_and_errors_as_botocore_against_a_moto_server_and_through_the_proxy(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls = make_queues(boto3.client("sqs", region_name=REGION))
    gone = boto3.client("sqs", region_name=REGION).create_queue(QueueName="gone")["QueueUrl"]
    boto3.client("sqs", region_name=REGION).delete_queue(QueueUrl=gone)
    with LatencyProxy(endpoint, latency_ms=1) as proxy:
        for via in (endpoint, proxy.endpoint):
            monkeypatch.setenv("AWS_ENDPOINT_URL", via)
            clients = AwsClients(boto3.Session())
            lean, botocore_client = clients.queue_depths(REGION), clients.sqs(REGION)
            assert {n: lean.read(u) for n, u in urls.items()} == {
                "visible": QueueDepth(visible=3, in_flight=0, delayed=0),
                "mixed": QueueDepth(visible=1, in_flight=1, delayed=1),
                "empty": QueueDepth(visible=0, in_flight=0, delayed=0),
            }
            assert {n: lean.read(u) for n, u in urls.items()} == {
                n: read_queue_depth(botocore_client, u) for n, u in urls.items()
            }
            with pytest.raises(ClientError) as lean_error:
                lean.read(gone)
            with pytest.raises(ClientError) as botocore_error:
                read_queue_depth(botocore_client, gone)
            assert describe(lean_error.value) == describe(botocore_error.value)
            assert "NonExistentQueue" in describe(lean_error.value)


def test_the_benchmark_counts_its_calls(endpoint: str) -> None:
    urls = make_queues(boto3.client("sqs", region_name=REGION))
    log = CallLog()
    clients = AwsClients(counting_session(log))
    for url in urls.values():
        clients.queue_depths(REGION).read(url)
    calls, attempts, _ = log.take()
    assert calls["sqs.GetQueueAttributes"] == 3
    assert attempts == 3


def test_under_mock_aws_too(aws: None) -> None:
    assert "AWS_ENDPOINT_URL" not in os.environ
    urls = make_queues(boto3.client("sqs", region_name=REGION))
    clients = AwsClients(boto3.Session())
    assert clients.queue_depths(REGION).read(urls["mixed"]) == QueueDepth(visible=1, in_flight=1, delayed=1)


def test_throttling_is_retried_within_the_budget(aws: None, retry_sleeps: RetrySleeps) -> None:
    urls = make_queues(boto3.client("sqs", region_name=REGION))
    clients = AwsClients(boto3.Session())
    fault = inject(clients.sqs(REGION), "GetQueueAttributes", "throttling", failing_attempts=2)
    assert clients.queue_depths(REGION).read(urls["visible"]).visible == 3
    assert (fault.attempts, fault.faulted) == (3, 2)
    assert len(retry_sleeps) == 2
    assert all(wait <= retry_delay_bound(n) for n, wait in enumerate(retry_sleeps, start=1))


def test_what_botocore_does_not_retry_fails_at_once_and_reads_alike(aws: None, retry_sleeps: RetrySleeps) -> None:
    urls = make_queues(boto3.client("sqs", region_name=REGION))
    clients = AwsClients(boto3.Session())
    fault = inject(clients.sqs(REGION), "GetQueueAttributes", "access-denied")
    with pytest.raises(ClientError) as error:
        clients.queue_depths(REGION).read(urls["visible"])
    assert describe(error.value).startswith("AccessDenied")
    assert fault.attempts == 1 and retry_sleeps == []


def test_a_timeout_on_every_attempt_gives_up_after_botocores_attempts(aws: None, retry_sleeps: RetrySleeps) -> None:
    urls = make_queues(boto3.client("sqs", region_name=REGION))
    clients = AwsClients(boto3.Session())
    fault = inject(clients.sqs(REGION), "GetQueueAttributes", "read-timeout")
    with pytest.raises(ReadTimeoutError):
        clients.queue_depths(REGION).read(urls["visible"])
    assert fault.attempts == total_attempts(clients._config)
    assert len(retry_sleeps) == fault.attempts - 1


def test_nothing_is_sent_after_the_ticks_deadline(aws: None) -> None:
    urls = make_queues(boto3.client("sqs", region_name=REGION))
    log = CallLog()
    clients = AwsClients(counting_session(log))
    clients.start_tick(Deadline(at=10.0, clock=lambda: 11.0))
    with pytest.raises(DeadlineExceeded):
        clients.queue_depths(REGION).read(urls["visible"])
    assert log.take()[1] == 0
