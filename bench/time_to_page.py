"""Time to page: how long after a queue breaches its threshold the on-call is paged.

python -m bench.time_to_page [--json OUT]

A simulated timeline on an in-process moto, driven by the real CollectFunction and
EvaluateFunction handlers on an injected clock (the scheduled event's time). One job
waits on a runner type's queue from `enqueued`; nothing picks it up. Its oldest-message
age crosses the rule's 1-minute threshold at t. The source is AWS/SQS
ApproximateAgeOfOldestMessage, which SQS samples once a minute ("automatically collected
and pushed to CloudWatch at one-minute intervals", Amazon SQS Developer Guide, Monitoring
Amazon SQS queues using CloudWatch); each datapoint is readable only `lag` after the
moment it describes, and is put into moto's CloudWatch then, not before. The schedule
ticks every minute, a few seconds past it; the rule's pending period (`for`) applies.

Beside it, from the same datapoints and the same lag: a CloudWatch alarm on the metric
(period 60 s, 3 of 3 datapoints, what one sets to keep a single spike from paging),
evaluated each minute; and a cron that checks every 5 minutes and pages on the first
breach it sees.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

THRESHOLD_S = 60  # the shipped rule: queue_time 1m
SAMPLE_S = 60  # AWS/SQS: one datapoint a minute
TICK_PHASE_S = 10  # EventBridge starts the tick a few seconds past the minute
EVALUATE_AFTER_S = 2  # the collector's result reaches the evaluator (asynchronous invocation)
ALARM_DATAPOINTS = 3  # 3 of 3 one-minute periods
CRON_S = 300
ORIGIN = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
ENQUEUED_S = 20 * 60 + 25  # the job arrives 25 s into a minute, 20 minutes into the timeline
RUNNER_TYPE = "linux.2xlarge"
QUEUE = "gh-ci-linux-2xlarge-queued-builds"
TABLE = "queuewatch-ttp-state"
EVENT_LAG_S = 5  # a workflow_job event from GitHub's webhook through the autoscaler's bus to TrackFunction
JOBS_TABLE = "queuewatch-ttp-jobs"
LAG_SOURCES = {
    EVENT_LAG_S: "a tracked job's queued event, GitHub's webhook to the bus to TrackFunction (assumed)",
    60: "one-minute interval (Amazon SQS Developer Guide)",
    900: "up to 15 minutes (third-party monitoring guides; not an AWS figure)",
}


@dataclass(frozen=True)
class Scenario:
    source: str
    lag_s: int
    pending_s: int
    tracked: bool = False  # the rule judges the tracked job's queue time (its event arrives lag_s after it)
    blind: bool = False  # tracking on, and the job's events never arrive: the request in the queue alone shows it


@dataclass(frozen=True)
class Timeline:
    """Seconds after t, the moment the oldest job's age crossed the threshold."""

    source: str
    lag_s: int
    pending_s: int
    visible_s: float
    page_s: float
    alarm_s: float
    cron_s: float
    met: bool


SCENARIOS = (
    Scenario("SQS age, shipped rule (for 0s)", 60, 0),
    Scenario("SQS age, rule for 3m", 60, 180),
    Scenario("SQS age, 15-minute lag, for 0s", 900, 0),
    Scenario("tracked jobs, rule for 0s", EVENT_LAG_S, 0, tracked=True),
    Scenario("tracking blind: request, no job event", 60, 0, tracked=True, blind=True),
)


def first_breaching_sample(enqueued_s: float, threshold_s: float = THRESHOLD_S) -> float:
    """The first once-a-minute sample whose age is over the threshold."""
    return math.floor((enqueued_s + threshold_s) / SAMPLE_S) * SAMPLE_S + SAMPLE_S


def alarm_fires_at(first_breach_sample_s: float, lag_s: float, datapoints: int = ALARM_DATAPOINTS) -> float:
    """A CloudWatch alarm with `datapoints` of `datapoints` periods: when the last of them is readable,
    at the next minute's evaluation."""
    last_visible = first_breach_sample_s + (datapoints - 1) * SAMPLE_S + lag_s
    return math.ceil(last_visible / SAMPLE_S) * SAMPLE_S


def cron_fires_at(visible_s: float, every_s: float = CRON_S) -> float:
    """A cron on the wall clock's multiples of `every_s`: the first run that can read the breach."""
    return math.ceil(visible_s / every_s) * every_s


def within_a_tick(page_s: float, visible_s: float, pending_s: float, tick_s: float = 60) -> bool:
    """The goal: paged within one tick after the breach is visible in its source and the pending period ran."""
    return page_s - (visible_s + pending_s) <= tick_s


