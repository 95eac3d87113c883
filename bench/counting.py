"""What a tick costs: AWS calls by API (botocore event hooks) and the bytes a function logs."""

from __future__ import annotations

import io
import threading
from collections import Counter
from typing import Any

import boto3

WRITE_OPERATIONS = frozenset(
    {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems", "ExecuteStatement"}
)


class CallLog:
    """Counts API calls ('before-call', once per operation), HTTP attempts ('before-send', retries too)
    and the metrics GetMetricData is asked for (what CloudWatch bills)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.attempts = 0
        self.metrics_requested = 0

    def on_call(self, event_name: str, **_: Any) -> None:
        service, operation = event_name.split(".", 2)[1:]
        with self._lock:
            self.calls[f"{service}.{operation}"] += 1

    def on_send(self, **_: Any) -> None:
        with self._lock:
            self.attempts += 1

    def on_metric_data(self, params: dict[str, Any], **_: Any) -> None:
        with self._lock:
            self.metrics_requested += len(params.get("MetricDataQueries", []))

    def take(self) -> tuple[Counter[str], int, int]:
        """Calls, HTTP attempts and metrics requested since the last take; then start again from zero."""
        with self._lock:
            taken = self.calls, self.attempts, self.metrics_requested
            self.calls, self.attempts, self.metrics_requested = Counter(), 0, 0
        return taken


def counting_session(log: CallLog) -> boto3.Session:
    """A session whose every client reports its calls to `log`."""
    session = boto3.Session()
    session.events.register("before-call", log.on_call)
    session.events.register("before-send", log.on_send)
    session.events.register("provide-client-params.cloudwatch.GetMetricData", log.on_metric_data)
    return session


def writes(calls: Counter[str]) -> int:
    return sum(
        n for name, n in calls.items() if name.startswith("dynamodb.") and name.split(".")[1] in WRITE_OPERATIONS
    )


class LogSink(io.TextIOBase):
    """Stands in for stdout, where Lambda's log lines go: counts bytes, and EMF lines apart."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.bytes = 0
        self.emf_bytes = 0
        self.lines = 0
        self._pending = ""

    def write(self, text: str) -> int:
        with self._lock:
            self._pending += text
            *complete, self._pending = self._pending.split("\n")
            for line in complete:
                size = len(line.encode()) + 1
                self.bytes += size
                self.lines += 1
                if '"_aws"' in line:
                    self.emf_bytes += size
        return len(text)

    def writable(self) -> bool:
        return True

    def take(self) -> dict[str, int]:
        with self._lock:
            out = {"bytes": self.bytes, "emf_bytes": self.emf_bytes, "lines": self.lines}
            self.bytes = self.emf_bytes = self.lines = 0
        return out
