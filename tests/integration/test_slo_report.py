"""`queuewatch slo` on moto: each SLO's achieved share, budget left and burn rates, from the counters the
track stage wrote and the jobs queued now, as the live evaluator counts them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest
from job_records import job_record

from queuewatch.adapters.jobs_table.jobs import put_job
from queuewatch.adapters.slo_table.counters import Contribution, count_job
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_slo_table, create_state_table
from queuewatch_cli.devkit.seed import seed_jobs
from queuewatch_cli.main import main

CONFIG = """
version: 1
runner_types:
  - {name: linux.2xlarge, team: ci-infra, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, team: ci-infra, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 30m}}
slos:
  - {name: linux-fast, objective: 99%, queue_time_under: 2m, team: ci-infra}
"""


def test_the_report_counts_the_started_and_the_waiting_jobs_over_the_window(
    aws: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_slo_table(dynamodb, "slos")
    create_jobs_table(dynamodb, "jobs")
    now = datetime.now(UTC)
    keep = now + timedelta(days=30)
    # 199 good and 5 late jobs decided over the last half hour; one job counted twice is counted once.
    for number in range(204):
        at = now - timedelta(minutes=30) + timedelta(seconds=8 * number)
        late = number % 50 == 0
        contribution = Contribution("linux-fast", "bad" if late else "good", at, keep)
        count_job(dynamodb, "slos", number, [contribution], keep)
    count_job(dynamodb, "slos", 1, [Contribution("linux-fast", "good", now, keep)], keep)
    # One job waiting 10 minutes: bad since it waited 2.
    queued_at = now - timedelta(minutes=10)
    waiting = job_record(999, "linux.2xlarge", queued_at, run_id=1, expires_at=keep)
    put_job(dynamodb, "jobs", waiting, "w")
    # In the history: two jobs that started late, one on each runner type, and one that started in time.
    for number, runner_type, wait in (
        (1001, "linux.4xlarge", 5),
        (1002, "linux.2xlarge", 9),
        (1003, "linux.2xlarge", 1),
    ):
        started = queued_at - timedelta(hours=2) + timedelta(minutes=wait)
        record = waiting.model_copy(
            update={
                "job_id": number,
                "runner_type": runner_type,
                "status": "in_progress",
                "progress": 2,
                "queued_at": queued_at - timedelta(hours=2),
                "created_at": queued_at - timedelta(hours=2),
                "started_at": started,
            }
        )
        put_job(dynamodb, "jobs", record, "w")
    config = tmp_path / "q.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    args = ["slo", "--config", str(config), "--slo-table", "slos", "--jobs-table", "jobs", "--region", "us-east-1"]
    assert main([*args, "--json"]) == 0
    [summary] = json.loads(capsys.readouterr().out)
    assert (summary["jobs"], summary["bad"]) == (205, 6)
    assert summary["achieved"] == pytest.approx(199 / 205)
    assert summary["budget_left_jobs"] == pytest.approx(0.01 * 205 - 6)
    assert summary["budget_left_fraction"] == pytest.approx((0.01 * 205 - 6) / (0.01 * 205))
    fast = next(p for p in summary["pairs"] if p["name"] == "fast")
    assert fast["long_jobs"] == 205 and fast["long_burn"] == pytest.approx(6 / 205 / 0.01)
    assert not fast["firing"]  # 2.9 is under 14.4
    assert next(p for p in summary["pairs"] if p["name"] == "ticket")["firing"]  # and over 1
    assert summary["spent_by_runner_type"] == [["linux.2xlarge", 2], ["linux.4xlarge", 1]]
    assert sum(count for _, count in summary["spent_by_hour"]) == 3
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "achieved 97.07% of 205 jobs (6 late)" in text
    assert "late jobs by runner type: linux.2xlarge 2, linux.4xlarge 1" in text


def test_status_gives_each_slos_budget_in_one_line(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("QUEUEWATCH_STACK", raising=False)
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_state_table(dynamodb, "state")
    create_slo_table(dynamodb, "slos")
    create_jobs_table(dynamodb, "jobs")
    outputs = {"StateTableName": "state", "JobsTableName": "jobs", "SloTableName": "slos"}
    template = {
        "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {k: {"Value": v} for k, v in outputs.items()},
    }
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName="q", TemplateBody=json.dumps(template)
    )
    now = datetime.now(UTC)
    keep = now + timedelta(days=30)
    for number in range(100):  # 98 in time, 2 late: 2% late against a 1% budget
        contribution = Contribution("linux-fast", "bad" if number < 2 else "good", now - timedelta(minutes=20), keep)
        count_job(dynamodb, "slos", number, [contribution], keep)
    config = tmp_path / "q.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    assert main(["status", "--stack", "q", "--region", "us-east-1", "--config", str(config), "--no-figures"]) == 0
    out = capsys.readouterr().out
    assert "slo linux-fast: budget left -100% (-1.0 of 1.0 jobs) over 28d, 98.00% of 100 jobs in time" in out
    assert main(["status", "--table", "state", "--region", "us-east-1", "--config", str(config), "--no-figures"]) == 0
    assert "slo linux-fast: budget unknown: no SLO table" in capsys.readouterr().out


def test_the_plot_draws_the_burn_down_with_the_slos_alerts_from_the_sent_log(
    aws: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from queuewatch.adapters.state_table.sent_log import SENT, SentEntry, put_entry
    from queuewatch_cli.commands.slo import plot as slo_plot

    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_slo_table(dynamodb, "slos")
    create_jobs_table(dynamodb, "jobs")
    create_state_table(dynamodb, "state")
    now = datetime.now(UTC)
    keep = now + timedelta(days=30)
    for number in range(100):
        at = now - timedelta(hours=10) + timedelta(minutes=6 * number)
        count_job(
            dynamodb, "slos", number, [Contribution("linux-fast", "bad" if number < 3 else "good", at, keep)], keep
        )
    paged = now - timedelta(hours=9)
    for rule, kind, notification in (("slo:linux-fast", "new", "n1"), ("slo:linux-fast", "resolved", "n2"),
                                     ("jobs-queueing", "new", "n3")):  # fmt: skip
        put_entry(dynamodb, "state", SentEntry(
            at=paged, page_at=paged, notification_id=notification, kind=kind, outcome=SENT, topic="alert", rule=rule,
            group="", priority="P2", team="ci-infra", runner_types=(), runner_types_affected=1, subject=rule,
        ))  # fmt: skip
    drawn: list[list[slo_plot.BurnDown]] = []
    real_draw = slo_plot.draw

    def draw(charts: list[slo_plot.BurnDown], path: str) -> None:
        drawn.append(list(charts))
        real_draw(charts, path)

    monkeypatch.setattr(slo_plot, "draw", draw)
    config = tmp_path / "q.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    image = tmp_path / "slo.png"
    args = ["slo", "--config", str(config), "--slo-table", "slos", "--jobs-table", "jobs", "--region", "us-east-1"]
    assert main([*args, "--plot", str(image), "--state-table", "state"]) == 0
    assert f"written to {image}" in capsys.readouterr().out and image.stat().st_size > 0
    [[chart]] = drawn
    assert [f.rule for f in chart.fired] == ["slo:linux-fast"] and chart.alerts_read
    assert chart.points[-1][1] == pytest.approx((1 - 3) / 1)  # budget 1 job of 100, 3 late
    assert main([*args, "--plot", str(tmp_path / "no-such-folder" / "slo.png")]) != 0  # said before any read
    assert "no-such-folder does not exist" in capsys.readouterr().err


def test_check_config_gives_each_slos_budget_in_jobs_at_the_last_days_volume(
    aws: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from queuewatch_cli.commands.check_config.check import check_config

    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, "jobs")
    now = datetime(2026, 11, 21, 12, tzinfo=UTC)
    # The last day: 300 jobs, 100 of them on linux.4xlarge; two days ago, 50 more that today's volume leaves out.
    history = []
    for number in range(350):
        queued_at = now - timedelta(days=2) if number >= 300 else now - timedelta(minutes=4 * number + 1)
        runner_type = "linux.4xlarge" if number % 3 == 0 else "linux.2xlarge"
        history.append(
            job_record(
                number,
                runner_type,
                queued_at,
                started_at=queued_at + timedelta(seconds=20),
                run_id=1,
                updated_at=queued_at,
                expires_at=now + timedelta(days=14),
            )
        )
    seed_jobs(dynamodb, "jobs", history)
    config = tmp_path / "q.yaml"
    config.write_text(
        CONFIG + "  - {name: big, match: [linux.4xlarge], objective: 95%, queue_time_under: 5m, window: 7d, "
        "team: ci-infra}\n",
        encoding="utf-8",
    )
    assert check_config([str(config)], now=now, jobs_table="jobs", region="us-east-1") == 0
    out = capsys.readouterr().out
    assert "budget in jobs: 84 of 8,400 jobs over 28d at today's 300 a day" in out
    assert "budget in jobs: 35 of 700 jobs over 7d at today's 100 a day" in out
    assert "the history's storage at 29 days: $0.00 a month at today's 300 jobs a day" in out
    # Without the table, or with one it cannot read, the budget in jobs is unknown, never guessed.
    assert check_config([str(config)], now=now, jobs_table="no-such-table", region="us-east-1") == 0
    captured = capsys.readouterr()
    assert "--jobs-table no-such-table: the last day's jobs not read" in captured.err
    assert captured.out.count("budget in jobs: unknown here") == 2
