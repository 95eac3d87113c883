"""Turn AWS call failures into short reasons that a page can print."""

from __future__ import annotations

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from queuewatch.base.errors import QueuewatchError

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
    }
)


class DeadlineExceeded(QueuewatchError):
    """A request not sent because the tick's time budget ran out. Not retryable, by design."""


def describe(error: Exception) -> str:
    """A one-line reason: the AWS error code and message, or the transport failure."""
    if isinstance(error, DeadlineExceeded):
        return str(error)
    if isinstance(error, ClientError):
        code = error.response.get("Error", {}).get("Code", "Unknown")
        message = error.response.get("Error", {}).get("Message", "")
        if code in THROTTLING_CODES:
            return f"throttled ({code}) after retries"
        return f"{code}: {message}".rstrip(": ")
    if isinstance(error, (ConnectTimeoutError, ReadTimeoutError)):
        return f"timed out: {error}"
    if isinstance(error, EndpointConnectionError):
        return f"unreachable: {error}"
    if isinstance(error, BotoCoreError):
        return f"{type(error).__name__}: {error}"
    return f"{type(error).__name__}: {error}"
