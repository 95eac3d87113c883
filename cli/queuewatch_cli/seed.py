"""What moto does not make, seeded for the demo, the tests and the benchmark: the AWS/SQS metrics
CloudWatch publishes for a real queue."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient


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
