"""boto3 clients per region, made once per container and shared by the stages, and the tick's time budget.

Retries use botocore's standard mode: `max_attempts: 3` means three retries, so
four attempts, each within connect_timeout + read_timeout. One call can still
take `worst_case_call_seconds` (50 s), longer than a function's timeout, so each
tick also has a deadline: after it, no attempt is sent, and what was in flight
ends within `worst_case_tail_seconds` (16 s). A tick therefore ends by
remaining time - TICK_MARGIN_SECONDS, inside its function's timeout.
AWS_ENDPOINT_URL (read by boto3 itself) points the clients at a local moto.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from threading import Lock
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config as BotoConfig

from queuewatch.adapters.aws.errors import DeadlineExceeded
from queuewatch.adapters.sqs_depth import QueueDepthReader

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient
    from mypy_boto3_ssm import SSMClient

RETRY_CONFIG = BotoConfig(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=2,
    read_timeout=5,
    max_pool_connections=32,
)

# botocore's standard mode (botocore/retries/standard.py) waits, before retry n, at most
# min(scale * 2**(n-1), 20) seconds, scale 1 s for throttling (0.05 s otherwise), raised by up to
# 5 s more when the response carries x-amz-retry-after.
MAX_BACKOFF_SECONDS = 20.0
THROTTLING_BACKOFF_SCALE = 1.0
RETRY_AFTER_EXTRA_SECONDS = 5.0
DEPTH_CONNECTIONS = 64  # the lean GetQueueAttributes' pool per region: one per collector thread (collect.MAX_THREADS)
TICK_MARGIN_SECONDS = 2.0  # for the work after the last call: the result, the metrics


def total_attempts(config: BotoConfig) -> int:
    retries: dict[str, Any] = getattr(config, "retries", None) or {}
    if "total_max_attempts" in retries:
        return int(retries["total_max_attempts"])
    return int(retries.get("max_attempts", 2)) + 1  # botocore: max_attempts counts retries


def retry_delay_bound(retry: int) -> float:
    """The longest botocore waits before the retry-th retry (1-based)."""
    return min(THROTTLING_BACKOFF_SCALE * 2.0 ** (retry - 1), MAX_BACKOFF_SECONDS) + RETRY_AFTER_EXTRA_SECONDS


def _attempt_seconds(config: BotoConfig) -> float:
    return float(getattr(config, "connect_timeout")) + float(getattr(config, "read_timeout"))  # noqa: B009 - untyped in the stubs


def worst_case_call_seconds(config: BotoConfig = RETRY_CONFIG) -> float:
    """Every attempt times out and every retry waits its longest."""
    attempts = total_attempts(config)
    return attempts * _attempt_seconds(config) + sum(retry_delay_bound(n) for n in range(1, attempts))


def worst_case_tail_seconds(config: BotoConfig = RETRY_CONFIG) -> float:
    """How long a call running when the deadline passes can go on: its attempt, then one wait, then no more."""
    return _attempt_seconds(config) + retry_delay_bound(total_attempts(config) - 1)


class Deadline:
    """The moment after which a tick sends no more requests; the clock is injectable for tests."""

    def __init__(self, at: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.at = at
        self._clock = clock

    @classmethod
    def for_tick(
        cls, remaining_seconds: float, config: BotoConfig = RETRY_CONFIG, clock: Callable[[], float] = time.monotonic
    ) -> Deadline:
        """Leave room for the calls in flight and the margin before the function's timeout."""
        budget = remaining_seconds - worst_case_tail_seconds(config) - TICK_MARGIN_SECONDS
        return cls(clock() + budget, clock)

    def expired(self) -> bool:
        return self._clock() >= self.at


class AwsClients:
    """Lazily made clients, keyed by service and region; safe to share across threads once made."""

    def __init__(self, session: boto3.Session | None = None, config: BotoConfig = RETRY_CONFIG) -> None:
        self._session = session or boto3.Session()
        self._config = config
        self._clients: dict[tuple[str, str | None], Any] = {}
        self._depth_readers: dict[str, QueueDepthReader] = {}
        self._lock = Lock()
        self._deadline: Deadline | None = None

    def start_tick(self, deadline: Deadline | None) -> None:
        """From now on, every client refuses to send a request once `deadline` has passed."""
        self._deadline = deadline

    def _refuse_after_deadline(self, event_name: str, **_: Any) -> None:
        # On before-send, so it also stops botocore's retries of a call begun in time.
        deadline = self._deadline
        if deadline is not None and deadline.expired():
            raise DeadlineExceeded(f"{event_name.rsplit('.', 1)[-1]} not sent: the tick's time budget ran out")

    def _client(self, service: str, region: str | None) -> Any:
        key = (service, region)
        with self._lock:
            if key not in self._clients:
                client = self._session.client(service, region_name=region, config=self._config)  # type: ignore[call-overload]
                client.meta.events.register_first("before-send", self._refuse_after_deadline)
                self._clients[key] = client
            return self._clients[key]

    def sqs(self, region: str) -> SQSClient:
        return self._client("sqs", region)  # type: ignore[no-any-return]

    def queue_depths(self, region: str) -> QueueDepthReader:
        """The lean GetQueueAttributes of the region's SQS client (adapters/sqs_depth.py), made once."""
        client = self.sqs(region)
        with self._lock:
            if region not in self._depth_readers:
                self._depth_readers[region] = QueueDepthReader(
                    client,
                    self._session.get_credentials(),
                    self._config,
                    attempts=total_attempts(self._config),
                    pool_size=DEPTH_CONNECTIONS,
                    # AWS_CA_BUNDLE or the profile's ca_bundle, as botocore's own clients verify with
                    ca_bundle=self._session._session.get_config_variable("ca_bundle"),
                )
            return self._depth_readers[region]

    def cloudwatch(self, region: str) -> CloudWatchClient:
        return self._client("cloudwatch", region)  # type: ignore[no-any-return]

    def dynamodb(self, region: str | None = None) -> DynamoDBClient:
        return self._client("dynamodb", region)  # type: ignore[no-any-return]

    def ssm(self, region: str | None = None) -> SSMClient:
        return self._client("ssm", region)  # type: ignore[no-any-return]

    def sns(self, region: str | None = None) -> SNSClient:
        return self._client("sns", region)  # type: ignore[no-any-return]

    def logs(self, region: str) -> Any:
        """CloudWatch Logs, for the autoscaler's own log lines (adapters/autoscaler_logs.py)."""
        return self._client("logs", region)
