"""What moto does not make, seeded for the demo, the tests and the benchmark: the AWS/SQS metrics
CloudWatch publishes for a real queue."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_cloudwatch.literals import StandardUnitType


def put_queue_ages(cloudwatch: CloudWatchClient, ages: Mapping[str, float], at: datetime) -> None:
    """CloudWatch's AWS/SQS age metric, which moto does not make: each queue's datapoint of the minute before `at`."""
    names = list(ages)
    for start in range(0, len(names), 500):  # kept well under PutMetricData's 1,000 metrics a call
        cloudwatch.put_metric_data(
            Namespace="AWS/SQS",
            MetricData=[
                {
                    "MetricName": "ApproximateAgeOfOldestMessage",
                    "Dimensions": [{"Name": "QueueName", "Value": name}],
                    "Timestamp": at - timedelta(minutes=1),
                    "Value": ages[name],
                    "Unit": "Seconds",
                }
                for name in names[start : start + 500]
            ],
        )


UNITS: tuple[tuple[str, StandardUnitType], ...] = (("QueueSize", "Count"), ("QueueTime", "Seconds"))


def put_evaluator_figures(
    cloudwatch: CloudWatchClient, namespace: str, figures: Mapping[str, tuple[float, float]], at: datetime
) -> None:
    """The evaluator's QueueSize and QueueTime per RunnerType at `at`, which CloudWatch extracts from its EMF log
    lines and moto does not: (queue size, queue time in seconds) per runner type."""
    names = list(figures)
    for start in range(0, len(names), 500):  # two metrics each: within PutMetricData's 1,000 a call
        cloudwatch.put_metric_data(
            Namespace=namespace,
            MetricData=[
                {
                    "MetricName": metric,
                    "Dimensions": [{"Name": "RunnerType", "Value": name}],
                    "Timestamp": at,
                    "Value": figures[name][index],
                    "Unit": unit,
                }
                for name in names[start : start + 500]
                for index, (metric, unit) in enumerate(UNITS)
            ],
        )
