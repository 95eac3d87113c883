"""`queuewatch status` against the evaluator's own state in moto: what it shows, read with one Query."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from aws_lambda_powertools import Metrics
from faults import inject
from support import T0, StackInMoto, minutes, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import put_silence
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult
from queuewatch.evaluate.telemetry import record_tick
from queuewatch.model.snapshot import Snapshot
from queuewatch.runtime.metric_names import runner_type_dimensions
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.seed import put_evaluator_figures
from queuewatch_cli.main import main

CONFIG_TEXT = """
version: 1
defaults:
  rule: {team: ci-infra, keep_firing_for: 5m}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}, team: rocm}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, for: 2m, priority: P2}
monitor:
  for: 2m
"""
CONFIG = parse_config(CONFIG_TEXT, source="test.yaml")
WINDOWED = (
    CONFIG_TEXT
    + """maintenance_windows:
  - {name: patching, time_zone: UTC, weekdays: [saturday], start: "18:03", end: "18:30"}
"""
)


def tick(minute: float, *, big_queueing: bool = False) -> Snapshot:
    return snapshot(
        minutes(minute),
        runner_type("linux.2xlarge", 14, 114 * 60),
        runner_type("linux.4xlarge", 3, 300) if big_queueing else runner_type("linux.4xlarge"),
        runner_type("rocm.gpu", None, None, team="rocm", missing="GetQueueAttributes failed: QueueDoesNotExist"),
    )


@pytest.fixture
def stack(aws: None) -> StackInMoto:
    return StackInMoto.create()


def calls_of(client: Any) -> list[str]:
    calls: list[str] = []
    client.meta.events.register("before-call.dynamodb", lambda model, **_: calls.append(model.name))
    return calls


def test_status_shows_alerts_silences_the_last_tick_and_degraded_signals(stack: StackInMoto) -> None:
    put_silence(
        stack.dynamodb, "state", SilenceRecord("s-rocm", (), None, "rocm", T0, minutes(60), "alice", "rocm migration")
    )
    put_silence(stack.dynamodb, "state", SilenceRecord("s-old", (), None, None, T0, minutes(1), "bob", "over"))
    for minute in (0, 1, 2):
        stack.evaluate(tick(minute), CONFIG)
    stack.evaluate(tick(3, big_queueing=True), CONFIG)
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    calls = calls_of(dynamodb)

    text = show_status(dynamodb, "state", minutes(3.5), as_json=False)  # no CloudWatch client: no figures

    assert calls == ["Query", "GetItem"]  # the state partition, and the forecasts' board beside it
    assert "alerts last changed: 2026-11-21 18:03 UTC (30s ago)" in text
    alerts = text.split("alerts pending or firing: ")[1].split("active silences")[0]
    # The team silence holds back rocm's alerts, never queuewatch's own page about rocm.gpu's signals.
    assert alerts.startswith("3\n") and "queuewatch-health / " in alerts
    assert "jobs-queueing / all: firing since 2026-11-21 18:02 UTC" in alerts
    assert "paged at 2026-11-21 18:02 UTC (page 1)" in alerts and "outbox" not in alerts
    assert "    linux.2xlarge: firing since 2026-11-21 18:02 UTC" in alerts
    # linux.4xlarge breaches too, but no page lists it yet: it shows on its own, pending.
    assert "jobs-queueing / (no page yet): pending since 2026-11-21 18:03 UTC" in alerts
    assert "    linux.4xlarge: pending since 2026-11-21 18:03 UTC" in alerts
    assert "active silences: 1\n  s-rocm  by alice until 2026-11-21 19:00 UTC" in text and "s-old" not in text
    assert "team=rocm" in text and "rocm migration" in text
    degraded = text.split("degraded signals (the queuewatch-health rule's instances): ")[1]
    assert degraded == (  # what it cannot see, and why, under it
        "1\n  rocm.gpu: firing since 2026-11-21 18:02 UTC\n"
        "    queue_size: GetQueueAttributes failed: QueueDoesNotExist; queue_time: GetQueueAttributes failed: "
        "QueueDoesNotExist"
    )


def test_a_page_waiting_in_the_outbox_shows_with_its_figures(stack: StackInMoto) -> None:
    stack.evaluate(tick(0), CONFIG)
    stack.evaluate(tick(1), CONFIG)
    inject(stack.sns, "Publish", "5xx", only_call=0)
    result = stack.evaluate(tick(2), CONFIG)
    assert result.pages_failed

    waiting = json.loads(show_status(stack.dynamodb, "state", minutes(2.5), as_json=True))

    # The first publish of the tick failed: the jobs' page. The monitor's own, about rocm.gpu, went out.
    alert, health = waiting["alerts"]
    assert health["rule"] == "queuewatch-health" and [m["runner_type"] for m in health["members"]] == ["rocm.gpu"]
    assert health["outbox"] is None and health["sequence"] == 1
    assert alert["status"] == "firing" and alert["rule"] == "jobs-queueing" and alert["group"] == "all"
    assert (
        alert["outbox"].endswith("not yet delivered to the alert topic(s), retried since 2026-11-21 18:02 UTC")
        and alert["sequence"] == 1
    )
    [member] = alert["members"]
    assert (member["runner_type"], member["queue_size"], member["queue_time_seconds"]) == ("linux.2xlarge", 14, 6840)
    assert waiting["applied_at"] == "2026-11-21T18:02:00+00:00"

    stack.evaluate(tick(3), CONFIG)  # the next tick publishes what waited
    sent = json.loads(show_status(stack.dynamodb, "state", minutes(3.5), as_json=True))
    assert [(a["outbox"], a["sequence"]) for a in sent["alerts"]] == [(None, 1), (None, 1)]


def test_figures_come_from_the_evaluators_metrics_in_one_call(stack: StackInMoto) -> None:
    for minute in (0, 1, 2):
        stack.evaluate(tick(minute), CONFIG)
    cloudwatch = boto3.client("cloudwatch", region_name="us-east-1")
    put_evaluator_figures(cloudwatch, "Queuewatch", {"linux.2xlarge": (12, 100 * 60)}, minutes(1))
    put_evaluator_figures(cloudwatch, "Queuewatch", {"linux.2xlarge": (14, 114 * 60)}, minutes(2))
    calls: list[str] = []
    cloudwatch.meta.events.register("before-call.cloudwatch", lambda model, **_: calls.append(model.name))

    text = show_status(stack.dynamodb, "state", minutes(2.5), False, cloudwatch, "Queuewatch")

    assert calls == ["GetMetricData"]
    assert "linux.2xlarge: firing since 2026-11-21 18:02 UTC; queue size 14, queue time 1h54m" in text
    assert (
        "(Queuewatch metrics at 2026-11-21 18:02 UTC)" in text and "no figures" not in text
    )  # none asked for rocm.gpu's health
    later = show_status(stack.dynamodb, "state", minutes(9), False, cloudwatch, "Queuewatch")
    assert "(no figures for 1 runner type(s): no QueueSize or QueueTime datapoint in the last 5m)" in later


def test_a_fleet_wide_alert_lists_fifty_runner_types_then_counts(stack: StackInMoto) -> None:
    names = [f"rt{n:03}" for n in range(120)]
    config = parse_config(
        "version: 1\nrunner_types:\n"
        + "".join(f"  - {{name: {n}, queue: {{name: q-{n}}}}}\n" for n in names)
        + "rules: [{name: jobs-queueing, thresholds: {queue_size: 0}, team: ci}]\n",
        source="fleet.yaml",
    )
    stack.evaluate(snapshot(T0, *(runner_type(n, 3, 60) for n in names)), config)
    text = show_status(stack.dynamodb, "state", minutes(0.5), as_json=False)
    document = json.loads(show_status(stack.dynamodb, "state", minutes(0.5), as_json=True))
    assert "    rt049: firing" in text and "rt050" not in text
    assert "    and 70 more runner types (--json lists them all)" in text
    assert [m["runner_type"] for m in document["alerts"][0]["members"]] == names


def test_an_empty_table_says_so(stack: StackInMoto) -> None:
    text = show_status(stack.dynamodb, "state", T0, as_json=False)
    assert "alerts last changed: never" in text
    assert "alerts pending or firing: none" in text and "active silences: none" in text
    assert "degraded signals (the queuewatch-health rule's instances): none" in text


def test_the_command_prints_the_document(stack: StackInMoto, capsys: pytest.CaptureFixture[str]) -> None:
    for minute in (0, 1, 2):
        stack.evaluate(tick(minute), CONFIG)
    assert main(["status", "--table", "state", "--region", "us-east-1", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [(a["rule"], a["status"]) for a in document["alerts"]] == [
        ("jobs-queueing", "firing"),
        ("queuewatch-health", "firing"),
    ]
    assert document["figures_note"] is None  # read, and none emitted in the last 5 minutes of the wall clock


def test_status_asks_for_exactly_the_dimensions_the_evaluator_emits(capsys: pytest.CaptureFixture[str]) -> None:
    """CloudWatch answers a query only for the metric's whole dimension set: status, the seed and the emitter agree."""
    metrics = Metrics(namespace="Queuewatch", service="queuewatch")
    snap = snapshot(minutes(0), runner_type("linux.2xlarge", 14, 600))
    record_tick(metrics, snap, EvaluationResult(outcome="applied", evaluated_at=T0, observation="s"), stack="prod")
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"QueueTime"' in line]
    [dimensions] = emitted[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"]
    assert set(dimensions) == {name for name, _ in runner_type_dimensions("prod", "linux.2xlarge")}
    assert {name: emitted[0][name] for name in dimensions} == dict(runner_type_dimensions("prod", "linux.2xlarge"))


def test_a_new_silence_shows_at_once_with_its_id_and_its_own_start(stack: StackInMoto) -> None:
    for minute in (0, 1, 2):
        stack.evaluate(tick(minute), CONFIG)  # jobs-queueing fires from 18:02
    silence = SilenceRecord("s-ami", ("linux.*",), None, None, minutes(2.5), minutes(60), "alice", "AMI rollout")
    put_silence(stack.dynamodb, "state", silence)

    # No tick since the silence: the table still says firing; status applies the silence as it reads.
    text = show_status(stack.dynamodb, "state", minutes(2.75), as_json=False)

    assert "jobs-queueing / all: silenced since 2026-11-21 18:02 UTC (15s ago) by s-ami;" in text
    assert "    linux.2xlarge: firing since 2026-11-21 18:02 UTC, silenced by s-ami since 2026-11-21 18:02 UTC" in text
    document = json.loads(show_status(stack.dynamodb, "state", minutes(2.75), as_json=True))
    jobs = next(a for a in document["alerts"] if a["rule"] == "jobs-queueing")
    assert (jobs["status"], jobs["silenced_by"], jobs["silenced_since"]) == (
        "silenced",
        ["s-ami"],
        "2026-11-21T18:02:30+00:00",
    )
    health = next(a for a in document["alerts"] if a["rule"] == "queuewatch-health")
    assert health["status"] == "firing"  # a runner type silence never hides that the watcher is blind


def test_an_ended_silence_shows_firing_before_the_evaluator_notices(stack: StackInMoto) -> None:
    silence = SilenceRecord("s-short", ("linux.*",), None, None, T0, minutes(3), "alice", "short")
    put_silence(stack.dynamodb, "state", silence)
    for minute in (0, 1, 2):
        stack.evaluate(tick(minute), CONFIG)  # silenced by the evaluator from 18:02
    text = show_status(stack.dynamodb, "state", minutes(3.5), as_json=False)
    # Held back from its start, it was never paged; with its silence over, it pages on the next tick.
    assert "jobs-queueing / (no page yet): firing since 2026-11-21 18:02 UTC" in text and "s-short" not in text


def test_a_pending_alert_says_when_it_fires_if_nothing_changes(stack: StackInMoto) -> None:
    for minute in (0, 1, 2):
        stack.evaluate(tick(minute), CONFIG)
    stack.evaluate(tick(3, big_queueing=True), CONFIG)  # linux.4xlarge pending from 18:03; the rule waits 2m

    text = show_status(stack.dynamodb, "state", minutes(3.5), as_json=False, config=CONFIG)

    assert (
        "    linux.4xlarge: pending since 2026-11-21 18:03 UTC, fires at 2026-11-21 18:05 UTC (in 1m) "
        "if nothing changes" in text
    )
    assert "forecasts:" not in text  # the config has no forecast rule: nothing to say of forecasts
    unknown = show_status(stack.dynamodb, "state", minutes(3.5), as_json=False)  # no config: no pending period
    assert "    linux.4xlarge: pending since 2026-11-21 18:03 UTC\n" in unknown


def test_status_asks_the_holds_a_window_opened_since_the_last_tick_holds_the_alert_back(stack: StackInMoto) -> None:
    for minute in (0, 1, 2, 3):
        stack.evaluate(tick(minute), CONFIG)  # jobs-queueing pages from 18:02
    # A window that opened after the last tick holds the alert back now, as the evaluator's next tick will.
    windowed = parse_config(WINDOWED, source="test.yaml")  # the same config, a window open over 18:03-18:30
    text = show_status(stack.dynamodb, "state", minutes(3.5), as_json=False, config=windowed)
    assert "jobs-queueing / all: silenced by window:patching;" in text
    assert "    linux.2xlarge: firing since 2026-11-21 18:02 UTC, silenced by window:patching" in text
