"""The forecast's inputs through the real collect stage: the runner types a rule with `forecast:` selects carry them,
read from the jobs' history and the autoscaler's `Current runners` line, with nothing in breach; the others carry
none and cost no log read. moto holds the jobs and the lines (Logs Insights answered over them)."""

from __future__ import annotations

from datetime import timedelta

import boto3
import pytest
from botocore.exceptions import ClientError
from job_records import job_record
from support import T0

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.jobs_table.jobs import put_job
from queuewatch.collect import collect
from queuewatch.collect.autoscaler_log import logs_query
from queuewatch.config.load import parse_config
from queuewatch.model.forecast.outlook import NoOutlook, outlook
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.devkit.insights_moto import InsightsOverMoto, powertools_line, put_lines
from queuewatch_cli.devkit.moto_tables import create_jobs_table

JOBS = "jobs"
CONFIG = """
version: 1
autoscaler: {prefix: gh-ci}
defaults: {region: us-east-1, rule: {team: ci-infra}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: windows, queue: {name: gh-ci-windows-queued-builds}}
rules:
  - {name: linux-queueing, match: [linux.2xlarge], thresholds: {queue_time: 30m}, forecast: 10m}
  - {name: windows-queueing, match: [windows], thresholds: {queue_time: 30m}}
"""


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)


@pytest.fixture
def busy_pools(aws: None) -> AwsClients:
    """Both pools ran jobs and scaled up in the last minutes; none has a job waiting long."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    logs = boto3.client("logs", region_name="us-east-1")
    create_jobs_table(dynamodb, JOBS)
    for offset, name in enumerate(("linux.2xlarge", "windows")):
        key = name.replace(".", "-")
        sqs.create_queue(QueueName=f"gh-ci-{key}-queued-builds")
        first = 100 * offset
        jobs = [
            job_record(first + 1, name, T0 - minutes(70), started_at=T0 - minutes(69), completed_at=T0 - minutes(29)),
            job_record(first + 2, name, T0 - minutes(60), started_at=T0 - minutes(59), completed_at=T0 - minutes(19)),
            job_record(first + 3, name, T0 - minutes(12), started_at=T0 - minutes(11)),
            job_record(first + 4, name, T0 - minutes(6), started_at=T0 - minutes(5)),
        ]
        for job in jobs:
            put_job(dynamodb, JOBS, job, "seed")
        function = f"gh-ci-{key}-scale-up"
        line = powertools_line("Current runners", function, currentRunners=47, maximumRunners=50)
        put_lines(logs, f"/aws/lambda/{function}", [(T0 - minutes(2), line)])
    return AwsClients()


def _tick(clients: AwsClients, insights: InsightsOverMoto, config: str = CONFIG) -> Snapshot:
    read = logs_query(lambda region: insights, wait_seconds=2)
    return collect(
        parse_config(config, source="t.yaml"),
        clients,
        now=T0,
        account_id="123456789012",
        snapshot_id="s1",
        jobs_table=JOBS,
        read_logs=read,
    )


def test_a_forecast_rules_runner_types_carry_inputs_and_the_others_none(busy_pools: AwsClients) -> None:
    insights = InsightsOverMoto(boto3.client("logs", region_name="us-east-1"))
    snap = _tick(busy_pools, insights)
    found = {rt.name: rt for rt in snap.runner_types}
    assert found["windows"].forecast is None
    linux = found["linux.2xlarge"].forecast
    assert linux is not None
    assert (linux.window_seconds, linux.arrived, linux.run_seconds) == (900, 2, 2400.0)
    assert (linux.running, linux.running_seconds, linux.startup_seconds) == (2, 480.0, 60.0)
    assert (linux.runners, linux.maximum, linux.runners_from, linux.runners_age_seconds) == (47, 50, "log", 120.0)
    assert found["linux.2xlarge"].autoscaler_log is None  # the count is read, not the breach's words
    assert insights.calls.count("StartQuery") == 1  # the forecast's scale-up log group alone


def test_without_a_forecast_rule_no_inputs_and_no_log_read(busy_pools: AwsClients) -> None:
    insights = InsightsOverMoto(boto3.client("logs", region_name="us-east-1"))
    snap = _tick(busy_pools, insights, CONFIG.replace(", forecast: 10m", ""))
    assert all(rt.forecast is None for rt in snap.runner_types)
    assert insights.calls == []


def test_without_the_autoscaler_named_the_inputs_have_no_maximum(busy_pools: AwsClients) -> None:
    insights = InsightsOverMoto(boto3.client("logs", region_name="us-east-1"))
    snap = _tick(busy_pools, insights, CONFIG.replace("autoscaler: {prefix: gh-ci}\n", ""))
    linux = next(rt.forecast for rt in snap.runner_types if rt.name == "linux.2xlarge")
    assert linux is not None and linux.arrived == 2 and linux.maximum is None
    assert insights.calls == []


class RefusingLogs:
    """Logs Insights as a role without logs:StartQuery meets it."""

    def start_query(self, **kwargs: object) -> dict[str, str]:
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not authorized"}}, "StartQuery")

    def get_query_results(self, **kwargs: object) -> dict[str, object]:
        raise AssertionError("no query was started")


def test_a_refused_count_read_leaves_the_forecast_without_a_maximum_and_the_tick_whole(
    busy_pools: AwsClients,
) -> None:
    """The count read refused: the runner type keeps its demand and no maximum, so its outlook says the maximum
    was not read (status shows it); the plain rules still judge its queue, and the collection does not fail."""
    snap = _tick(busy_pools, RefusingLogs())  # type: ignore[arg-type]
    linux = next(rt for rt in snap.runner_types if rt.name == "linux.2xlarge")
    assert linux.forecast is not None and linux.forecast.arrived == 2
    assert linux.forecast.maximum is None and linux.forecast.runners_from is None
    assert "queue_size" in linux.signals and not linux.degraded  # the plain rule's signals stand
    found = outlook(linux.forecast, waiting=0, oldest_seconds=None, at=T0, horizon_seconds=600)
    assert isinstance(found, NoOutlook) and "maximum" in found.reason
