"""`queuewatch backtest` of the tracked jobs: a fortnight of job events applied by the track stage, the live
collector and evaluator ticking minute by minute on them (a clock passed in, in moto), and the backtest of the
same jobs' history, which must page at the same ticks.

One moto pass per module: the live loop tracks every event of the fortnight, and the tests read that table."""

from __future__ import annotations

import argparse
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from support import Inbox, StackInMoto, fake_aws_environment

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.stage import track
from queuewatch_cli.commands.backtest.run import backtest, run_backtest
from queuewatch_cli.devkit.handlers import load_event
from queuewatch_cli.devkit.moto_tables import create_jobs_table

LONG_RUNNING = True  # a fortnight tracked and ticked in moto: about a minute: started first (conftest.py)
START = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday; the fortnight runs to START + 14 days
END = START + timedelta(days=14)
NOW = END + timedelta(hours=1)
JOBS = "jobs"
QUEUES = {"linux.2xlarge": "gh-ci-linux-2xlarge-queued-builds", "linux.4xlarge": "gh-ci-linux-4xlarge-queued-builds"}
CONFIG = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m, repeat_interval: 1h}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 30m, queue_size: 2}
    breach_when: all
    for: 5m
    group_by: runner_type
    priority: P2
"""
THRESHOLD = 30 * 60
# A job per runner type every 3 hours, taken within 1 to 3 minutes: short waits, among the incidents' (one of them
# beside the lone long wait of day 5), that never page. Moto's conditional writes are slow; more jobs bind no more.
BACKGROUND_EVERY = 180


@dataclass(frozen=True)
class Job:
    job_id: int
    runner_type: str
    created: datetime
    queued: datetime  # later than created for a job that waited for an approval
    started: datetime


def fortnight() -> list[Job]:
    """Every BACKGROUND_EVERY minutes a job per runner type taken within 1 to 3 minutes; and incidents, jobs
    waiting long."""
    jobs: list[Job] = []

    def add(runner_type: str, queued: datetime, wait: timedelta, approval: timedelta = timedelta(0)) -> None:
        jobs.append(Job(len(jobs) + 1, runner_type, queued - approval, queued, queued + wait))

    for minute in range(0, 14 * 1440, BACKGROUND_EVERY):
        for index, runner_type in enumerate(QUEUES):
            add(
                runner_type,
                START + timedelta(minutes=minute + 7 * index, seconds=13),
                timedelta(minutes=1 + minute // BACKGROUND_EVERY % 3),
            )
    # (runner type, day, minute of the day, jobs, minutes the first waits, seconds between their arrivals)
    incidents = [
        ("linux.2xlarge", 0, 600, 12, 95, 40),  # pages, repeats after an hour, resolves
        ("linux.2xlarge", 0, 730, 6, 40, 20),  # a second page the same day, an hour after the resolve
        ("linux.4xlarge", 3, 60, 3, 45, 90),
        ("linux.4xlarge", 5, 300, 1, 120, 0),  # one job waiting long: queue size 1, never pages
        ("linux.2xlarge", 9, 30, 40, 28, 5),  # many, never 30 minutes: no page
        ("linux.2xlarge", 13, 100, 8, 70, 30),
    ]
    for runner_type, day, minute, count, waits, spacing in incidents:
        begin = START + timedelta(days=day, minutes=minute, seconds=31)
        for n in range(count):
            queued = begin + timedelta(seconds=spacing * n)
            add(runner_type, queued, begin + timedelta(minutes=waits) - queued + timedelta(seconds=n))
    # Behind a deployment's approval for an hour, then 40 minutes for a runner: pages from when it was approved.
    for n in range(3):
        add("linux.4xlarge", START + timedelta(days=7, hours=2, seconds=n), timedelta(minutes=40), timedelta(hours=1))
    return jobs


def events(job: Job) -> list[tuple[datetime, WorkflowJobEvent]]:
    """Its workflow_job events, each at the time it happened: waiting (if approval came first), queued, in_progress."""
    out = []
    stages = [("queued", job.queued), ("in_progress", job.started)]
    if job.queued > job.created:
        stages.insert(0, ("waiting", job.created))
    for action, at in stages:
        detail = copy.deepcopy(TEMPLATES[action])
        workflow = detail["workflow_job"]
        workflow.update(
            id=job.job_id,
            status=action,
            labels=[job.runner_type],
            created_at=job.created.isoformat(),
            started_at=job.started.isoformat() if action == "in_progress" else None,
        )
        if action != "in_progress":
            workflow.update(runner_name=None, runner_id=None)
        out.append((at, WorkflowJobEvent.model_validate(detail)))
    return out


TEMPLATES = {
    "waiting": load_event("track_waiting.json")["detail"],
    "queued": load_event("track_queued.json")["detail"],
    "in_progress": load_event("track_in_progress.json")["detail"],
}


def config() -> Config:
    return parse_config(CONFIG, source="tracked.yaml")


def near_threshold(jobs: list[Job]) -> set[int]:
    """The minutes when some job has waited within 2 minutes of the threshold or longer."""
    minutes: set[int] = set()
    for job in jobs:
        near = job.queued + timedelta(seconds=THRESHOLD - 120)
        first, last = (int((t - START).total_seconds() // 60) for t in (near, job.started))
        minutes.update(range(first, last + 1))
    return minutes


Page = tuple[datetime, str, int, tuple[str, ...]]  # when, its kind, its sequence, its runner types


def live_pages(cfg: Config, jobs: list[Job]) -> list[Page]:
    """The track stage applies each event at its time; the collector and the evaluator tick every minute.

    A tick with no alert state and no job waiting near the threshold changes nothing, so those ticks are
    skipped for speed (the events up to them are still applied before the next tick that runs)."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    router = Router(cfg)
    pending = sorted((at, job.job_id, event) for job in jobs for at, event in events(job))
    stack = StackInMoto.create()
    inbox = Inbox(stack.sns)
    clients = AwsClients()
    busy, applied, near = False, 0, near_threshold(jobs)
    for minute in range(0, 14 * 1440 + 1):
        now = START + timedelta(minutes=minute)
        if not busy and minute not in near:
            continue
        while applied < len(pending) and pending[applied][0] <= now:
            at, _, event = pending[applied]
            track(event, router, dynamodb, JOBS, at, occurred_at=at)
            applied += 1
        snap = collect(cfg, clients, now=now, account_id="123456789012", snapshot_id=f"s{minute}", jobs_table=JOBS)
        result = stack.evaluate(snap, cfg, clock=lambda now=now: now)  # type: ignore[misc]
        busy = bool(result.firing or result.pending)
    for at, _, event in pending[applied:]:  # the rest of the history, for the backtest
        track(event, router, dynamodb, JOBS, at, occurred_at=at)
    return [
        (
            datetime.fromisoformat(a["evaluated_at"]),
            a["page"],
            a["sequence"],
            tuple(r["runner_type"] for r in a["runner_types"]),
        )
        for a in inbox.drain()
    ]


