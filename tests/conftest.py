"""Shared fixtures: fake credentials, an in-process moto with atomic conditional writes, no retry sleeps;
hypothesis profiles."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import botocore.endpoint
import botocore.session
import pytest
from botocore.loaders import Loader, create_loader
from hypothesis import HealthCheck, settings
from moto import mock_aws
from moto.dynamodb.models import DynamoDBBackend
from support import fake_aws_environment

from queuewatch.adapters import sqs_depth

# Property tests: modest and the same examples every run by default, so `make test` stays quick and
# CI's verdict does not depend on a draw; HYPOTHESIS_PROFILE=thorough digs deeper, with fresh draws.
settings.register_profile("default", max_examples=15, deadline=None, print_blob=True, derandomize=True)
settings.register_profile(
    "thorough", max_examples=400, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True, scope="session")
def service_models_parsed_once() -> Iterator[None]:
    """Every botocore session parses the service models it uses, and the tests make thousands of sessions (moto
    gives each test a fresh default one, and each handler loaded makes its own): the models are botocore's
    read-only files, so every session's loader shares one cache of them. Credentials stay per session."""
    caches: dict[str | None, dict[Any, Any]] = {}

    def sharing_cache(search_path_string: str | None = None) -> Loader:
        loader = create_loader(search_path_string)
        # the per-instance cache of botocore's @instance_cache, private: hence the ignore
        loader._cache = caches.setdefault(search_path_string, {})  # type: ignore[attr-defined]
        return loader

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(botocore.session, "create_loader", sharing_cache)
        yield


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
    """No test may reach real AWS (a module's shared world calls fake_aws_environment itself)."""
    fake_aws_environment(monkeypatch)


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files that take minutes (a module setting LONG_RUNNING) are collected first, so that each of make
    test's workers starts one early rather than one of them running it alone at the end. The sort is stable:
    the rest keep their order, the same on every worker, as pytest-xdist requires."""
    items.sort(key=lambda item: not getattr(getattr(item, "module", None), "LONG_RUNNING", False))
