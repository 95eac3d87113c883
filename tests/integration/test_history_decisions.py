"""The backtest and capacity commands on real-shaped histories: the stack's default, a table that holds fewer
days than asked, a second config that watches none of the jobs, a discovered name in another case, and an
endpoint that does not answer."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from job_records import job_record

from queuewatch.collect.jobs import census
from queuewatch.collect.queues import WatchedQueue
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import JobRecord
from queuewatch_cli.commands.backtest.jobs import job_spans
from queuewatch_cli.commands.backtest.run import run_backtest
from queuewatch_cli.main import build_parser, main

START = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday
NOW = START + timedelta(days=28, minutes=5)
CONFIG = """
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra, keep_firing_for: 5m}}
runner_types: [{name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}]
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m}, for: 0s, group_by: runner_type, priority: P2}
"""
OTHER = CONFIG.replace("linux.2xlarge", "linux.8xlarge").replace("linux-2xlarge", "linux-8xlarge")


def job(n: int, runner_type: str, queued: datetime, wait: timedelta, labels: tuple[str, ...] = ()) -> JobRecord:
    return job_record(
        n,
        runner_type,
        queued,
        started_at=queued + wait,
        completed_at=queued + wait + timedelta(minutes=5),
        labels=labels or ("self-hosted", runner_type),
        label_set="",
        updated_at=queued,
    )


def last_week() -> list[JobRecord]:
    """The jobs table holds a week (tracking turned on then): a job every 30 minutes taken in 30 seconds, and
    one wait a day of 4 to 10 minutes, each a page at thresholds below it."""
    first = NOW - timedelta(days=7)
    jobs = [job(n, "linux.2xlarge", first + timedelta(minutes=30 * n), timedelta(seconds=30)) for n in range(7 * 48)]
    for day in range(7):
        queued = first + timedelta(days=day, hours=10, minutes=7)
        jobs.append(job(1000 + day, "linux.2xlarge", queued, timedelta(minutes=4 + day)))
    return jobs


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> list[JobRecord]:
    jobs = last_week()

    def read_history(_client: Any, _table: str, start: datetime, end: datetime, *_: Any) -> Iterator[JobRecord]:
        return (j for j in jobs if start <= j.queued_since < end)

    monkeypatch.setattr("queuewatch_cli.commands.backtest.run.read_history", read_history)
    return jobs


def backtest(tmp_path: Path, *more: str) -> tuple[int, str]:
    (tmp_path / "a.yaml").write_text(CONFIG)
    (tmp_path / "b.yaml").write_text(OTHER)
    argv = ["backtest", "--config", str(tmp_path / "a.yaml"), "--jobs-table", "jobs", "--quiet", *more]
    lines: list[str] = []
    code = run_backtest(build_parser().parse_args(argv), now=NOW, out=lines.append)
    return code, "\n".join(lines)


def test_suggest_chooses_the_same_over_28_days_as_over_the_7_the_table_holds(
    table: list[JobRecord], tmp_path: Path
) -> None:
    code, week = backtest(tmp_path, "--from", "7d", "--suggest", "--budget", "1/week")
    assert code == 0
    code, month = backtest(tmp_path, "--from", "28d", "--suggest", "--budget", "1/week")
    assert code == 0
    chosen = [line for line in week.splitlines() if line.startswith("  chosen:")]
    assert chosen and chosen == [line for line in month.splitlines() if line.startswith("  chosen:")]
    assert "1 page(s) besides the incidents" in chosen[0] or "0 besides the incidents" in chosen[0]
    assert "the history holds jobs from" in month and "the history holds jobs from" not in week
    code, replay = backtest(tmp_path, "--from", "28d")
    assert code == 0 and "note: the jobs table holds this config's jobs from" in replay


def test_compare_says_when_the_second_config_watches_none_of_the_jobs(table: list[JobRecord], tmp_path: Path) -> None:
    code, out = backtest(tmp_path, "--from", "7d", "--compare", str(tmp_path / "b.yaml"))
    assert code == 0
    b_notes = [line for line in out.splitlines() if line.startswith(f"note: {tmp_path / 'b.yaml'}:")]
    assert b_notes and "it watches none of the jobs" in b_notes[0]
    assert not any(
        line.startswith(f"note: {tmp_path / 'a.yaml'}: ") and "does not watch" in line for line in out.splitlines()
    )


def test_a_discovered_name_in_capitals_is_replayed_as_the_live_collector_counts_it() -> None:
    config = parse_config(CONFIG, source="t.yaml")
    watched = [WatchedQueue("Linux-ARM64", "us-east-1", "1", "gh-ci-Linux-ARM64", None, config.signals_for({}))]
    at = START + timedelta(hours=1)
    jobs = [job(n, "linux-arm64", at, timedelta(minutes=20)) for n in range(2)]  # stored as a lower-case candidate
    spans = job_spans(jobs, watched)
    assert (len(spans), spans.unmatched) == (2, 0)
    # A job for GitHub's hosted runners is counted apart: not a runner type this config fails to watch.
    hosted = job(3, "ubuntu-latest", at, timedelta(seconds=5), labels=("ubuntu-latest",))
    spans = job_spans([*jobs, hosted], watched)
    assert (len(spans), spans.unmatched, spans.hosted) == (2, 0, 1)
    queued = [j.model_copy(update={"status": "queued", "started_at": None, "completed_at": None}) for j in jobs]
    live = census(queued, {"Linux-ARM64"}, at + timedelta(minutes=5))
    assert live.by_runner_type["Linux-ARM64"].count == 2


def deploy(name: str, region: str, outputs: dict[str, str]) -> None:
    """A stack with the outputs the commands read (moto's CloudFormation keeps them)."""
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {k: {"Value": v} for k, v in outputs.items()},
    }
    boto3.client("cloudformation", region_name=region).create_stack(StackName=name, TemplateBody=json.dumps(template))