def simulate(scenario: Scenario, work: Path) -> Timeline:
    """Run the real handlers tick by tick until they page; times in seconds after t."""
    import boto3
    from moto import mock_aws

    from bench.functions import Functions
    from queuewatch_cli.devkit.handlers import destination_record, scheduled_event
    from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_state_table

    lookback = max(600, scenario.lag_s + 2 * SAMPLE_S)  # a lagging source needs a longer metric_lookback
    config = work / f"ttp-{scenario.lag_s}-{scenario.pending_s}.yaml"
    config.write_text(
        "version: 1\n"
        f"defaults:\n  region: us-east-1\n  metric_lookback: {lookback}s\n"
        "  rule: {team: ci-infra, runbook_url: https://runbooks.example.com/q}\n"
        f"runner_types:\n  - {{name: {RUNNER_TYPE}, queue: {{name: {QUEUE}}}}}\n"
        "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, breach_when: all,"
        f" for: {scenario.pending_s}s, priority: P2}}\n",
        encoding="utf-8",
    )
    enqueued = ENQUEUED_S
    t = enqueued + THRESHOLD_S
    first_breach = first_breaching_sample(enqueued)
    sample_lag = 60 if scenario.tracked else scenario.lag_s  # the AWS/SQS age, beside a tracked job too
    hears = scenario.tracked and not scenario.blind
    with mock_aws():
        os.environ.update(QUEUEWATCH_CONFIG=str(config), JOBS_TABLE=JOBS_TABLE if scenario.tracked else "")
        if scenario.tracked:
            create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS_TABLE)
        sqs = boto3.client("sqs", region_name="us-east-1")
        cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
        create_state_table(boto3.client("dynamodb", region_name="us-east-1"), TABLE)
        os.environ["ALERT_TOPIC_ARN"] = boto3.client("sns", region_name="us-east-1").create_topic(Name="ttp")[
            "TopicArn"
        ]
        url = sqs.create_queue(QueueName=QUEUE)["QueueUrl"]
        functions = Functions(("collect", "evaluate", "track") if scenario.tracked else ("collect", "evaluate"))
        published = 0  # samples put so far: each once it is readable
        waiting = tracked = False
        for minute in range(0, 120):
            now_s = minute * 60 + TICK_PHASE_S
            if now_s >= enqueued and not waiting:
                sqs.send_message(QueueUrl=url, MessageBody='{"id": 1}')  # the job, in the queue from now on
                waiting = True
            if hears and now_s >= enqueued + scenario.lag_s and not tracked:
                functions.invoke("track", queued_event(ORIGIN + timedelta(seconds=enqueued), scenario.lag_s))
                tracked = True
            while published * SAMPLE_S + sample_lag <= now_s:
                stamp = published * SAMPLE_S
                age = max(0, stamp - enqueued)
                cloudwatch.put_metric_data(
                    Namespace="AWS/SQS",
                    MetricData=[
                        {
                            "MetricName": "ApproximateAgeOfOldestMessage",
                            "Dimensions": [{"Name": "QueueName", "Value": QUEUE}],
                            "Timestamp": ORIGIN + timedelta(seconds=stamp),
                            "Value": float(age),
                            "Unit": "Seconds",
                        }
                    ],
                )
                published += 1
            at = ORIGIN + timedelta(seconds=now_s)
            event = scheduled_event(at)
            collected = functions.invoke("collect", event)
            record = destination_record(event, collected.result, at=at + timedelta(seconds=EVALUATE_AFTER_S))
            result = functions.invoke("evaluate", record).result
            if f"jobs-queueing#{RUNNER_TYPE}" in result["firing"] and result["pages_sent"]:
                # A tracked job's age is computed at each tick from when it was queued: over the threshold
                # from t on, once its event is stored.
                # Blind, the request's age in AWS/SQS is all there is: visible once its sample is readable.
                visible = max(t, enqueued + scenario.lag_s) if hears else first_breach + sample_lag
                page = now_s + EVALUATE_AFTER_S
                return Timeline(
                    source=scenario.source,
                    lag_s=scenario.lag_s,
                    pending_s=scenario.pending_s,
                    visible_s=visible - t,
                    page_s=page - t,
                    alarm_s=alarm_fires_at(first_breach, sample_lag) - t,
                    cron_s=cron_fires_at(visible) - t,
                    met=within_a_tick(page, visible, scenario.pending_s),
                )
    raise RuntimeError(f"{scenario.source}: no page within two hours of the breach")


QUIET_FOR_S = 300  # the monitor's `for`
QUIET_AFTER_S = 900  # monitor.job_source_quiet_after
EVENT_EVERY_S = 120  # the bus delivers an event every 2 minutes for an hour, then nothing


