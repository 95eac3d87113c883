"""The body each subscriber gets, from one alert, published once with SNS MessageStructure=json.

SNS delivers the key named after the subscription's protocol, and `default` to
every protocol without one:

- `default` (so sqs, lambda, email-json, firehose): the versioned JSON alert;
- `email`: a readable text page: the table of runner types, the triage, the
  links and the silence command;
- `http`, `https`: a CloudWatch alarm notification, the shape PagerDuty's and
  Opsgenie's Amazon CloudWatch integrations open and resolve incidents from;
- `sms`: the subject.

AWS Chatbot accepts only its own custom notification format, on a topic of its
own: `chat_notification` renders it for the chat topic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from queuewatch.alert import Alert
from queuewatch.notifications.chat import chat_notification
from queuewatch.notifications.cloudwatch import Origin, cloudwatch_alarm
from queuewatch.notifications.email import email_text

# Bytes a page may use of SNS's 256 KiB: the outbox item also holds it, within DynamoDB's 400 KB.
MESSAGE_BUDGET = 240_000


@dataclass(frozen=True)
class Rendered:
    subject: str
    message: str  # the MessageStructure=json document
    chat: str  # the Chatbot custom notification, for the chat topic
    listed: int  # runner types the bodies list (fewer than the alert's when SNS's size limit demanded it)


def render(alert: Alert, origin: Origin) -> Rendered:
    """Every body of one page, listing as many runner types as fit SNS's size limit."""
    listed = len(alert.runner_types)
    while True:
        shown = alert.model_copy(update={"runner_types": alert.runner_types[:listed]})
        message = sns_message(shown, origin)
        if len(message.encode()) <= MESSAGE_BUDGET or listed == 1:
            return Rendered(alert.subject, message, json.dumps(chat_notification(shown)), listed)
        listed = max(1, listed // 2)


def sns_message(alert: Alert, origin: Origin) -> str:
    cloudwatch = json.dumps(cloudwatch_alarm(alert, origin))
    return json.dumps(
        {
            "default": alert.to_json(),
            "email": email_text(alert),
            "http": cloudwatch,
            "https": cloudwatch,
            "sms": alert.subject,
        }
    )