def test_backtest_honours_the_default_stack(aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    deploy("tracked", "eu-west-1", {"StateTableName": "tracked-state", "JobsTableName": "tracked-jobs"})
    seen: list[tuple[str | None, str | None]] = []

    def replay(args: argparse.Namespace) -> int:
        seen.append((args.region, args.jobs_table))
        return 0

    monkeypatch.setattr("queuewatch_cli.commands.backtest.run.run_backtest", replay)
    monkeypatch.setenv("QUEUEWATCH_STACK", "tracked@eu-west-1")
    assert main(["backtest", "--config", "c.yaml", "--from", "1d"]) == 0
    monkeypatch.delenv("QUEUEWATCH_STACK")
    (tmp_path / "config" / "queuewatch").mkdir(parents=True)
    (tmp_path / "config" / "queuewatch" / "config.yaml").write_text("stacks: [tracked@eu-west-1]\n")
    assert main(["backtest", "--config", "c.yaml", "--from", "1d"]) == 0
    assert seen == [("eu-west-1", "tracked-jobs")] * 2


def test_backtest_help_names_the_default_stacks_region_and_jobs_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["backtest", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "region and jobs table" in shown and "$QUEUEWATCH_STACK" in shown
    assert "stacks: in ~/.config/queuewatch/config.yaml" in shown


def test_a_read_that_times_out_is_an_endpoint_that_did_not_answer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def read_history(*_: Any, **__: Any) -> Iterator[JobRecord]:
        yield from ()
        raise ReadTimeoutError(endpoint_url="https://dynamodb.us-east-1.amazonaws.com/")

    monkeypatch.setattr("queuewatch.adapters.jobs_table.jobs.read_history", read_history)
    assert main(["capacity", "--table", "jobs", "--region", "us-east-1"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("queuewatch: AWS did not answer in time") and len(err.splitlines()) == 1
    monkeypatch.setattr("queuewatch_cli.commands.backtest.run.read_history", read_history)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no default stack
    monkeypatch.delenv("QUEUEWATCH_STACK", raising=False)
    (tmp_path / "a.yaml").write_text(CONFIG)
    assert main(["backtest", "--config", str(tmp_path / "a.yaml"), "--jobs-table", "j", "--from", "1d", "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("queuewatch: AWS did not answer in time") and len(err.splitlines()) == 1


def test_the_plot_says_when_the_second_config_never_fired() -> None:
    from queuewatch_cli.commands.backtest.plot import Timeline

    a = Timeline(parse_config(CONFIG, source="a.yaml"), START, START + timedelta(hours=1), "a.yaml")
    b = Timeline(parse_config(OTHER, source="b.yaml"), START, START + timedelta(hours=1), "b.yaml")
    a.spans = [(START + timedelta(minutes=5), START + timedelta(minutes=20), "jobs-queueing")]
    b.notes = ["3 of 3 jobs read are for runner types this config does not watch"]
    figure = a.figure(b)
    [axes] = figure.axes
    texts = [t.get_text() for t in axes.texts]
    assert "B: no page: 3 of 3 jobs read are for runner types this config does not watch" in texts
    assert not any(t.startswith("A: no page") for t in texts)
    footnote = " ".join(t.get_text() for t in figure.texts)  # which file is A and which is B
    assert "a.yaml" in footnote and "b.yaml" in footnote
