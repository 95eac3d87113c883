"""GetMetricData as AWS answers it (botocore's Stubber): partial data over pages, per-query failures, failed pages."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber
from support import T0

from queuewatch.adapters.cloudwatch import MAX_QUERIES_PER_CALL, MetricRequest, get_metric_data

START, END = T0 - timedelta(minutes=10), T0


def request(query_id: str) -> MetricRequest:
    return MetricRequest(
        query_id, "AWS/SQS", "ApproximateAgeOfOldestMessage", (("QueueName", query_id),), "Maximum", 60
    )


def result(
    query_id: str, status: str, points: list[tuple[int, float]], messages: tuple[str, ...] = ()
) -> dict[str, Any]:
    """One MetricDataResult; points as (minutes before T0, value)."""
    return {
        "Id": query_id,
        "Label": query_id,
        "Timestamps": [T0 - timedelta(minutes=m) for m, _ in points],
        "Values": [v for _, v in points],
        "StatusCode": status,
        "Messages": [{"Code": "Info", "Value": m} for m in messages],
    }


def expected(next_token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {
        "MetricDataQueries": ANY,
        "StartTime": START,
        "EndTime": END,
        "ScanBy": "TimestampDescending",
    }
    if next_token:
        params["NextToken"] = next_token
    return params


@pytest.fixture
def stubbed() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client("cloudwatch", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def test_partial_data_is_followed_through_every_page_and_the_newest_point_comes_first(
    stubbed: tuple[Any, Stubber],
) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "get_metric_data",
        {
            "MetricDataResults": [result("a", "PartialData", [(1, 5.0)]), result("b", "Complete", [(1, 1.0)])],
            "NextToken": "page-2",
        },
        expected(),
    )
    stubber.add_response(
        "get_metric_data",
        {"MetricDataResults": [result("a", "Complete", [(3, 4.0), (2, 9.0)])]},
        expected(next_token="page-2"),
    )
    series = get_metric_data(client, [request("a"), request("b")], START, END)
    assert series["a"].error is None and series["b"].error is None
    assert [(T0 - t, v) for t, v in series["a"].points] == [
        (timedelta(minutes=1), 5.0),
        (timedelta(minutes=2), 9.0),
        (timedelta(minutes=3), 4.0),
    ]
    assert [v for _, v in series["b"].points] == [1.0]


def test_a_page_that_fails_after_partial_data_discards_the_half_read_series(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "get_metric_data",
        {"MetricDataResults": [result("a", "PartialData", [(1, 5.0)])], "NextToken": "page-2"},
        expected(),
    )
    stubber.add_client_error("get_metric_data", service_error_code="Throttling", http_status_code=400)
    series = get_metric_data(client, [request("a"), request("b")], START, END)
    for query in ("a", "b"):  # no half series: a value that may not be the newest is no value
        assert series[query].points == []
        assert series[query].error == "GetMetricData failed: throttled (Throttling) after retries"


def test_a_query_aws_refuses_degrades_that_query_alone(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    stubber.add_response(
        "get_metric_data",
        {
            "MetricDataResults": [
                result("a", "Forbidden", [], ("not authorized for this namespace",)),
                result("b", "InternalError", [], ("try again",)),
                result("c", "Complete", [(1, 2.0)]),
            ]
        },
        expected(),
    )
    series = get_metric_data(client, [request("a"), request("b"), request("c")], START, END)
    assert series["a"].error == "GetMetricData returned Forbidden: not authorized for this namespace"
    assert series["b"].error == "GetMetricData returned InternalError: try again"
    assert series["c"].error is None and [v for _, v in series["c"].points] == [2.0]


def test_a_failed_batch_degrades_only_the_queries_it_carried(stubbed: tuple[Any, Stubber]) -> None:
    client, stubber = stubbed
    requests = [request(f"q{i}") for i in range(MAX_QUERIES_PER_CALL + 1)]
    stubber.add_client_error("get_metric_data", service_error_code="AccessDenied", http_status_code=403)
    stubber.add_response(
        "get_metric_data",
        {"MetricDataResults": [result(f"q{MAX_QUERIES_PER_CALL}", "Complete", [(1, 7.0)])]},
        expected(),
    )
    series = get_metric_data(client, requests, START, END)
    assert all((series[f"q{i}"].error or "").startswith("GetMetricData failed: AccessDenied") for i in range(500))
    assert series["q500"].error is None and [v for _, v in series["q500"].points] == [7.0]
