"""What moto does not make, seeded for the demo, the tests and the benchmark: the AWS/SQS metrics
CloudWatch publishes for a real queue, and the jobs the track stage would have written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from queuewatch.adapters.jobs_table.jobs import job_item, put_job
from queuewatch.model.jobs import KEEP_FINISHED, PROGRESS, QUEUED_LIMIT, JobRecord
from queuewatch.runtime.metric_names import runner_type_dimensions
from queuewatch.track.routing import label_set

if TYPE_CHECKING:
    from mypy_boto3_cloudwatch import CloudWatchClient
    from mypy_boto3_cloudwatch.literals import StandardUnitType
    from mypy_boto3_dynamodb import DynamoDBClient


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
    cloudwatch: CloudWatchClient,
    namespace: str,
    figures: Mapping[str, tuple[float, float]],
    at: datetime,
    stack: str = "queuewatch",
) -> None:
    """The stack's evaluator's QueueSize and QueueTime per runner type at `at`, which CloudWatch extracts from
    its EMF log lines and moto does not: (queue size, queue time in seconds) per runner type."""
    names = list(figures)
    for start in range(0, len(names), 500):  # two metrics each: within PutMetricData's 1,000 a call
        cloudwatch.put_metric_data(
            Namespace=namespace,
            MetricData=[
                {
                    "MetricName": metric,
                    "Dimensions": [{"Name": k, "Value": v} for k, v in runner_type_dimensions(stack, name)],
                    "Timestamp": at,
                    "Value": figures[name][index],
                    "Unit": unit,
                }
                for name in names[start : start + 500]
                for index, (metric, unit) in enumerate(UNITS)
            ],
        )


BATCH = 25  # BatchWriteItem's most requests a call


def seed_jobs(dynamodb: DynamoDBClient, table: str, records: Iterable[JobRecord], writer: str = "seed") -> int:
    """A history of jobs, each stored as the track stage's first write of it stores it (jobs.job_item), 25
    a call: for histories of thousands of jobs that a reader is tested on, where each job's conditional
    write is not the point. Unprocessed items are written again until none is left. Answers how many."""
    items = [job_item(record, writer) for record in records]
    for first in range(0, len(items), BATCH):
        requests: dict[str, Any] = {table: [{"PutRequest": {"Item": item}} for item in items[first : first + BATCH]]}
        while requests:
            requests = dynamodb.batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
    return len(items)


def put_queued_jobs(
    dynamodb: DynamoDBClient,
    table: str,
    runner_type: str | None,
    created: list[datetime],
    *,
    now: datetime,
    first_id: int = 1,
    labels: tuple[str, ...] | None = None,
    repo: str = "pytorch/pytorch",
) -> list[JobRecord]:
    """Jobs GitHub holds queued, written as the track stage writes them: one per creation time."""
    shown = labels if labels is not None else (runner_type or "unknown",)
    records = []
    for offset, created_at in enumerate(created):
        job_id = first_id + offset
        record = JobRecord(
            job_id=job_id,
            run_id=10_000_000 + job_id,
            status="queued",
            progress=PROGRESS["queued"],
            runner_type=runner_type,
            labels=shown,
            label_set=label_set(shown),
            org=repo.split("/", maxsplit=1)[0],
            repo=repo,
            html_url=f"https://github.com/{repo}/actions/runs/{10_000_000 + job_id}/job/{job_id}",
            created_at=created_at,
            queued_at=created_at,
            updated_at=now,
            expires_at=created_at + QUEUED_LIMIT + KEEP_FINISHED,
        )
        records.append(record)
    seed_jobs(dynamodb, table, records)
    return records


def put_finished_job(
    dynamodb: DynamoDBClient,
    table: str,
    runner_type: str,
    job_id: int,
    queued_at: datetime,
    *,
    run: timedelta | None,
    now: datetime,
    repo: str = "pytorch/pytorch",
) -> JobRecord:
    """A job a runner took 30 s after it was queued, as the track stage writes it: completed after `run`, or
    still running (None)."""
    started = queued_at + timedelta(seconds=30)
    record = JobRecord(
        job_id=job_id,
        run_id=10_000_000 + job_id,
        status="in_progress" if run is None else "completed",
        progress=PROGRESS["in_progress" if run is None else "completed"],
        runner_type=runner_type,
        labels=(runner_type,),
        label_set=label_set((runner_type,)),
        org=repo.split("/", maxsplit=1)[0],
        repo=repo,
        html_url=None,
        created_at=queued_at,
        queued_at=queued_at,
        started_at=started,
        completed_at=None if run is None else started + run,
        updated_at=now,
        expires_at=queued_at + timedelta(days=14),
    )
    put_job(dynamodb, table, record, writer="seed")
    return record
