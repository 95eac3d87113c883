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
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import botocore.session

from queuewatch.alert import Alert, RunnerTypeFigures
from queuewatch.durations import format_duration

SNS_MESSAGE_LIMIT = 262_144  # bytes, for the whole structured message
MESSAGE_BUDGET = 240_000  # what a page may use of it: the outbox item also holds it, within DynamoDB's 400 KB
CHAT_DESCRIPTION_LIMIT = 8_000  # characters: a chat message longer than a screen is not read
CHAT_LISTED = 10  # runner types a chat message lists
ALARM_DESCRIPTION_LIMIT = 1024  # CloudWatch's limits, which its consumers assume
STATE_REASON_LIMIT = 1023


@dataclass(frozen=True)
class Origin:
    """Where the pages come from, for the CloudWatch-shaped identity: account, region, topic."""

    account_id: str
    region: str
    topic_arn: str
    partition: str = "aws"
    metrics_namespace: str = "Queuewatch"

    @classmethod
    def of_topic(cls, topic_arn: str, metrics_namespace: str = "Queuewatch") -> Origin:
        """arn:<partition>:sns:<region>:<account>:<name>"""
        _, partition, _, region, account, _ = topic_arn.split(":", 5)
        return cls(account, region, topic_arn, partition, metrics_namespace)


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


# --- e-mail --------------------------------------------------------------------------------


def email_text(alert: Alert) -> str:
    lines = [f"{alert.alarm_state}: {alert.title}"]
    since = _when(alert.started_at)
    if alert.status == "resolved":
        until = _when(alert.resolved_at or alert.evaluated_at)
        lines.append(f"Priority {alert.priority} ({alert.severity}), team {alert.team}. Fired from {since} to {until}.")
    else:
        lines.append(f"Priority {alert.priority} ({alert.severity}), team {alert.team}. Firing since {since}.")
    lines += ["", alert.summary]
    if alert.likely_cause:
        lines += ["", f"Likely cause: {alert.likely_cause}"]
    lines += ["", *_table(alert.runner_types)]
    if alert.runner_types_affected > len(alert.runner_types):
        lines.append(f"... and {alert.runner_types_affected - len(alert.runner_types)} more runner types")
    triaged = [f for f in alert.runner_types if f.triage is not None]
    if triaged:
        first = triaged[0].triage
        assert first is not None
        window, baseline = format_duration(first.window_seconds), format_duration(first.baseline_seconds)
        lines += ["", f"Triage (the last {window}, against the {baseline} before), likely cause first"]
        # What no configured signal shows is usually the same for every runner type: say it once.
        shared = set.intersection(*(set(f.triage.not_checked) for f in triaged if f.triage))
        for figures in triaged:
            lines += _triage_lines(figures, shared)
        if shared:
            lines.append("Not checked, for want of a signal:")
            lines += [f"  {item}" for item in first.not_checked if item in shared]
    lines += ["", "Links"]
    if alert.runbook_url:
        lines.append(f"  Runbook:    {alert.runbook_url}")
    if alert.dashboard_url:
        lines.append(f"  Dashboard:  {alert.dashboard_url}")
    for figures in alert.runner_types:
        if figures.console_url:
            lines.append(f"  {figures.runner_type} queue metrics: {figures.console_url}")
    if alert.status == "firing":
        lines += ["", "Silence it", f"  {alert.silence.command}"]
    lines += [
        "",
        f"Alert {alert.dedup_key}, notification {alert.sequence} ({alert.page}), "
        f"evaluated {_when(alert.evaluated_at)}.",
    ]
    return "\n".join(lines) + "\n"


