"""`queuewatch backtest --suggest` proposes each SLO's objective from the tracked jobs: the least whole-second
queue time under which 99% (and 95%) of the range's jobs started, checked here against a percentile computed
independently, with the pages that objective would have sent, checked against the SLO replay of a config
written out by hand."""

from __future__ import annotations

import argparse
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
from job_records import job_record

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.alerting.alert_state import PageKind
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import JobRecord
from queuewatch_cli.commands.backtest.run import run_backtest
from queuewatch_cli.commands.backtest.slo_replay import replay_slos
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import seed_jobs

START = datetime(2026, 3, 2, tzinfo=UTC)
END = START + timedelta(hours=12)
NOW = END + timedelta(hours=1)
CONFIG = """
version: 1
defaults: {{region: us-east-1, queue_source: jobs, rule: {{team: ci-infra}}}}
runner_types:
  - {{name: linux.2xlarge, queue: {{name: gh-ci-linux-2xlarge-queued-builds}}}}
  - {{name: gpu.a100, queue: {{name: gh-ci-gpu-a100-queued-builds}}}}
rules:
  - {{name: jobs-queueing, match: ["*"], thresholds: {{queue_time: 4h}}}}
slos:
  - {{name: linux-fast, match: ["linux.*"], objective: {objective}, queue_time_under: {threshold}}}
"""


def job(job_id: int, runner_type: str, queued: datetime, wait: float | None, cancelled: bool = False) -> JobRecord:
    """A job queued at `queued` that started `wait` seconds later (None: still waiting; or cancelled then)."""
    started = queued + timedelta(seconds=wait) if wait is not None and not cancelled else None
    ended = queued + timedelta(seconds=wait) if cancelled and wait is not None else None
    return job_record(job_id, runner_type, queued, started_at=started, completed_at=ended, updated_at=queued)


def history() -> tuple[list[JobRecord], list[float]]:
    """Twelve hours of linux.2xlarge jobs, one every 2 minutes: most start within 50s, 3% wait 4 to 8 minutes, and
    for two hours every job waits 25 to 35 minutes. Beside them: a GPU pool the SLO does not
    select, a job cancelled before it started, and one still waiting at the end. The waits the SLO counts."""
    draw = random.Random(28)
    jobs: list[JobRecord] = []
    waits: list[float] = []
    incident = (START + timedelta(hours=6), START + timedelta(hours=8))
    at, number = START, 0
    while at < END - timedelta(minutes=30):
        if incident[0] <= at < incident[1]:
            wait = draw.uniform(25 * 60, 35 * 60)
        elif draw.random() < 0.03:
            wait = draw.uniform(240, 480)
        else:
            wait = draw.uniform(5, 50)
        jobs.append(job(number, "linux.2xlarge", at, wait))
        waits.append(wait)
        # Not the SLO's: never counted. Under the rule search's lowest threshold: its ladder replays the incident.
        jobs.append(job(100_000 + number, "gpu.a100", at, 45))
        at, number = at + timedelta(minutes=2), number + 1
    jobs.append(job(200_000, "linux.2xlarge", START + timedelta(hours=3), 3000, cancelled=True))  # no queue time
    still = END - timedelta(minutes=20)
    jobs.append(job(200_001, "linux.2xlarge", still, None))  # waiting at the end: 20 minutes so far
    waits.append((END - still).total_seconds())
    return jobs, waits


def least_threshold(waits: list[float], objective: float) -> int:
    """Independently: try each whole second from the smallest wait up until enough jobs started under it."""
    threshold = 1
    while sum(w < threshold for w in waits) < objective * len(waits):
        threshold += 1
    return threshold


def test_suggest_proposes_the_threshold_the_range_met_and_the_pages_it_would_have_sent(
    aws: None, tmp_path: Path
) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, "jobs")
    jobs, waits = history()
    seed_jobs(dynamodb, "jobs", jobs)
    path = tmp_path / "queuewatch.yaml"
    path.write_text(CONFIG.format(objective="99.9%", threshold="2m"))
    args = argparse.Namespace(
        config=str(path),
        compare=None,
        start=START.isoformat(),
        end=END.isoformat(),
        plot=None,
        region=None,
        quiet=True,
        stack=None,
        jobs_table="jobs",
        source="jobs",
        suggest=True,
        budget="1/week",
        incidents=None,
    )
    lines: list[str] = []
    run_backtest(args, AwsClients(), now=NOW, out=lines.append)
    out = "\n".join(lines)
    assert f"slo linux-fast: {len(waits):,} job(s) queued from 2026-03-02 00:00 UTC to 2026-03-02 12:00 UTC" in out
    proposed = {
        share: (int(seconds), int(pages), int(tickets))
        for share, seconds, pages, tickets in re.findall(
            r"objective (\d+)%, queue_time_under: \S+ \((\d+)s; the range's jobs met it\): (\d+) page\(s\).*?, "
            r"(\d+) ticket\(s\)",
            out,
        )
    }
    assert set(proposed) == {"99", "95"}
    seen_pages = 0
    for share, objective in (("99", 0.99), ("95", 0.95)):
        threshold, pages, tickets = proposed[share]
        assert threshold == least_threshold(waits, objective)
        # The pages: the SLO replay of the proposed objective, written out as a config of its own.
        config = parse_config(CONFIG.format(objective=f"{share}%", threshold=f"{threshold}s"))
        sent = [p for _, _, batch, _ in replay_slos(config, jobs, START, END) for p in batch if p.kind is PageKind.NEW]
        assert pages == sum(p.rule == "slo:linux-fast" for p in sent)
        assert tickets == sum(p.rule == "slo:linux-fast:ticket" for p in sent)
        seen_pages += pages + tickets
    assert seen_pages > 0  # the incident shows under at least one of them
