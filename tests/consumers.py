"""What each consumer of a page documents it reads, as JSON Schemas and checks the tests apply to every body.

Sources, so a reader can check them:
- CloudWatch alarm notification (https: PagerDuty's and Opsgenie's Amazon CloudWatch integrations, home-grown
  normalizers): the fields and types of aws/aws-lambda-go events/sns.go `CloudWatchAlarmSNSPayload` and
  `CloudWatchAlarmTrigger`; the limits of CloudWatch's PutMetricAlarm (AlarmName 1-255, AlarmDescription
  0-1024) and SetAlarmState (StateReason 0-1023, StateValue OK | ALARM | INSUFFICIENT_DATA); the time format of
  real notifications ("2015-06-03T17:43:27.123+0000"). PagerDuty's integration also reads the state from the
  SNS Subject, which must start with "ALARM: " or "OK: " and agree with NewStateValue, or the event is dropped
  (cetinich.net/content/2022/cloudwatch-pagerduty-sns); receivers key incidents on AlarmName (docs of Navi.sh:
  "AlarmName - used as the dedup key") or the alarm ARN (IncidentRelay groups on cloudwatch_alarm_arn).
- AWS Chatbot (Amazon Q Developer in chat applications) custom notifications: the event schema and parameter
  table of docs.aws.amazon.com/chatbot/latest/adminguide/custom-notifs.html: version "1.0" and source "custom"
  required, content with textType (client-markdown only), title, description, nextSteps, keywords, and
  metadata with threadId, summary, eventType, relatedResources and additionalContext (string values).
- SNS Publish: Subject "must be ASCII text that begins with a letter, number, or punctuation mark; must not
  include line breaks or control characters; and must be less than 100 characters long"; with
  MessageStructure=json the Message must hold a "default" string, and each protocol key a string.
"""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

ALARM_STATES = ["ALARM", "OK", "INSUFFICIENT_DATA"]

CLOUDWATCH_ALARM_NOTIFICATION: dict[str, Any] = {
    "type": "object",
    "required": [
        "AlarmName",
        "AlarmDescription",
        "AWSAccountId",
        "NewStateValue",
        "NewStateReason",
        "StateChangeTime",
        "Region",
        "AlarmArn",
        "OldStateValue",
        "Trigger",
    ],
    "properties": {
        "AlarmName": {"type": "string", "minLength": 1, "maxLength": 255},
        "AlarmDescription": {"type": "string", "maxLength": 1024},
        "AWSAccountId": {"type": "string", "pattern": "^[0-9]{12}$"},
        "NewStateValue": {"enum": ALARM_STATES},
        "OldStateValue": {"enum": ALARM_STATES},
        "NewStateReason": {"type": "string", "maxLength": 1023},
        "StateChangeTime": {
            "type": "string",
            "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+0000$",
        },
        "Region": {"type": "string", "minLength": 1},
        "AlarmArn": {"type": "string", "pattern": "^arn:aws[a-z-]*:cloudwatch:[a-z0-9-]+:[0-9]{12}:alarm:.+$"},
        "Trigger": {
            "type": "object",
            "required": ["Period", "EvaluationPeriods", "ComparisonOperator", "Threshold"],
            "properties": {
                "Period": {"type": "integer"},
                "EvaluationPeriods": {"type": "integer"},
                "ComparisonOperator": {
                    "enum": [
                        "GreaterThanOrEqualToThreshold",
                        "GreaterThanThreshold",
                        "LessThanThreshold",
                        "LessThanOrEqualToThreshold",
                    ]
                },
                "Threshold": {"type": "number"},
                "TreatMissingData": {"type": "string"},
                "EvaluateLowSampleCountPercentile": {"type": "string"},
                "MetricName": {"type": "string"},
                "Namespace": {"type": "string"},
                "StatisticType": {"type": "string"},
                "Statistic": {"type": "string"},
                "Unit": {"type": ["string", "null"]},
                "Dimensions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["name", "value"],
                        "properties": {"name": {"type": "string"}, "value": {"type": "string"}},
                    },
                },
            },
        },
    },
}

_STRINGS = {"type": "array", "items": {"type": "string"}}

CHATBOT_CUSTOM_NOTIFICATION: dict[str, Any] = {
    "type": "object",
    "required": ["version", "source", "content"],
    "additionalProperties": False,
    "properties": {
        "version": {"const": "1.0"},
        "source": {"const": "custom"},
        "id": {"type": "string"},
        "content": {
            "type": "object",
            "required": ["description"],
            "additionalProperties": False,
            "properties": {
                "textType": {"const": "client-markdown"},
                "title": {"type": "string"},
                "description": {"type": "string", "minLength": 1},
                "nextSteps": _STRINGS,
                "keywords": _STRINGS,
            },
        },
        "metadata": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "threadId": {"type": "string", "minLength": 1},
                "summary": {"type": "string"},
                "eventType": {"type": "string"},
                "relatedResources": _STRINGS,
                "additionalContext": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
    },
}

SNS_STRUCTURED_MESSAGE: dict[str, Any] = {
    "type": "object",
    "required": ["default"],
    "additionalProperties": {"type": "string"},
    "propertyNames": {
        "enum": ["default", "email", "email-json", "http", "https", "sqs", "lambda", "sms", "firehose", "application"]
    },
}

CLOUDWATCH = Draft202012Validator(CLOUDWATCH_ALARM_NOTIFICATION)
CHATBOT = Draft202012Validator(CHATBOT_CUSTOM_NOTIFICATION)
STRUCTURED = Draft202012Validator(SNS_STRUCTURED_MESSAGE)


def check_subject(subject: str) -> None:
    """SNS's rule for Subject."""
    assert subject.isascii(), subject
    assert subject[:1].isalnum() or subject[:1] in "!\"#$%&'()*+,-./:;<=>?@[]^_`{|}~", subject
    assert "\n" not in subject and "\r" not in subject and all(ch.isprintable() for ch in subject)
    assert len(subject) < 100, len(subject)


def check_pager_envelope(subject: str, body: dict[str, Any]) -> None:
    """A CloudWatch alarm notification as PagerDuty's integration takes it: schema, and the state in the subject."""
    CLOUDWATCH.validate(body)
    check_subject(subject)
    assert subject.startswith(f"{body['NewStateValue']}: "), (subject, body["NewStateValue"])


def description_fields(description: str) -> dict[str, str]:
    """AlarmDescription's KEY=VALUE lines, as a normalizer splits them; every line must be one."""
    fields: dict[str, str] = {}
    for line in description.splitlines():
        key, sep, value = line.partition("=")
        assert sep and key.isupper() and key.isidentifier(), line
        fields[key] = value
    return fields


def check_structured(message: str) -> dict[str, str]:
    structure = json.loads(message)
    STRUCTURED.validate(structure)
    return structure  # type: ignore[no-any-return]
