"""The stack an evaluator runs in: its state table, its topics, and how its pages name it."""

from __future__ import annotations

from dataclasses import dataclass

from queuewatch.alerting.alert import QueueBody
from queuewatch.alerting.alert_state import Topic


@dataclass(frozen=True)
class Stack:
    """Where pages go and how they name the stack."""

    name: str
    table: str
    topic_arn: str
    region: str
    outbox_lease_seconds: int = 60
    chat_topic_arn: str | None = None  # AWS Chatbot's topic: gets the custom notification body
    metrics_namespace: str = "Queuewatch"
    account_id: str = ""
    queue_body: QueueBody = "alert"  # what SQS subscribers of the alert topic get: see notifications/message.py
    dashboard_name: str | None = None  # the stack's CloudWatch dashboard: each page's "view" link

    def topic(self, destination: Topic) -> str | None:
        return self.topic_arn if destination == Topic.ALERT else self.chat_topic_arn

    @property
    def scope(self) -> str:
        """Where the stack runs: with its name, it tells one stack's alerts from another's."""
        return f"{self.account_id}/{self.region}"
