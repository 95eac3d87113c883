"""The webhook's queue: each accepted GitHub delivery, handed on by the webhook and applied by the track
stage's consumer, which SQS retries and dead-letters. This module sends; the consumer is invoked by
Lambda's event source mapping and reads nothing itself."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

DELIVERY_ATTRIBUTE = "delivery"  # X-GitHub-Delivery, for the logs and a redelivery's trail
RECEIVED_ATTRIBUTE = "received_at"  # when the webhook received it, ISO-8601 in UTC: the event's time
MAX_MESSAGE_BYTES = 256 * 1024  # SQS's limit on a message, its attributes included


def send_delivery(client: SQSClient, queue_url: str, delivery: str, event_json: str, *, received_at: datetime) -> str:
    """Hand one workflow_job event on, with when it was received; its message id once SQS has stored it.
    Raises the client's error."""
    answer = client.send_message(
        QueueUrl=queue_url,
        MessageBody=event_json,
        MessageAttributes={
            DELIVERY_ATTRIBUTE: {"DataType": "String", "StringValue": delivery},
            RECEIVED_ATTRIBUTE: {"DataType": "String", "StringValue": received_at.astimezone(UTC).isoformat()},
        },
    )
    return answer["MessageId"]
