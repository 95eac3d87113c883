"""The autoscaler's job-retry and dead-letter queues: what reading them every tick costs, and how late a page is.

python -m bench.paths [--fleets 10,100]

Per fleet size, in moto (in process): every runner type's build queue with its job-retry and dead-letter
queues beside it, under upstream's names, found by one discovery listing. One collector tick with the paths
read (the default) and one with them switched off: the GetQueueAttributes calls (the paths' reads), the
GetMetricData calls (the paths' ages ride in the first round: no call more), and the tick's CPU for
information only (moto answers in the same process, so it counts moto's work too; the handler's own CPU
at scale is bench/run.py's, whose fleet has no path queues). Then
lateness: a request dead-lettered, and a job-retry check aged past 30 minutes, before a tick: the tick that
first sees them pages (the paths are read every tick, so the bound is the tick itself, 0 ticks late).
Prints the figures and the verdicts; exits 1 if one is missed. Writes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import boto3
from moto import mock_aws

from bench.counting import CallLog, counting_session
from bench.fleet import T0
from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.devkit.moto_tables import create_state_table
from queuewatch_cli.devkit.seed import put_queue_ages

REGION = "us-east-1"
ACCOUNT = "123456789012"
CONFIG = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra}PATHS}
discovery:
  - {queue_name_pattern: "{prefix}-{runner_type}-queued-builds", prefix: gh-ci}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 10m, queue_size: 0}}
"""
OFF = ", job_retry: {max_age: null}, dead_letter: {max_messages: null}"


def seed(size: int) -> None:
    """Every runner type's three queues; one in ten with a young job waiting and a check in its retry queue."""
    sqs = boto3.client("sqs", region_name=REGION)
    ages: dict[str, float] = {}
    for index in range(size):
        base = f"gh-ci-rt{index:05d}"
        for name in (f"{base}-queued-builds", f"{base}-job-retry", f"{base}-queued-builds_dead_letter"):
            url = sqs.create_queue(QueueName=name)["QueueUrl"]
            if index % 10 == 3 and not name.endswith("_dead_letter"):
                sqs.send_message(QueueUrl=url, MessageBody='{"id": 1}')
                ages[name] = 60.0
    put_queue_ages(boto3.client("cloudwatch", region_name=REGION), ages, T0 + timedelta(minutes=1))


def tick(config: Config, log: CallLog, minute: int) -> tuple[Snapshot, float]:
    clients = AwsClients(counting_session(log))
    now = T0 + timedelta(minutes=minute)
    started = time.process_time()
    snap = collect(config, clients, now=now, account_id=ACCOUNT, snapshot_id=f"s{minute}")
    return snap, time.process_time() - started


def measure(size: int) -> dict[str, float]:
    seed(size)
    figures: dict[str, float] = {"runner_types": size}
    for label, paths in (("on", ""), ("off", OFF)):
        config = parse_config(CONFIG.replace("PATHS", paths), source="bench")
        log = CallLog()
        tick(config, log, 0)  # warm: imports and clients made
        log.take()
        _, cpu = tick(config, log, 1)
        calls, _, metrics = log.take()
        figures[f"reads_{label}"] = calls["sqs.GetQueueAttributes"]
        figures[f"metric_calls_{label}"] = sum(n for name, n in calls.items() if name.endswith(".GetMetricData"))
        figures[f"metrics_{label}"] = metrics
        figures[f"cpu_ms_{label}"] = round(cpu * 1000, 1)
    figures["late_ticks"] = lateness(size)
    return figures


def lateness(size: int) -> float:
    """Ticks from a request dead-lettered (and a check aged past 30 minutes) to the page about it."""
    sqs = boto3.client("sqs", region_name=REGION)
    victim = f"gh-ci-rt{size - 1:05d}"
    config = parse_config(CONFIG.replace("PATHS", ""), source="bench")
    dynamodb = boto3.client("dynamodb", region_name=REGION)
    sns = boto3.client("sns", region_name=REGION)
    table = f"bench-paths-{size}"
    create_state_table(dynamodb, table)
    topic = sns.create_topic(Name=f"{table}-alerts")["TopicArn"]
    stack = Stack(name="bench", table=table, topic_arn=topic, chat_topic_arn=None, region=REGION)
    # Before tick 2: a request dead-lettered, a check 40 minutes old (CloudWatch's age, which moto does not make)
    for queue, age in ((f"{victim}-queued-builds_dead_letter", 600), (f"{victim}-job-retry", 2400)):
        url = sqs.get_queue_url(QueueName=queue)["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody='{"id": 1}')
        put_queue_ages(boto3.client("cloudwatch", region_name=REGION), {queue: age}, T0 + timedelta(minutes=2))
    for minute in range(2, 6):
        snap, _ = tick(config, CallLog(), minute)
        result = evaluate(snap, config, dynamodb, sns, stack, clock=collected_at(snap))
        fired = {str(key) for key in result.firing}
        if {f"job-retry#rt{size - 1:05d}", f"dead-letter#rt{size - 1:05d}"} <= fired:
            return float(minute - 2)
    return float("inf")


def collected_at(snap: Snapshot) -> Callable[[], datetime]:
    return lambda: snap.collected_at


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--fleets", default=os.environ.get("FLEETS", "10,100"))
    args = parser.parse_args(argv)
    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
    missed: list[str] = []
    print(
        "runner types | reads on/off | metric calls on/off | metrics on/off | tick CPU ms with moto on/off | ticks late"
    )
    for size in (int(n) for n in args.fleets.split(",")):
        with mock_aws():
            f = measure(size)
        print(
            f"{size:>12,} | {f['reads_on']:g}/{f['reads_off']:g} | {f['metric_calls_on']:g}/{f['metric_calls_off']:g} "
            f"| {f['metrics_on']:g}/{f['metrics_off']:g} | {f['cpu_ms_on']:g}/{f['cpu_ms_off']:g} | {f['late_ticks']:g}"
        )
        if f["reads_on"] != 3 * f["reads_off"]:
            missed.append(f"{size}: {f['reads_on']:g} reads, expected 3 x {f['reads_off']:g} (one per path queue)")
        if f["metric_calls_on"] != f["metric_calls_off"]:
            missed.append(f"{size}: the paths cost GetMetricData calls ({f['metric_calls_on']:g})")
        if f["late_ticks"] != 0:
            missed.append(f"{size}: paged {f['late_ticks']:g} ticks after the tick that could see it")
    for line in missed:
        print(f"MISSED {line}")
    print("verdict:", "every target met" if not missed else f"{len(missed)} missed")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
