"""Shared fixtures: fake credentials, an in-process moto with atomic conditional writes, no retry sleeps;
hypothesis profiles."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace

import botocore.endpoint
import pytest
from hypothesis import HealthCheck, settings
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend

from queuewatch.adapters import sqs_depth

# Property tests: modest and the same examples every run by default, so `make test` stays quick and
# CI's verdict does not depend on a draw; HYPOTHESIS_PROFILE=thorough digs deeper, with fresh draws.
settings.register_profile("default", max_examples=15, deadline=None, print_blob=True, derandomize=True)
settings.register_profile(
    "thorough", max_examples=400, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="session")
def atomic_dynamodb_writes() -> Iterator[None]:
    """DynamoDB applies each conditional write atomically; moto checks the condition, then writes,
    with nothing between, so two threads can both pass `version = :expected`. One lock around
    moto's writes gives the tests that race real threads DynamoDB's guarantee back. Re-entrant: moto's
    transact_write_items makes its writes through the others."""
    lock = threading.RLock()

    def locked(write: Callable[..., object]) -> Callable[..., object]:
        def under_lock(*args: object, **kwargs: object) -> object:
            with lock:
                return write(*args, **kwargs)

        return under_lock

    with pytest.MonkeyPatch.context() as patch:
        for name in ("put_item", "update_item", "delete_item", "transact_write_items"):
            patch.setattr(DynamoDBBackend, name, locked(getattr(DynamoDBBackend, name)))
        yield


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may reach real AWS: fake credentials, a fixed region, no endpoint override."""
    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", "queuewatch")
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "Queuewatch")


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


class RetrySleeps(list[float]):
    """botocore's waits between retries, recorded instead of slept."""


@pytest.fixture(autouse=True)
def retry_sleeps(monkeypatch: pytest.MonkeyPatch) -> RetrySleeps:
    """No test sleeps on the wall clock: botocore's retry backoff (endpoint.time.sleep), and the lean
    GetQueueAttributes' (adapters/sqs_depth.py), only record."""
    sleeps = RetrySleeps()
    monkeypatch.setattr(botocore.endpoint, "time", SimpleNamespace(sleep=sleeps.append))
    monkeypatch.setattr(sqs_depth, "time", SimpleNamespace(sleep=sleeps.append))
    return sleeps
