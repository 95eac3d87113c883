"""The bodies of one page, one per kind of subscriber: message.py assembles them for SNS;
email.py, cloudwatch.py (pagers over https) and chat.py (AWS Chatbot) word each."""

from queuewatch.notifications.chat import chat_notification
from queuewatch.notifications.cloudwatch import Origin, alarm_description, cloudwatch_alarm, region_name
from queuewatch.notifications.email import email_text
from queuewatch.notifications.message import (
    SNS_MESSAGE_LIMIT,
    PageTooLarge,
    Rendered,
    render,
    sns_message,
)

__all__ = [
    "SNS_MESSAGE_LIMIT",
    "Origin",
    "PageTooLarge",
    "Rendered",
    "alarm_description",
    "chat_notification",
    "cloudwatch_alarm",
    "email_text",
    "region_name",
    "render",
    "sns_message",
]