def dead_source(work: Path) -> dict[str, Any]:
    """A job source that stops: TrackFunction gets a bus event every 2 minutes for an hour, then none. The
    silence is visible once it is longer than both the source's longest gap and job_source_quiet_after;
    the monitor must page within its `for` and a tick after that."""
    import boto3
    from moto import mock_aws

    from bench.functions import Functions
    from queuewatch_cli.devkit.handlers import destination_record, scheduled_event
    from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_state_table

    config = work / "ttp-dead-source.yaml"
    config.write_text(
        "version: 1\ndefaults: {region: us-east-1, rule: {team: ci-infra}}\n"
        f"runner_types:\n  - {{name: {RUNNER_TYPE}, queue: {{name: {QUEUE}}}}}\n"
        "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}}\n"
        f"monitor: {{for: {QUIET_FOR_S}s, job_source_quiet_after: {QUIET_AFTER_S}s}}\n",
        encoding="utf-8",
    )
    with mock_aws():
        os.environ.update(QUEUEWATCH_CONFIG=str(config), JOBS_TABLE=JOBS_TABLE)
        dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_jobs_table(dynamodb, JOBS_TABLE)
        create_state_table(dynamodb, TABLE)
        os.environ["ALERT_TOPIC_ARN"] = boto3.client("sns", region_name="us-east-1").create_topic(Name="ttp")[
            "TopicArn"
        ]
        boto3.client("sqs", region_name="us-east-1").create_queue(QueueName=QUEUE)
        functions = Functions(("collect", "evaluate", "track"))
        last_s = 0
        for event_s in range(0, 3600, EVENT_EVERY_S):
            created = ORIGIN + timedelta(seconds=event_s)
            event = queued_event(created, 0)
            event["detail"]["workflow_job"]["id"] = 1000 + event_s  # a job each, taken at once
            event["detail"]["action"] = "completed"
            functions.invoke("track", event)
            last_s = event_s
        visible_s = last_s + max(QUIET_AFTER_S, EVENT_EVERY_S)  # quiet past both from here on
        for minute in range(60, 180):
            now_s = minute * 60 + TICK_PHASE_S
            at = ORIGIN + timedelta(seconds=now_s)
            tick = scheduled_event(at)
            collected = functions.invoke("collect", tick)
            record = destination_record(tick, collected.result, at=at + timedelta(seconds=EVALUATE_AFTER_S))
            result = functions.invoke("evaluate", record).result
            if "queuewatch-health#source:bus" in result["firing"] and result["pages_sent"]:
                page_s = now_s + EVALUATE_AFTER_S
                return {
                    "visible_s": visible_s - last_s,
                    "page_s": page_s - last_s,
                    "for_s": QUIET_FOR_S,
                    "met": page_s - visible_s <= QUIET_FOR_S + 60,
                }
    raise RuntimeError("a dead job source: no monitor page within two hours")


def queued_event(created: datetime, lag_s: int) -> dict[str, Any]:
    """events/track_queued.json for the job, created at `created` and put on the bus `lag_s` later."""
    from queuewatch_cli.devkit.handlers import load_event

    event: dict[str, Any] = load_event("track_queued.json")
    event["time"] = (created + timedelta(seconds=lag_s)).strftime("%Y-%m-%dT%H:%M:%SZ")
    job = event["detail"]["workflow_job"]
    job.update(created_at=created.strftime("%Y-%m-%dT%H:%M:%SZ"), started_at=None, labels=[RUNNER_TYPE])
    return event


def run() -> dict[str, Any]:
    from bench.imports import template_variables

    os.environ.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION="us-east-1",
        AWS_DEFAULT_REGION="us-east-1",
        STATE_TABLE=TABLE,
        STACK_NAME="queuewatch-ttp",
        POWERTOOLS_SERVICE_NAME="queuewatch",
        POWERTOOLS_METRICS_NAMESPACE="Queuewatch",
        POWERTOOLS_LOG_LEVEL="WARNING",
    )
    os.environ.update(template_variables())
    os.environ.pop("AWS_ENDPOINT_URL", None)
    with tempfile.TemporaryDirectory(prefix="qw-ttp-") as work:
        rows = [asdict(simulate(s, Path(work))) for s in SCENARIOS]
        quiet = dead_source(Path(work))
    return {
        "dead_source": quiet,
        "assumptions": [
            f"job enqueued at t - {THRESHOLD_S} s (threshold queue_time 1m); AWS/SQS samples the age once a minute",
            f"ticks every minute, {TICK_PHASE_S} s past it; the evaluator runs {EVALUATE_AFTER_S} s after the tick",
            "lag: "
            + "; ".join(f"{f'{s // 60} min' if s >= 60 else f'{s} s'} = {why}" for s, why in LAG_SOURCES.items()),
            f"alarm: period 60 s, {ALARM_DATAPOINTS} of {ALARM_DATAPOINTS}, same metric and lag; cron: every 5 min",
            "tracked jobs: the rule judges the jobs table's queued job (queue_source: jobs), no AWS/SQS lag; its "
            "alarm column is the AWS/SQS alarm's, since no CloudWatch metric has a waiting job's queue time",
            "tracking blind: tracking on, the job's events never arrive; the rule judges the worse of the jobs "
            "(none) and the request in the build queue, whose AWS/SQS age is visible a minute after each sample",
            f"dead job source: a bus event every {EVENT_EVERY_S // 60} min for an hour, then none; "
            f"job_source_quiet_after {QUIET_AFTER_S // 60}m, monitor for {QUIET_FOR_S // 60}m; seconds after the last "
            "event",
        ],
        "rows": rows,
        "not_measured": [],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    stdout = sys.stdout
    figures = run()
    sys.stdout = stdout
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    from bench.report import Printer, time_to_page

    time_to_page(Printer(stdout), figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
