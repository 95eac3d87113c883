"""The https body: a CloudWatch alarm notification, the shape PagerDuty's and Opsgenie's
Amazon CloudWatch integrations open and resolve incidents from."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import botocore.session

from queuewatch.alert import Alert
from queuewatch.notifications.text import cut, one_line

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


def cloudwatch_alarm(alert: Alert, origin: Origin) -> dict[str, object]:
    """A CloudWatch alarm's SNS notification; AlarmName is the dedup key, stable for the alert's life."""
    firing = alert.status == "firing"
    return {
        "AlarmName": alert.dedup_key,
        "AlarmDescription": alarm_description(alert),
        "AWSAccountId": origin.account_id,
        "AlarmConfigurationUpdatedTimestamp": _cloudwatch_time(alert.started_at),
        "NewStateValue": alert.alarm_state,
        "NewStateReason": cut(_state_reason(alert), STATE_REASON_LIMIT),
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
    lines = [f"{key}={one_line(value)}" for key, value in head]
    fixed = sum(len(line) + 1 for line in lines) + len("SUMMARY=")
    optional: list[str] = []
    for key, value in tail:
        line = f"{key}={one_line(value)}"
        if fixed + 200 + sum(len(x) + 1 for x in optional) + len(line) + 1 <= ALARM_DESCRIPTION_LIMIT:
            optional.append(line)
    room = ALARM_DESCRIPTION_LIMIT - fixed - sum(len(x) + 1 for x in optional)
    lines.append("SUMMARY=" + cut(one_line(alert.summary), room))
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