@pytest.fixture(scope="module")
def tracked() -> Iterator[list[Page]]:
    """The live loop's pages; after it, the jobs table holds every event of the fortnight. The tests only read."""
    with pytest.MonkeyPatch.context() as patch, mock_aws():
        fake_aws_environment(patch)
        sqs = boto3.client("sqs", region_name="us-east-1")
        for queue in QUEUES.values():
            sqs.create_queue(QueueName=queue)  # empty: the collector reads them, the rules judge the jobs
        create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS)
        yield live_pages(config(), fortnight())


def test_the_backtest_of_the_jobs_pages_at_the_live_evaluators_ticks(tracked: list[Page]) -> None:
    outcome = backtest(config(), AwsClients(), START, END, now=NOW, keep_pages=True, jobs_table=JOBS)
    replayed = [(p.at, p.kind.value, p.sequence, p.runner_types) for p in outcome.replay.pages]
    assert replayed == tracked
    kinds = [kind for _, kind, _, _ in replayed]
    assert {"new", "repeat", "resolved"} <= set(kinds)
    assert kinds.count("new") == 5  # the incidents of 3 jobs or more waiting 30m, and the approval's 3
    first = outcome.replay.episodes[0]
    # The oldest job passes 30m 31 s after minute 630, seen at minute 631, pending 5m.
    assert first.started_at == START + timedelta(minutes=631 + 5)
    approval = [e for e in outcome.replay.episodes if e.started_at.day == START.day + 7]
    # Approved at 02:00, past 30m at 02:31, pending 5m: the hour waiting for approval is not queue time.
    assert [e.started_at for e in approval] == [START + timedelta(days=7, hours=2, minutes=31 + 5)]


