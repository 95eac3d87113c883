"""Publish one page to SNS, with message attributes for subscription filter policies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from queuewatch.alerting.alert import sns_attribute
from queuewatch.base.subjects import sns_subject

if TYPE_CHECKING:
    from mypy_boto3_sns import SNSClient


def publish(
    client: SNSClient,
    topic_arn: str,
    *,
    subject: str,
    message: str,
    attributes: Mapping[str, str | list[str]],
    message_structure: str | None = None,
) -> str:
    """Returns SNS's message id; raises on any failure, so the caller keeps the page for the next tick."""
    kwargs: dict[str, Any] = {
        "TopicArn": topic_arn,
        "Subject": sns_subject(subject),  # whatever was stored: SNS refuses a subject it cannot take
        "Message": message,
        "MessageAttributes": {
            name: {"DataType": data_type, "StringValue": text}
            for name, value in attributes.items()
            if value
            for data_type, text in [sns_attribute(value)]
        },
    }
    if message_structure:
        kwargs["MessageStructure"] = message_structure
    return client.publish(**kwargs)["MessageId"]
