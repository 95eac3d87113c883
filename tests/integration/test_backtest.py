"""`queuewatch backtest`: a fortnight seeded into moto's CloudWatch, replayed, and compared with the live evaluator.

The fortnight is seeded once per module (the tests only read it), and replayed with the linux rule once."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from faults import inject
from moto import mock_aws
from support import Inbox, StackInMoto, fake_aws_environment, runner_type, snapshot

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.base.errors import QueuewatchError
from queuewatch.config import Config
from queuewatch.config.load import load_config, parse_config
from queuewatch_cli.commands.backtest.report import compare, comparison_lines
from queuewatch_cli.commands.backtest.run import Outcome, backtest, run_backtest
from queuewatch_cli.commands.demo.harness import DEMO_ENV, Demo
from queuewatch_cli.commands.demo.run import play

START = datetime(2026, 3, 2, tzinfo=UTC)  # a Monday; the fortnight runs to START + 14 days
END = START + timedelta(days=14)
NOW = END + timedelta(hours=1)
QUEUES = {
    "linux.2xlarge": "gh-ci-linux-2xlarge-queued-builds",
    "linux.4xlarge": "gh-ci-linux-4xlarge-queued-builds",
    "windows.4xlarge": "gh-ci-windows-4xlarge-queued-builds",
}

CONFIG = """
version: 1
defaults:
  region: us-east-1
  rule: {{team: ci-infra, keep_firing_for: 5m, repeat_interval: 1h}}
runner_types:
  - {{name: linux.2xlarge, queue: {{name: gh-ci-linux-2xlarge-queued-builds}}}}
  - {{name: linux.4xlarge, queue: {{name: gh-ci-linux-4xlarge-queued-builds}}}}
  - {{name: windows.4xlarge, queue: {{name: gh-ci-windows-4xlarge-queued-builds}}}}
rules:
  - name: linux-queueing
    match: [{match}]
    thresholds: {{queue_time: 30m, queue_size: 5}}
    breach_when: all
    for: 5m
    group_by: runner_type
    priority: P2
  - name: windows-backlog  # so that every runner type has a rule (check-config); its bar is never reached here
    match: ['windows.*']
    thresholds: {{queue_size: 1000}}
    priority: P3
"""

# (runner type, start minute, minutes, queue size, age of the oldest job at the start in minutes)
INCIDENTS = [
    ("linux.2xlarge", 600, 120, 20, 25),  # day 1: pages after 5m pending, repeats after an hour
    ("linux.2xlarge", 740, 30, 12, 40),  # resolves, then pages again within 30 minutes: a flap
    ("linux.4xlarge", 3 * 1440 + 60, 45, 8, 35),
    ("windows.4xlarge", 5 * 1440, 90, 9, 31),  # only a rule matching every runner type pages this
    ("linux.4xlarge", 9 * 1440 + 30, 8, 50, 10),  # never old enough: no page
    ("linux.2xlarge", 13 * 1440 + 100, 60, 30, 45),
]


def figures(minute: int) -> dict[str, tuple[float, float]]:
    """Queue size and age (seconds) of each runner type whose queue holds jobs during that minute."""
    out: dict[str, tuple[float, float]] = {}
    for name, begin, length, size, age in INCIDENTS:
        if begin <= minute < begin + length:
            out[name] = (size, (age + minute - begin) * 60.0)
    return out


def seed_history(cloudwatch: Any) -> None:
    """AWS/SQS datapoints while jobs queue, and zeros for a quarter of an hour after, as CloudWatch publishes
    for a queue that was active; then nothing, as for an idle queue."""
    data: list[Any] = []
    for name, begin, length, _, _ in INCIDENTS:
        for minute in range(begin, begin + length + 15):
            size, age = figures(minute).get(name, (0, 0))
            stamp = START + timedelta(minutes=minute)
            dimensions = [{"Name": "QueueName", "Value": QUEUES[name]}]
            data.append(
                {
                    "MetricName": "ApproximateNumberOfMessagesVisible",
                    "Dimensions": dimensions,
                    "Timestamp": stamp,
                    "Value": size,
                }
            )
            data.append(
                {
                    "MetricName": "ApproximateAgeOfOldestMessage",
                    "Dimensions": dimensions,
                    "Timestamp": stamp,
                    "Value": age,
                }
            )
    for offset in range(0, len(data), 500):
        cloudwatch.put_metric_data(Namespace="AWS/SQS", MetricData=data[offset : offset + 500])


def config(match: str = '"linux.*"') -> Config:
    return parse_config(CONFIG.format(match=match), source="test.yaml")


@pytest.fixture(scope="module")
def seeded() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch, mock_aws():
        fake_aws_environment(patch)
        seed_history(boto3.client("cloudwatch", region_name="us-east-1"))
        yield


@pytest.fixture(scope="module")
def linux_replay(seeded: None) -> Outcome:
    """The fortnight replayed with the linux rule, its pages kept: what the live evaluator and compare check."""
    return backtest(config(), AwsClients(), START, END, now=NOW, keep_pages=True)


def live_pages(cfg: Config) -> list[tuple[datetime, str, int, tuple[str, ...]]]:
    """The live evaluator on moto, one tick a minute, on snapshots of the same figures the history holds.

    A tick with no alert state and no breach changes nothing, so those ticks are skipped for speed."""
    stack = StackInMoto.create()
    inbox = Inbox(stack.sns)
    busy = False
    for minute in range(0, 14 * 1440 + 1):
        now = START + timedelta(minutes=minute)
        seen = figures(minute - 1)  # the collector at `now` reads the datapoint of the minute before
        if not busy and not seen:
            continue
        observed = [runner_type(name, *seen.get(name, (0, 0))) for name in QUEUES]
        result = stack.evaluate(snapshot(now, *observed), cfg)  # each tick arrives as it is made
        busy = bool(result.firing or result.pending)
    return [
        (
            datetime.fromisoformat(a["evaluated_at"]),
            a["page"],
            a["sequence"],
            tuple(r["runner_type"] for r in a["runner_types"]),
        )
        for a in inbox.drain()
    ]


def test_the_demo_history_pages_at_the_demos_minute_and_not_at_150_jobs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """First in the module: its own moto, before the module's seeded one starts (a nested moto would share it)."""
    for key, value in DEMO_ENV.items():
        monkeypatch.setenv(key, value)

    default = Path(os.environ["QUEUEWATCH_CONFIG"])
    raised = tmp_path / "queue-size-150.yaml"
    raised.write_text(default.read_text().replace("queue_size: 0", "queue_size: 150"))
    plot = tmp_path / "timeline.png"
    with mock_aws():
        demo = Demo(lambda _: None)
        assert play(demo) == 0
        start = demo.start
        args = argparse.Namespace(
            config=str(default),
            compare=str(raised),
            start=start.isoformat(),
            end=(start + timedelta(minutes=10)).isoformat(),
            plot=str(plot),
            region=None,
            quiet=True,
        )
        lines: list[str] = []
        # Not capsys: the handlers' shared logger, made here, would keep its stream after the test closed it.
        assert run_backtest(args, AwsClients(), now=start + timedelta(minutes=12), out=lines.append) == 0
        episodes = backtest(
            load_config(default), AwsClients(), start, start + timedelta(minutes=10), now=start + timedelta(minutes=12)
        ).replay.episodes
    out = "\n".join(lines)
    assert [(e.started_at, e.resolved_at) for e in episodes] == [(start, start + timedelta(minutes=7))]
    only_a = out.split("pages only A sends: ")[1]
    assert only_a.startswith("1\n") and f"{start:%Y-%m-%d %H:%M} UTC -> " in only_a
    assert "pages only B sends: 0" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 10_000


