"""The predictive page on the project's own replay: `queuewatch backtest --forecast` over generated job histories
in the jobs table (moto), through the evaluator's own plan.

- A slow build-up to the maximum: the forecast page comes at least 10 minutes before the plain rule's, as one
  incident, and its words say why (the evidence the forecast stands on).
- Bursts that the pool clears by itself: `--suggest --forecast` chooses the longest horizon within the page
  budget, and replayed at it the forecast sends no more pages that did not happen than the budget allows, where
  a longer horizon would send more.
"""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest
from forecast_histories import bursts, slow_build_up

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.alerting.alert import Alert
from queuewatch.alerting.alert_state import PageKind
from queuewatch.config.load import parse_config
from queuewatch.evaluate.page import build_alert
from queuewatch.evaluate.stack import Stack
from queuewatch.evaluate.steps import Plan
from queuewatch.model.jobs import JobRecord
from queuewatch_cli.commands.backtest.forecast import ForecastReplays
from queuewatch_cli.commands.backtest.run import PoolSource, history_source, run_backtest
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import seed_jobs

START = datetime(2026, 3, 2, 9, tzinfo=UTC)
NOW = START + timedelta(days=2)
JOBS = "jobs"
CONFIG = """version: 1
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}, runners_maximum_count: 50}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: QUEUE_TIME}, for: 2m, priority: P2, FORECAST}
"""


def config_text(queue_time: str, forecast: str | None) -> str:
    return CONFIG.replace("QUEUE_TIME", queue_time).replace(", FORECAST", f", forecast: {forecast}" if forecast else "")


@pytest.fixture
def jobs_table(aws: None) -> None:
    boto3.client("sqs", region_name="us-east-1").create_queue(QueueName="gh-ci-linux-2xlarge-queued-builds")
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), JOBS)


def store(jobs: list[JobRecord]) -> None:
    seed_jobs(boto3.client("dynamodb", region_name="us-east-1"), JOBS, jobs, "test")


def arguments(path: Path, end: datetime, **more: object) -> argparse.Namespace:
    given = {
        "config": str(path), "compare": None, "start": START.isoformat(), "end": end.isoformat(), "plot": None,
        "region": None, "quiet": True, "jobs_table": JOBS, "source": None, "suggest": False, "budget": None,
        "incidents": None, "forecast": "config", "max": None, "runner_counts": None,
    }  # fmt: skip
    return argparse.Namespace(**{**given, **more})


def test_a_slow_build_up_is_paged_ten_minutes_before_the_plain_rule_and_the_page_says_why(
    jobs_table: None, tmp_path: Path
) -> None:
    store(slow_build_up(START, "linux.2xlarge"))
    path = tmp_path / "forecast.yaml"
    path.write_text(config_text("30m", "10m"))
    end = START + timedelta(hours=5)
    lines: list[str] = []
    assert run_backtest(arguments(path, end), AwsClients(), now=NOW, out=lines.append) == 0
    out = "\n".join(lines)
    assert "rule jobs-queueing (forecast 10m): 1 incident(s) the plain rule paged, 1 page(s) with the forecast" in out
    gained = re.search(r"linux\.2xlarge: the forecast paged (\d+)m earlier", out)
    assert gained is not None and int(gained.group(1)) >= 10, out
    assert "forecast pages no incident followed (did not happen): 0" in out

    # The page the evaluator would have sent at that minute, worded by its own page code.
    config = parse_config(config_text("30m", "10m"))
    replays = ForecastReplays.of(config)
    first: list[Alert] = []

    def word(planned: Plan) -> None:
        for group in planned.groups:
            if group.page is PageKind.NEW and not first:
                first.append(
                    build_alert(planned, group, Stack("qw", "state", "arn:aws:sns:us-east-1:1:t", "us-east-1"))
                )

    replays.forecast.on_tick = word
    notes: list[str] = []
    pools = PoolSource()
    ticks = history_source(config, AwsClients(), START, end, now=NOW, jobs_table=JOBS, notes=notes, pools=pools)
    replays.run(ticks())
    [page] = first
    assert page.forecast and "linux.2xlarge forecast to queue past 30m in " in page.subject
    [ahead] = [figures.forecast.text() for figures in page.runner_types if figures.forecast]
    assert ahead.startswith("will queue past 30m in about "), ahead
    assert re.search(r": \d+ jobs arrived in 15m, \d+ runners? left of 50, jobs run about 40m", ahead), ahead


def test_bursts_that_clear_by_themselves_page_within_the_budget_at_the_horizon_suggest_chooses(
    jobs_table: None, tmp_path: Path
) -> None:
    store(bursts(START, "linux.2xlarge"))
    path = tmp_path / "bursts.yaml"
    path.write_text(config_text("15m", None))
    end = START + timedelta(hours=8)
    lines: list[str] = []
    args = arguments(path, end, suggest=True, budget="3/day", forecast="config")
    assert run_backtest(args, AwsClients(), now=NOW, out=lines.append) == 0
    out = "\n".join(lines)
    assert "budget 3/day, so at most 1 forecast page(s) that did not happen" in out  # 3 a day over 8 hours
    assert "rule jobs-queueing: 0 incident(s) the plain rule paged" in out  # the bursts clear by themselves
    chosen = re.search(r"chosen: forecast: (\w+) \(the longest within budget\): (\d+) page\(s\) that did not", out)
    assert chosen is not None, out
    horizon, false_pages = chosen.group(1), int(chosen.group(2))
    assert false_pages <= 1
    # A longer horizon warns of bursts that never queue: the budget is what stops it.
    longest = re.search(r"forecast 1h: \d+ page\(s\), (\d+) did not happen, over budget", out)
    assert longest is not None, out

    lines[:] = []
    assert run_backtest(arguments(path, end, forecast=horizon), AwsClients(), now=NOW, out=lines.append) == 0
    replayed = re.search(r"forecast pages no incident followed \(did not happen\): (\d+)", "\n".join(lines))
    assert replayed is not None and int(replayed.group(1)) == false_pages <= 1
    # The search skips the ticks that plan nothing; replayed in full at 1h, the count is the same.
    lines[:] = []
    assert run_backtest(arguments(path, end, forecast="1h"), AwsClients(), now=NOW, out=lines.append) == 0
    replayed = re.search(r"forecast pages no incident followed \(did not happen\): (\d+)", "\n".join(lines))
    assert replayed is not None and replayed.group(1) == longest.group(1) != "0"
