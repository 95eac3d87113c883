"""Logs Insights over moto's CloudWatch Logs: moto stores and filters the lines, this answers the query.

moto has no Logs Insights. For the tests and the benchmark, this client takes its place at the adapter's
boundary (adapters/autoscaler_logs.py takes any logs client): StartQuery checks each log
group exists (as Logs Insights does: one missing fails the query), GetQueryResults reads the lines with
moto's FilterLogEvents over the query's span and aggregates them as autoscaler_log.INSIGHTS_QUERY does, one
row per log group, message, error.name, data.0.ErrorCode and github.workflow_job_id.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from queuewatch.model.autoscaler_log import INSIGHTS_QUERY

ACCOUNT = "123456789012"


def powertools_line(message: str, function: str, level: str = "INFO", **extra: Any) -> str:
    """A line as upstream's logger writes it (lambdas/libs/aws-powertools-util): Powertools' keys, then its own."""
    return json.dumps(
        {
            "level": level,
            "message": message,
            "timestamp": "2026-11-21T17:59:00.000Z",
            "service": function,
            "cold_start": False,
            "function_name": function,
            "region": "us-east-1",
            "environment": function.rsplit("-", 2)[0],
            "aws-request-id": "0b9e2c",
            "function-name": function,
            "module": "scale-up",
            **extra,
        }
    )


def put_lines(logs: Any, group: str, lines: list[tuple[datetime, str]]) -> None:
    """Create the log group (if new) and put the lines in one stream, as the function's container would."""
    stream = "2026/11/21/[$LATEST]0b9e2c"
    with suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_group(logGroupName=group)
    with suppress(logs.exceptions.ResourceAlreadyExistsException):
        logs.create_log_stream(logGroupName=group, logStreamName=stream)
    events = [{"timestamp": int(at.timestamp() * 1000), "message": text} for at, text in sorted(lines)]
    logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events)


class InsightsOverMoto:
    """A logs client answering StartQuery and GetQueryResults from moto's stored lines."""

    def __init__(self, logs: Any, *, status: str = "Complete", denied: Callable[[str], bool] = lambda _: False) -> None:
        self.logs = logs
        self.status = status  # "Running": a query that never finishes
        self.denied = denied  # a log group the role may not query
        self.queries: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []

    def start_query(self, **params: Any) -> dict[str, str]:
        self.calls.append("StartQuery")
        assert params["queryString"] == INSIGHTS_QUERY
        assert len(params["logGroupNames"]) <= 50
        for group in params["logGroupNames"]:
            if self.denied(group):
                raise ClientError(
                    {"Error": {"Code": "AccessDeniedException", "Message": f"not authorized on {group}"}}, "StartQuery"
                )
            if not self.logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]:
                raise ClientError(
                    {"Error": {"Code": "ResourceNotFoundException", "Message": f"Log group '{group}' does not exist"}},
                    "StartQuery",
                )
        query_id = f"q{len(self.queries)}"
        self.queries[query_id] = params
        return {"queryId": query_id}

    def stop_query(self, queryId: str) -> dict[str, bool]:
        self.calls.append("StopQuery")
        return {"success": True}

    def get_query_results(self, queryId: str) -> dict[str, Any]:
        self.calls.append("GetQueryResults")
        if self.status != "Complete":
            return {"status": self.status, "results": []}
        params = self.queries[queryId]
        rows: dict[tuple[str, ...], dict[str, Any]] = {}
        for group in params["logGroupNames"]:
            events = self.logs.filter_log_events(
                logGroupName=group, startTime=params["startTime"] * 1000, endTime=params["endTime"] * 1000
            )["events"]
            for event in events:
                try:
                    fields = json.loads(event["message"])
                except ValueError:
                    continue  # Lambda's own START, END and REPORT lines: scanned, never a `message`
                key = (group, *(str(_field(fields, name)) for name in _BY))
                row = rows.setdefault(key, {"n": 0, "first": event["timestamp"], "last": 0, "line": ""})
                row["n"] += 1
                row["first"] = min(row["first"], event["timestamp"])
                if event["timestamp"] >= row["last"]:
                    row["last"], row["line"] = event["timestamp"], event["message"]
        return {
            "status": "Complete",
            "results": [
                [
                    {"field": "@log", "value": f"{ACCOUNT}:{key[0]}"},
                    {"field": "n", "value": str(row["n"])},
                    {"field": "first", "value": _insights_time(row["first"])},
                    {"field": "last", "value": _insights_time(row["last"])},
                    {"field": "line", "value": row["line"]},
                ]
                for key, row in rows.items()
                if _matches(json.loads(row["line"]).get("message", ""))
            ],
        }


_BY = ("message", "error.name", "data.0.ErrorCode", "github.workflow_job_id")
_FILTERS = [
    "maximum number of runners reached",
    "Current runners",
    "Create fleet",
    "GitHub rate limit",
    "Failed to create JIT config for some instances",
    "Error processing job retry",
]


def _matches(message: str) -> bool:
    return any(text in message for text in _FILTERS)


def _field(fields: Any, dotted: str) -> Any:
    """Logs Insights' flattened name of a nested JSON field: `error.name`, `data.0.ErrorCode`."""
    for part in dotted.split("."):
        if isinstance(fields, dict):
            fields = fields.get(part)
        elif isinstance(fields, list) and part.isdigit() and int(part) < len(fields):
            fields = fields[int(part)]
        else:
            return None
    return fields


def _insights_time(millis: int) -> str:
    # Logs Insights' own @timestamp shape (2026-11-28 02:05:09.123), not a time written for people
    return datetime.fromtimestamp(millis / 1000, UTC).isoformat(sep=" ", timespec="milliseconds").removesuffix("+00:00")
