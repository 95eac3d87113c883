"""One page as people see it, for the demo: the pager's incident, the chat card, the e-mail. Each is drawn
from the very body that subscriber gets (notifications/), not from a description of it."""

from __future__ import annotations

import textwrap
from typing import Any

from queuewatch.alerting.alert import Alert
from queuewatch.notifications import Origin, chat_notification, cloudwatch_alarm, email_text

WIDTH = 110


def _wrapped(label: str, text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=f"{indent}{label}",
        subsequent_indent=indent + " " * len(label),
        break_long_words=False,  # a link cut in two is a broken link
        break_on_hyphens=False,
    )


def pager_view(alert: Alert, origin: Origin) -> list[str]:
    """The incident PagerDuty's (or Opsgenie's) Amazon CloudWatch integration opens from the https body."""
    alarm: dict[str, Any] = cloudwatch_alarm(alert, origin)
    state = alarm["NewStateValue"]
    action = "opens an incident" if state == "ALARM" else "resolves the incident"
    lines = [f"--- the pager (CloudWatch integration, https body) {action}:"]
    lines += _wrapped("Incident: ", f"{alarm['AlarmName']}  [{state}, was {alarm['OldStateValue']}]")
    if state != "ALARM":
        return lines
    lines += _wrapped("Reason:   ", alarm["NewStateReason"])
    lines.append("  Details:")
    for line in alarm["AlarmDescription"].splitlines():
        lines += _wrapped("", line, "    ")
    return lines


def chat_view(alert: Alert) -> list[str]:
    """The card AWS Chatbot posts from the chat topic's custom notification."""
    card: dict[str, Any] = chat_notification(alert)
    content = card["content"]
    lines = ["--- the chat card (AWS Chatbot custom notification, chat topic):", f"  {content['title']}"]
    for line in content["description"].splitlines():
        lines += _wrapped("", line, "  | ") if line else ["  |"]
    lines += [f"  > {step}" for step in content.get("nextSteps", [])]
    return lines


def email_view(alert: Alert) -> list[str]:
    return [
        "--- the e-mail (the email body):",
        f"Subject: {alert.subject}",
        "",
        *email_text(alert).rstrip().splitlines(),
    ]