def test_the_replay_pages_exactly_as_the_live_evaluator(linux_replay: Outcome) -> None:
    outcome = linux_replay
    replayed = [(p.at, p.kind.value, p.sequence, p.runner_types) for p in outcome.replay.pages]
    assert replayed == live_pages(config())
    kinds = [kind for _, kind, _, _ in replayed]
    assert {"new", "repeat", "resolved"} <= set(kinds)
    first = outcome.replay.episodes[0]
    # The oldest job passes 30m at minute 606, seen a minute later, then pending for 5m.
    assert first.started_at == START + timedelta(minutes=606 + 1 + 5)
    assert first.breach_to_page_seconds == 300
    assert first.peak_queue_size == 20


def test_a_rule_matching_every_runner_type_shows_in_compare(linux_replay: Outcome) -> None:
    a = linux_replay.replay.episodes  # config('"linux.*"')
    b = backtest(config('"*"'), AwsClients(), START, END, now=NOW).replay.episodes
    lines = "\n".join(comparison_lines(compare(a, b, END), "a.yaml", "b.yaml"))
    assert "pages only A sends: 0" in lines
    assert "pages only B sends: 1" in lines
    assert "B pages 1 runner type(s) A never pages: windows.4xlarge" in lines


def test_the_report_counts_flaps_and_pages_per_week(
    seeded: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(CONFIG.format(match='"linux.*"'))
    args = argparse.Namespace(
        config=str(path),
        compare=None,
        start=START.isoformat(),
        end=END.isoformat(),
        plot=None,
        region=None,
        quiet=False,
    )
    assert run_backtest(args, AwsClients(), now=NOW) == 0
    out, err = capsys.readouterr()
    assert "4 page(s)" in out and "pages per week 2.0" in out
    assert "linux-queueing/linux.2xlarge: resolved 2026-03-02 12:06 UTC, paged again 20m later" in out
    assert "GetMetricData call(s)" in err  # progress on stderr


def test_a_failed_read_stops_the_backtest_with_its_reason(seeded: None) -> None:
    """Replayed, a failed listing or read would page the monitor, or resolve alerts, for the whole range."""
    discovering = parse_config(
        CONFIG.format(match='"linux.*"')
        + "discovery: [{queue_name_pattern: '{prefix}-{runner_type}-queued-builds', prefix: gh-ci}]\n",
        source="d.yaml",
    )
    clients = AwsClients()
    inject(clients.sqs("us-east-1"), "ListQueues", "access-denied")
    with pytest.raises(QueuewatchError, match=r"discovery of .* in us-east-1: listing the queues: .*AccessDenied"):
        backtest(discovering, clients, START, END, now=NOW)
    clients = AwsClients()
    inject(clients.cloudwatch("us-east-1"), "GetMetricData", "access-denied", only_call=1)
    with pytest.raises(QueuewatchError, match=r"GetMetricData in us-east-1 for 2026-03-07 .*AccessDenied"):
        backtest(config(), clients, START, END, now=NOW)
