"""`queuewatch backtest --suggest`: a week of history seeded into moto's CloudWatch, with three real incidents
on one runner type and a runner type whose queue spikes three times a day, never for long."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from job_records import job_record

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.base.errors import QueuewatchError
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import JobRecord
from queuewatch_cli.commands.backtest.run import backtest, run_backtest
from queuewatch_cli.commands.backtest.suggest import Setting, candidate_config, parse_budget, parse_incidents
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import seed_jobs

START = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday
END = START + timedelta(days=7)
NOW = END + timedelta(hours=1)
QUEUES = {"linux.2xlarge": "gh-ci-linux-2xlarge-queued-builds", "linux.noisy": "gh-ci-linux-noisy-queued-builds"}
CONFIG = """
version: 1
defaults:
  region: us-east-1
  queue_source: sqs
  rule: {team: ci-infra, keep_firing_for: 5m, repeat_interval: 1h}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.noisy, queue: {name: gh-ci-linux-noisy-queued-builds}}
rules:
  - name: jobs-queueing
    match: ["*"]
    thresholds: {queue_time: 1m, queue_size: 0}
    breach_when: all
    for: 0s
    group_by: runner_type
    priority: P2
"""
# (runner type, start minute, minutes, queue size): the oldest job's age grows a minute a minute from 0.
INCIDENTS = [("linux.2xlarge", 1 * 1440 + 600, 60, 12), ("linux.2xlarge", 3 * 1440 + 200, 45, 8)]
INCIDENTS += [("linux.2xlarge", 5 * 1440 + 900, 90, 20)]
NOISE = [("linux.noisy", day * 1440 + hour * 60 + 7, 8, 3) for day in range(7) for hour in (9, 14, 20)]
INCIDENT_FILE = """\
# when the on-call was needed: start [end] [runner types]
2026-03-03T10:00Z  2026-03-03T11:00Z  linux.2xlarge
2026-03-05T03:20Z
2026-03-07T15:00Z  2026-03-07T16:30Z
"""


def seed(cloudwatch: Any) -> None:
    data: list[Any] = []
    for name, begin, length, size in INCIDENTS + NOISE:
        for minute in range(begin, begin + length + 15):
            inside = minute < begin + length
            dimensions = [{"Name": "QueueName", "Value": QUEUES[name]}]
            stamp = START + timedelta(minutes=minute)
            for metric, value in (
                ("ApproximateNumberOfMessagesVisible", size if inside else 0),
                ("ApproximateAgeOfOldestMessage", (minute - begin) * 60.0 if inside else 0),
            ):
                data.append({"MetricName": metric, "Dimensions": dimensions, "Timestamp": stamp, "Value": value})
    for offset in range(0, len(data), 500):
        cloudwatch.put_metric_data(Namespace="AWS/SQS", MetricData=data[offset : offset + 500])


@pytest.fixture
def seeded(aws: None) -> None:
    seed(boto3.client("cloudwatch", region_name="us-east-1"))


def arguments(tmp_path: Path, budget: str, incidents: str | None) -> argparse.Namespace:
    config = tmp_path / "queuewatch.yaml"
    config.write_text(CONFIG)
    path = None
    if incidents is not None:
        (tmp_path / "incidents.txt").write_text(incidents)
        path = str(tmp_path / "incidents.txt")
    return argparse.Namespace(
        config=str(config),
        compare=None,
        start=START.isoformat(),
        end=END.isoformat(),
        plot=None,
        region=None,
        quiet=True,
        suggest=True,
        budget=budget,
        incidents=path,
    )


def chosen_setting(out: str) -> Setting:
    line = next(line for line in out.splitlines() if line.startswith("  chosen: "))
    text = line.removeprefix("  chosen: queue time > ").split(":")[0]
    threshold, pending = text.split(", for ")
    from queuewatch.base.durations import parse_duration

    return Setting(parse_duration(threshold), parse_duration(pending), True)


def test_suggest_pages_the_three_incidents_within_budget_and_the_replay_shows_it(seeded: None, tmp_path: Path) -> None:
    lines: list[str] = []
    assert run_backtest(arguments(tmp_path, "1/week", INCIDENT_FILE), AwsClients(), now=NOW, out=lines.append) == 0
    out = "\n".join(lines)
    # The rule as it is pages every spike of the noisy runner type: far over budget.
    assert "queue time > 1m, for 0s: 24 page(s), 21 besides incidents, over budget (1)" in out
    setting = chosen_setting(out)
    assert "incident at 2026-03-03 10:00 UTC on linux.2xlarge: paged" in out

    # The replay of the chosen setting, through the plain backtest: the three incidents paged, within budget.
    config = parse_config(CONFIG, source="test.yaml")
    chosen = candidate_config(config, config.rules[0], config.resolved_rules[0], setting)
    episodes = backtest(chosen, AwsClients(), START, END, now=NOW).replay.episodes
    incidents = parse_incidents(INCIDENT_FILE, "incidents.txt")
    for incident in incidents:
        paged = [e for e in episodes if incident.paged_by(e, END)]
        assert paged, incident.label()
        late = (paged[0].started_at - incident.start).total_seconds()
        assert f"{incident.label()}: paged {late // 60:.0f}m after its start" in out
    noise = [e for e in episodes if not any(i.paged_by(e, END) for i in incidents)]
    assert len(noise) <= 1
    assert all(e.runner_types == {"linux.2xlarge"} for e in episodes)


def test_suggest_says_plainly_when_nothing_meets_the_budget_and_the_incidents(seeded: None, tmp_path: Path) -> None:
    # An incident marked on the noisy runner type at a spike's time: paging it pages every spike like it.
    marked = "2026-03-04T14:07Z 2026-03-04T14:15Z linux.noisy\n"
    lines: list[str] = []
    args = arguments(tmp_path, "1/week", marked)
    args.start, args.end = (START + timedelta(days=2)).isoformat(), (START + timedelta(days=3)).isoformat()
    assert run_backtest(args, AwsClients(), now=NOW, out=lines.append) == 1
    out = "\n".join(lines)
    assert "no setting tried meets both the budget and the incidents" in out


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("2026-03-03T10:00Z 2026-03-03T09:00Z\n", "incidents.txt, line 1: the end 2026-03-03 09:00 UTC is not after"),
        ("# a comment\nyesterday\n", "incidents.txt, line 2: found 'yesterday', expected an ISO time"),
        ("2026-03-03T10:00Z a b\n", "incidents.txt, line 1: found 'a b', expected runner types joined by commas"),
    ],
)
def test_a_bad_incident_file_is_refused_naming_the_line(text: str, problem: str) -> None:
    with pytest.raises(QueuewatchError, match=problem):
        parse_incidents(text, "incidents.txt")


@pytest.mark.parametrize("text", ["1", "1/fortnight", "-1/week", "x/day"])
def test_a_bad_budget_is_refused(text: str) -> None:
    with pytest.raises(QueuewatchError, match="--budget: found"):
        parse_budget(text)


def test_budgets_scale_to_the_range() -> None:
    assert parse_budget("1/week").allowed(14 * 86400) == 2
    assert parse_budget("3/day").allowed(7 * 86400) == 21
    assert parse_budget("2/14d").allowed(7 * 86400) == 1


def test_budget_or_incidents_without_suggest_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = arguments(tmp_path, "1/week", INCIDENT_FILE)
    args.suggest = False
    assert run_backtest(args, AwsClients(), now=NOW) == 2
    assert "--budget and --incidents go with --suggest" in capsys.readouterr().err


def tracked(job_id: int, runner_type: str, queued: datetime, wait_minutes: float) -> JobRecord:
    started = queued + timedelta(minutes=wait_minutes)
    return job_record(job_id, runner_type, queued, started_at=started, completed_at=started + timedelta(minutes=5))


def test_suggest_on_the_tracked_jobs_pages_the_incidents_and_not_the_noise(aws: None, tmp_path: Path) -> None:
    """The same question on the jobs' history (--jobs-table): two days, a job stuck 40 minutes at each of three
    incidents, and the noisy runner type's jobs waiting 7 minutes three times a day."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(dynamodb, "jobs")
    day = START + timedelta(days=1)
    jobs = [tracked(i, "linux.2xlarge", day + timedelta(hours=h), 40) for i, h in enumerate((3, 11, 19), start=1)]
    jobs += [
        tracked(100 + i, "linux.noisy", START + timedelta(hours=8 * i + 2), 7) for i in range(6)
    ]  # noise, every 8 hours
    jobs += [tracked(200 + i, "linux.2xlarge", START + timedelta(minutes=97 * i), 0.5) for i in range(20)]
    seed_jobs(dynamodb, "jobs", jobs)
    incidents = "".join(f"{day + timedelta(hours=h):%Y-%m-%dT%H:%M}Z linux.2xlarge\n" for h in (3, 11, 19))
    args = arguments(tmp_path, "1/week", incidents)
    args.end = (START + timedelta(days=2)).isoformat()
    args.jobs_table, args.source = "jobs", "jobs"
    (tmp_path / "queuewatch.yaml").write_text(CONFIG.replace("queue_source: sqs", "queue_source: jobs"))
    lines: list[str] = []
    assert run_backtest(args, AwsClients(), now=NOW, out=lines.append) == 0
    out = "\n".join(lines)
    assert "queue time > 1m, for 0s: 9 page(s), 6 besides incidents, over budget" in out
    setting = chosen_setting(out)
    config = parse_config(CONFIG.replace("queue_source: sqs", "queue_source: jobs"), source="test.yaml")
    chosen = candidate_config(config, config.rules[0], config.resolved_rules[0], setting)
    end = START + timedelta(days=2)
    episodes = backtest(chosen, AwsClients(), START, end, now=NOW, jobs_table="jobs").replay.episodes
    assert [(e.started_at.hour, e.runner_types) for e in episodes] == [
        (h, {"linux.2xlarge"}) for h in (3, 11, 19)
    ]  # the three, paged, and nothing else
    for h in (3, 11, 19):
        late = (episodes[(3, 11, 19).index(h)].started_at - (day + timedelta(hours=h))).total_seconds()
        assert f"paged {late // 60:.0f}m after its start" in out
