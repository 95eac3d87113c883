"""boto3 clients per region, made once per container and shared by the stages.

Retries use botocore's standard mode with a small attempt budget and short
timeouts, so a tick ends well inside its one-minute schedule even when AWS is
slow. AWS_ENDPOINT_URL (read by boto3 itself) points them at a local moto.
"""

from __future__ import annotations

from threading import Lock
from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config as BotoConfig

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient
    from mypy_boto3_sqs import SQSClient

RETRY_CONFIG = BotoConfig(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=2,
    read_timeout=5,
    max_pool_connections=32,
)


class AwsClients:
    """Lazily made clients, keyed by service and region; safe to share across threads once made."""

    def __init__(self, session: boto3.Session | None = None, config: BotoConfig = RETRY_CONFIG) -> None:
        self._session = session or boto3.Session()
        self._config = config
        self._clients: dict[tuple[str, str | None], Any] = {}
        self._lock = Lock()

    def _client(self, service: str, region: str | None) -> Any:
        key = (service, region)
        with self._lock:
            if key not in self._clients:
                self._clients[key] = self._session.client(service, region_name=region, config=self._config)  # type: ignore[call-overload]
            return self._clients[key]

    def sqs(self, region: str) -> SQSClient:
        return self._client("sqs", region)  # type: ignore[no-any-return]

    def cloudwatch(self, region: str) -> CloudWatchClient:
        return self._client("cloudwatch", region)  # type: ignore[no-any-return]

    def dynamodb(self, region: str | None = None) -> DynamoDBClient:
        return self._client("dynamodb", region)  # type: ignore[no-any-return]

    def sns(self, region: str | None = None) -> SNSClient:
        return self._client("sns", region)  # type: ignore[no-any-return]