def test_the_command_replays_the_jobs_by_default_with_a_jobs_table_and_says_so(
    tracked: list[Page], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tracked.yaml"
    path.write_text(CONFIG)
    week = START + timedelta(days=8)  # the first four incidents that page, over a week or more
    args = argparse.Namespace(
        config=str(path), compare=None, start=START.isoformat(), end=week.isoformat(), plot=None, region=None,
        quiet=True, jobs_table=JOBS, source=None,
    )  # fmt: skip
    lines: list[str] = []
    assert run_backtest(args, AwsClients(), now=NOW, out=lines.append) == 0
    out = "\n".join(lines)
    assert out.startswith(f"replayed: the tracked jobs in {JOBS}")
    assert "4 page(s)" in out and "pages per week 3.5" in out
    args.source, args.end, lines[:] = "cloudwatch", (START + timedelta(days=1)).isoformat(), []
    assert run_backtest(args, AwsClients(), now=NOW, out=lines.append) == 0
    assert lines[0].startswith("replayed: CloudWatch") and "0 page(s)" in lines[1]  # moto holds no AWS/SQS data
    assert "pages per week" not in "\n".join(lines)  # a day: no weekly rate
    args.source, args.jobs_table = "jobs", None
    assert run_backtest(args, AwsClients(), now=NOW, out=lines.append) == 2
    said = capsys.readouterr().err  # both ways to the table, by the stack's real output name
    assert "--stack NAME" in said and "JobsTableName output" in said and "--jobs-table TABLE" in said
    args.jobs_table = "no-such-table"  # one line saying what failed, not a traceback
    assert run_backtest(args, AwsClients(), now=NOW, out=lines.append) == 2
    assert "--jobs-table no-such-table: reading the jobs' history: " in capsys.readouterr().err


SLO = """slos:
  - {name: linux-fast, objective: 99%, queue_time_under: 2m, min_jobs: 5, page_when_waiting_over: 1h}
"""


def test_the_backtest_replays_slo_alerts_with_the_rules(tracked: list[Page]) -> None:
    """On the module's table: the track stage stores the same records whatever the SLOs (it counts for them
    only with an SLO table), and the range reads only the jobs queued in it."""
    from queuewatch.adapters.jobs_table.jobs import read_history
    from queuewatch_cli.commands.backtest.slo_replay import replay_slos

    cfg = parse_config(CONFIG + SLO)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    end = START + timedelta(hours=16)  # the first day's two incidents
    outcome = backtest(cfg, AwsClients(), START, end, now=NOW, keep_pages=True, jobs_table=JOBS)
    replayed = [(p.at, p.rule, p.kind) for p in outcome.replay.pages if p.rule.startswith("slo:")]
    # The first day's incidents: 12 jobs waiting up to 95 minutes burn the budget and pass the ceiling.
    assert {rule for _, rule, _ in replayed} == {"slo:linux-fast", "slo:linux-fast:ticket"}
    records = list(read_history(dynamodb, JOBS, START - timedelta(days=3), end))
    expected = [
        (page.at, page.rule, page.kind) for _, _, pages, _ in replay_slos(cfg, records, START, end) for page in pages
    ]
    assert replayed == expected
