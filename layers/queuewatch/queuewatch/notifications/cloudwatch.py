"""The https body: a CloudWatch alarm notification, the shape PagerDuty's and Opsgenie's
Amazon CloudWatch integrations open and resolve incidents from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

import botocore.session

from queuewatch.alerting.alert import Alert
from queuewatch.notifications.text import cut, one_line
from queuewatch.runtime.metric_names import runner_type_dimensions

ALARM_DESCRIPTION_LIMIT = 1024  # CloudWatch's limits, which its consumers assume
ALARM_NAME_LIMIT = 255
DESCRIPTION_LINES = 20  # what alarm consumers that split the description into fields take
LISTS_RESERVE = 300  # characters a description keeps for TEAMS, RUNNER_TYPES and SUMMARY
SUMMARY_LEAST = 100
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
    """A CloudWatch alarm's SNS notification; AlarmName and AlarmArn are stable for the alert's life."""
    firing = alert.status == "firing"
    return {
        "AlarmName": alarm_name(alert),
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
    """KEY=VALUE lines, within CloudWatch's 1024 characters and 20 lines, so any consumer of alarms shows it all.

    Consumers drop Trigger.Dimensions, so the runner types are here; TEAMS names every team so each team's
    routing sees the page. Links and the silence command go whole or not at all (a cut link is a broken one);
    the lists say how many they leave out, and SUMMARY takes what room is left.
    """
    lines = [f"TEAM={cut(one_line(alert.team), 100)}", f"PRIORITY={alert.priority}", f"SEVERITY={alert.severity}"]

    def room() -> int:
        return ALARM_DESCRIPTION_LIMIT - sum(len(line) + 1 for line in lines)

    whole = [("VIEW", view_url(alert)), ("RUNBOOK", alert.runbook_url or "none")]
    if alert.status == "firing":
        whole.append(("SILENCE", alert.silence.command))
    for key, value in whole:
        line = f"{key}={one_line(value)}" if value else ""
        if line and len(line) + 1 <= room() - LISTS_RESERVE:
            lines.append(line)
    names = [f.runner_type for f in alert.runner_types]
    lines.append("TEAMS=" + listing(alert.teams or [alert.team], len(alert.teams or [alert.team]), room() // 4))
    lines.append("RUNNER_TYPES=" + listing(names, alert.runner_types_affected, room() // 2))
    if alert.likely_cause and room() > 2 * SUMMARY_LEAST:
        lines.append("CAUSE=" + cut(one_line(alert.likely_cause), room() // 2))
    lines.append("SUMMARY=" + cut(one_line(alert.summary), room() - len("SUMMARY=")))
    return "\n".join(lines[:DESCRIPTION_LINES])


def listing(names: list[str], total: int, limit: int) -> str:
    """As many names as fit `limit` characters, comma-separated, then how many more there are."""
    shown: list[str] = []
    for name in names:
        more = total - len(shown) - 1
        tail = f" (+{more} more)" if more else ""
        if len(", ".join([*shown, name])) + len(tail) > limit:
            break
        shown.append(name)
    more = total - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more else "")


def view_url(alert: Alert) -> str | None:
    """Where to look: the alert's view link (the stack's dashboard), else the rule's dashboard, else the
    console page of its worst runner type's metrics."""
    if alert.view_url or alert.dashboard_url:
        return alert.view_url or alert.dashboard_url
    return next((f.console_url for f in alert.runner_types if f.console_url), None)


def alarm_name(alert: Alert) -> str:
    """Readable (the stack and the alert's title), stable from page to resolve (the title is the page's),
    unique per alert (a digest of the dedup key), within CloudWatch's 255 characters."""
    digest = hashlib.sha256(alert.dedup_key.encode()).hexdigest()[:8]
    stack = alert.source.get("stack", "queuewatch")
    return cut(one_line(f"{stack}: {alert.title}"), ALARM_NAME_LIMIT - len(digest) - 3) + f" [{digest}]"


def _state_reason(alert: Alert) -> str:
    if alert.status == "resolved":
        # A superseded page closes while its queue still breaches; its summary opens "Superseded by ...".
        # A forecast that fell back says so first ("Did not happen: ..."): nothing recovered.
        return alert.summary if alert.superseded_by or alert.did_not_happen else f"Recovered: {alert.summary}"
    # A predictive page crossed no threshold yet: its summary opens "Forecast, not yet queueing".
    reason = alert.summary if alert.forecast else f"Threshold crossed: {alert.summary}"
    reason += f". Likely cause: {alert.likely_cause}" if alert.likely_cause else ""
    return reason + (f". Not seen here: {alert.blind_spots}" if alert.blind_spots else "")


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
        "Dimensions": [
            {"value": value, "name": name}
            for name, value in runner_type_dimensions(alert.source.get("stack", ""), worst.runner_type)
        ],
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
