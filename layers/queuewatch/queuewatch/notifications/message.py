"""The body each subscriber gets, from one alert, published once with SNS MessageStructure=json.

SNS delivers the key named after the subscription's protocol, and `default` to
every protocol without one:

- `default` (so lambda, email-json, firehose, and sqs unless said otherwise): the versioned JSON alert;
- `email`: a readable text page: the table of runner types, the triage, the
  links and the silence command;
- `http`, `https`: a CloudWatch alarm notification, the shape PagerDuty's and
  Opsgenie's Amazon CloudWatch integrations open and resolve incidents from;
- `sms`: the subject;
- `sqs`, only when the stack's QueueBody says `cloudwatch-alarm`: the CloudWatch alarm
  notification, for pipelines that take CloudWatch alarms from a queue.

AWS Chatbot accepts only its own custom notification format, on a topic of its
own: `chat_notification` renders it for the chat topic.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from queuewatch.alerting.alert import Alert, QueueBody, sns_attribute
from queuewatch.base.errors import QueuewatchError
from queuewatch.notifications.chat import chat_notification
from queuewatch.notifications.cloudwatch import Origin, cloudwatch_alarm
from queuewatch.notifications.email import email_text

SNS_MESSAGE_LIMIT = 262_144  # bytes SNS takes in one publish: the message and its attributes together


class PageTooLarge(QueuewatchError):
    """Even listing one runner type, a page's bodies do not fit the room SNS and the state table leave them."""


@dataclass(frozen=True)
class Rendered:
    subject: str
    message: str  # the MessageStructure=json document
    chat: str | None  # the Chatbot custom notification, for the chat topic (None: the stack has none)
    listed: int  # runner types the bodies list (fewer than the alert's when a size limit demanded it)

    @property
    def stored_bytes(self) -> int:
        """What the bodies add to the group's item in the state table."""
        return len(self.message.encode()) + len((self.chat or "").encode())


def render(
    alert: Alert,
    origin: Origin,
    *,
    room: int = SNS_MESSAGE_LIMIT,
    chat: bool = True,
    queue_body: QueueBody = "alert",
) -> Rendered:
    """Every body of one page, listing as many runner types as fit every limit that applies to them.

    The SNS message, with the subject and the message attributes, fits SNS's 256 KiB; the bodies the state
    table keeps (the message, and the chat notification if the stack has a chat topic) fit `room`, the bytes
    its item has left for them under DynamoDB's 400 KB. Each body measures itself: nothing is assumed small.
    """
    envelope = len(alert.subject.encode()) + attributes_size(alert.message_attributes())
    listed = len(alert.runner_types)
    while True:
        shown = alert.model_copy(update={"runner_types": alert.runner_types[:listed]})
        rendered = Rendered(
            alert.subject,
            sns_message(shown, origin, queue_body),
            json.dumps(chat_notification(shown)) if chat else None,
            listed,
        )
        if envelope + len(rendered.message.encode()) <= SNS_MESSAGE_LIMIT and rendered.stored_bytes <= room:
            return rendered
        if listed == 1:
            raise PageTooLarge(
                f"page {alert.notification_id}: listing one runner type, the message is "
                f"{len(rendered.message.encode()):,} bytes (SNS takes {SNS_MESSAGE_LIMIT - envelope:,} beside its "
                f"subject and attributes) and the stored bodies {rendered.stored_bytes:,} bytes (the state table's "
                f"item has {room:,} left for them)"
            )
        listed = max(1, listed // 2)


def attributes_size(attributes: Mapping[str, str | list[str]]) -> int:
    """Bytes SNS counts for message attributes: each name, data type and value."""
    return sum(
        len(name.encode()) + sum(len(part.encode()) for part in sns_attribute(value))
        for name, value in attributes.items()
    )


def sns_message(alert: Alert, origin: Origin, queue_body: QueueBody = "alert") -> str:
    cloudwatch = json.dumps(cloudwatch_alarm(alert, origin))
    bodies = {
        "default": alert.to_json(),
        "email": email_text(alert),
        "http": cloudwatch,
        "https": cloudwatch,
        "sms": alert.subject,
    }
    if queue_body == "cloudwatch-alarm":
        bodies["sqs"] = cloudwatch
    return json.dumps(bodies)
