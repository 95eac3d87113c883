"""Publish one page to SNS, with message attributes for subscription filter policies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient


def publish(
    client: SNSClient,
    topic_arn: str,
    *,
    subject: str,
    message: str,
    attributes: dict[str, str],
    message_structure: str | None = None,
) -> str:
    """Returns SNS's message id; raises on any failure, so the caller keeps the page for the next tick."""
    kwargs: dict[str, Any] = {
        "TopicArn": topic_arn,
        "Subject": subject,
        "Message": message,
        "MessageAttributes": {k: {"DataType": "String", "StringValue": v} for k, v in attributes.items() if v},
    }
    if message_structure:
        kwargs["MessageStructure"] = message_structure
    return client.publish(**kwargs)["MessageId"]