def _table(figures: list[RunnerTypeFigures]) -> list[str]:
    header = ("Runner type", "Queued", "Oldest", "Busy/total", "Likely cause")
    rows = [header]
    for f in figures:
        busy, total = f.signals.get("busy_runners"), f.signals.get("total_runners")
        runners = f"{busy:g}/{total:g}" if busy is not None and total is not None else "-"
        cause = f.triage.findings[0].title if f.triage and f.triage.findings else "-"
        rows.append(
            (
                f.runner_type,
                "no data" if f.queue_size is None else f"{f.queue_size:g}",
                "no data" if f.queue_time_seconds is None else format_duration(f.queue_time_seconds),
                runners,
                cause if f.status == "firing" else "recovered",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {1, 2, 3}
    out = []
    for index, row in enumerate(rows):
        cells = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        out.append("  ".join(cells).rstrip())
        if index == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _triage_lines(figures: RunnerTypeFigures, shared: set[str]) -> list[str]:
    triage = figures.triage
    assert triage is not None
    lines = [figures.runner_type]
    if not triage.findings:
        lines.append("  No cause found in the configured signals.")
    for number, finding in enumerate(triage.findings, start=1):
        lines.append(f"  {number}. {finding.title}: {finding.detail}")
    for item in triage.not_checked:
        if item not in shared:
            lines.append(f"  Not checked: {item}")
    return lines


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


# --- CloudWatch alarm notification, for pagers ------------------------------------------------


def cloudwatch_alarm(alert: Alert, origin: Origin) -> dict[str, object]:
    """A CloudWatch alarm's SNS notification; AlarmName is the dedup key, stable for the alert's life."""
    firing = alert.status == "firing"
    return {
        "AlarmName": alert.dedup_key,
        "AlarmDescription": alarm_description(alert),
        "AWSAccountId": origin.account_id,
        "AlarmConfigurationUpdatedTimestamp": _cloudwatch_time(alert.started_at),
        "NewStateValue": alert.alarm_state,
        "NewStateReason": _cut(_state_reason(alert), STATE_REASON_LIMIT),
        "StateChangeTime": _cloudwatch_time(alert.evaluated_at),
        "Region": region_name(origin.region),
        "AlarmArn": f"arn:{origin.partition}:cloudwatch:{origin.region}:{origin.account_id}:alarm:{alert.dedup_key}",
        "OldStateValue": "OK" if firing else "ALARM",
        "OKActions": [origin.topic_arn],
        "AlarmActions": [origin.topic_arn],
        "InsufficientDataActions": [],
        "Trigger": _trigger(alert, origin),
    }


def alarm_description(alert: Alert) -> str:
    """KEY=VALUE lines, within CloudWatch's 1024 characters; SUMMARY is cut to make room, never dropped."""
    head = [("TEAM", alert.team), ("PRIORITY", alert.priority), ("SEVERITY", alert.severity)]
    head.append(("RUNBOOK", alert.runbook_url or "none"))
    tail = []
    if alert.dashboard_url:
        tail.append(("DASHBOARD", alert.dashboard_url))
    if alert.likely_cause:
        tail.append(("CAUSE", alert.likely_cause))
    if alert.status == "firing":
        tail.append(("SILENCE", alert.silence.command))
    lines = [f"{key}={_one_line(value)}" for key, value in head]
    fixed = sum(len(line) + 1 for line in lines) + len("SUMMARY=")
    optional: list[str] = []
    for key, value in tail:
        line = f"{key}={_one_line(value)}"
        if fixed + 200 + sum(len(x) + 1 for x in optional) + len(line) + 1 <= ALARM_DESCRIPTION_LIMIT:
            optional.append(line)
    room = ALARM_DESCRIPTION_LIMIT - fixed - sum(len(x) + 1 for x in optional)
    lines.append("SUMMARY=" + _cut(_one_line(alert.summary), room))
    return "\n".join(lines + optional)


def _state_reason(alert: Alert) -> str:
    if alert.status == "resolved":
        return f"Recovered: {alert.summary}"
    reason = f"Threshold crossed: {alert.summary}"
    return reason + (f". Likely cause: {alert.likely_cause}" if alert.likely_cause else "")


def _trigger(alert: Alert, origin: Origin) -> dict[str, object]:
    """The rule as CloudWatch would state it, on the per-runner-type metric the evaluator publishes."""
    worst = alert.runner_types[0]
    on_time = worst.queue_time_threshold_seconds is not None
    threshold = worst.queue_time_threshold_seconds if on_time else worst.queue_size_threshold
    return {
        "MetricName": "QueueTime" if on_time else "QueueSize",
        "Namespace": origin.metrics_namespace,
        "StatisticType": "Statistic",
        "Statistic": "MAXIMUM",
        "Unit": "Seconds" if on_time else "Count",
        "Dimensions": [{"value": worst.runner_type, "name": "RunnerType"}],
        "Period": 60,
        "EvaluationPeriods": 1,
        "DatapointsToAlarm": 1,
        "ComparisonOperator": "GreaterThanThreshold",
        "Threshold": float(threshold or 0),
        "TreatMissingData": "missing",
        "EvaluateLowSampleCountPercentile": "",
    }


@lru_cache(maxsize=64)
def region_name(region: str) -> str:
    """CloudWatch names the region in words, as botocore's endpoint data does: us-east-1 is US East (N. Virginia)."""
    for partition in botocore.session.get_session().get_data("endpoints")["partitions"]:
        described = partition.get("regions", {}).get(region)
        if described and described.get("description"):
            return str(described["description"])
    return region


def _cloudwatch_time(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}" + moment.strftime("%z")


# --- AWS Chatbot custom notification ---------------------------------------------------------


def chat_notification(alert: Alert) -> dict[str, object]:
    """AWS Chatbot's custom notification; every page of one alert threads under its dedup key."""
    firing = alert.status == "firing"
    icon = ":rotating_light:" if firing else ":white_check_mark:"
    lines = [alert.summary]
    if alert.likely_cause:
        lines += ["", f"*Likely cause:* {alert.likely_cause}"]
    lines.append("")
    for figures in alert.runner_types[:CHAT_LISTED]:
        size = "no data" if figures.queue_size is None else f"{figures.queue_size:g} queued"
        age = (
            "no data" if figures.queue_time_seconds is None else f"oldest {format_duration(figures.queue_time_seconds)}"
        )
        line = f"• `{figures.runner_type}`: {size}, {age}"
        if firing and figures.triage and figures.triage.findings:
            finding = figures.triage.findings[0]
            line += f": {finding.title}: {finding.detail}"
        lines.append(line)
    more = alert.runner_types_affected - min(len(alert.runner_types), CHAT_LISTED)
    if more > 0:
        lines.append(f"• and {more} more")
    links = [f"[Runbook]({alert.runbook_url})"] if alert.runbook_url else []
    if alert.dashboard_url:
        links.append(f"[Dashboard]({alert.dashboard_url})")
    if links:
        lines += ["", " | ".join(links)]
    next_steps = []
    if firing:
        if alert.runbook_url:
            next_steps.append(f"Follow the runbook: {alert.runbook_url}")
        worst = alert.runner_types[0]
        if worst.triage and worst.triage.findings:
            next_steps.append(f"Start with {worst.runner_type}: {worst.triage.findings[0].title}")
        next_steps.append(f"Silence it: `{alert.silence.command}`")
    return {
        "version": "1.0",
        "source": "custom",
        "id": alert.notification_id,
        "content": {
            "textType": "client-markdown",
            "title": f"{icon} {alert.alarm_state} {alert.priority}: {alert.title}",
            "description": _cut("\n".join(lines), CHAT_DESCRIPTION_LIMIT),
            "nextSteps": next_steps,
            "keywords": [alert.priority, alert.severity, alert.team, alert.rule],
        },
        "metadata": {
            "threadId": alert.dedup_key,
            "summary": alert.subject,
            "eventType": f"queuewatch.{alert.status}",
            "relatedResources": [f.console_url for f in alert.runner_types[:CHAT_LISTED] if f.console_url],
            "additionalContext": {
                "dedup_key": alert.dedup_key,
                "notification_id": alert.notification_id,
                "priority": alert.priority,
                "team": alert.team,
                "rule": alert.rule,
                "page": alert.page,
            },
        },
    }


def _one_line(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text).strip()


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
