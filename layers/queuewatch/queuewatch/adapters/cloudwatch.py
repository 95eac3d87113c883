"""Batched GetMetricData: up to 500 queries a call, every page followed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from queuewatch.adapters.aws.errors import describe

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient

MAX_QUERIES_PER_CALL = 500


@dataclass(frozen=True)
class MetricRequest:
    query_id: str  # ^[a-z][a-zA-Z0-9_]*$, unique within one call
    namespace: str
    metric: str
    dimensions: tuple[tuple[str, str], ...]
    stat: str
    period: int
    account_id: str | None = None  # another account's metric: CloudWatch cross-account observability answers it


@dataclass
class MetricSeries:
    """Datapoints newest first, or the reason there are none."""

    points: list[tuple[datetime, float]] = field(default_factory=list)
    error: str | None = None


def _query(request: MetricRequest) -> dict[str, Any]:
    account = {"AccountId": request.account_id} if request.account_id else {}
    return {
        **account,
        "Id": request.query_id,
        "MetricStat": {
            "Metric": {
                "Namespace": request.namespace,
                "MetricName": request.metric,
                "Dimensions": [{"Name": k, "Value": v} for k, v in request.dimensions],
            },
            "Period": request.period,
            "Stat": request.stat,
        },
        "ReturnData": True,
    }


def get_metric_data(
    client: CloudWatchClient, requests: Sequence[MetricRequest], start: datetime, end: datetime
) -> dict[str, MetricSeries]:
    """Series for every request id. A failed call marks only its own chunk's series with the reason."""
    series: dict[str, MetricSeries] = {r.query_id: MetricSeries() for r in requests}
    for offset in range(0, len(requests), MAX_QUERIES_PER_CALL):
        chunk = requests[offset : offset + MAX_QUERIES_PER_CALL]
        try:
            _fetch_chunk(client, chunk, start, end, series)
        except Exception as error:  # noqa: BLE001 - any failure degrades just this chunk's runner types
            reason = f"GetMetricData failed: {describe(error)}"
            for request in chunk:
                series[request.query_id] = MetricSeries(error=reason)
    return series


def _fetch_chunk(
    client: CloudWatchClient,
    chunk: Sequence[MetricRequest],
    start: datetime,
    end: datetime,
    series: dict[str, MetricSeries],
) -> None:
    kwargs: dict[str, Any] = {
        "MetricDataQueries": [_query(r) for r in chunk],
        "StartTime": start,
        "EndTime": end,
        "ScanBy": "TimestampDescending",
    }
    while True:
        page = client.get_metric_data(**kwargs)
        for result in page.get("MetricDataResults", []):
            target = series.setdefault(result["Id"], MetricSeries())
            target.points.extend(zip(result.get("Timestamps", []), result.get("Values", []), strict=False))
            status = result.get("StatusCode", "Complete")
            if status in ("InternalError", "Forbidden"):
                detail = "; ".join(m.get("Value", "") for m in result.get("Messages", []))
                target.error = f"GetMetricData returned {status}{': ' + detail if detail else ''}"
        token = page.get("NextToken")
        if not token:
            break
        kwargs["NextToken"] = token
    for request in chunk:
        series[request.query_id].points.sort(key=lambda point: point[0], reverse=True)
