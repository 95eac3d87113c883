"""check-config on a rule's `forecast:`: what it refuses and warns, at the line and key of the mistake, with a fix
that check-config then accepts; and what `--explain` says the forecast means."""

from __future__ import annotations

from pathlib import Path

import pytest

from queuewatch.config.load import ConfigError, parse_checked
from queuewatch_cli.main import main

QUEUE_ONLY = """\
version: 1
defaults:
  rule: {team: ci}
runner_types:
  - {name: linux-x64, queue: {name: ci-linux-x64-queued-builds}}
  - {name: linux-gpu-a10, queue: {name: ci-linux-gpu-a10-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 30m}, forecast: 10m}
"""
MAX_RUNNERS = '{namespace: GitHub Runners, metric: MaxRunners, dimensions: {RunnerType: "{runner_type}"}}'


def test_a_forecast_without_an_autoscaler_is_warned_and_the_line_it_suggests_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [warning] = parse_checked(QUEUE_ONLY, "fleet.yaml").warnings
    assert (warning.key_path, warning.line) == ("rules[0].forecast", 8)
    assert "needs tracked jobs, but this config names no autoscaler" in warning.message
    assert "the maximum of runner types linux-x64, linux-gpu-a10" in warning.message
    assert warning.message.endswith("expected autoscaler: {prefix: ci} at the top of the config")
    fixed = QUEUE_ONLY.replace("runner_types:", "autoscaler: {prefix: ci}\nrunner_types:")
    assert parse_checked(fixed, "fleet.yaml").warnings == []
    written = tmp_path / "fleet.yaml"
    written.write_text(fixed, encoding="utf-8")
    assert main(["check-config", str(written)]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_max_runners_metric_is_a_source_of_the_maximum_but_not_of_the_jobs() -> None:
    measured = QUEUE_ONLY.replace("rule: {team: ci}", f"rule: {{team: ci}}\n  signals: {{max_runners: {MAX_RUNNERS}}}")
    [warning] = parse_checked(measured, "fleet.yaml").warnings
    assert "needs tracked jobs" in warning.message and "maximum" not in warning.message


def test_a_forecast_from_defaults_is_warned_where_defaults_write_it() -> None:
    text = QUEUE_ONLY.replace(", forecast: 10m}", "}").replace("rule: {team: ci}", "rule: {team: ci, forecast: 10m}")
    [warning] = parse_checked(text, "fleet.yaml").warnings
    assert (warning.key_path, warning.line) == ("defaults.rule.forecast", 3)


def test_a_rule_without_a_forecast_needs_no_job_source() -> None:
    assert parse_checked(QUEUE_ONLY.replace(", forecast: 10m}", "}"), "fleet.yaml").warnings == []


@pytest.mark.parametrize("path", ["job_retry", "dead_letter"])
def test_a_forecast_on_the_autoscalers_other_queues_is_refused_naming_where_it_belongs(path: str) -> None:
    text = QUEUE_ONLY.replace("rule: {team: ci}", f"rule: {{team: ci}}\n  {path}: {{forecast: 10m}}")
    with pytest.raises(ConfigError) as raised:
        parse_checked(text, "fleet.yaml")
    [problem] = raised.value.problems
    assert (problem.key_path, problem.line) == (f"defaults.{path}.forecast", 4)
    assert problem.message.startswith(f"defaults.{path} has no forecast: the forecast predicts the build queue's")
    assert "expected forecast: on a rule with a queue_time" in problem.message


def test_a_key_known_elsewhere_is_not_suggested_as_itself() -> None:
    text = QUEUE_ONLY.replace("{name: linux-x64, queue:", "{name: linux-x64, forecast: 10m, queue:")
    with pytest.raises(ConfigError) as raised:
        parse_checked(text, "fleet.yaml")
    [problem] = raised.value.problems
    assert problem.message == "unknown key 'forecast'; it is a key elsewhere in the config, not here"


def test_explain_says_what_each_rules_forecast_pages_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = QUEUE_ONLY.replace("runner_types:", "autoscaler: {prefix: ci}\nrunner_types:") + (
        "  - {name: early, thresholds: {queue_time: 5m}, forecast: 20m, priority: P3}\n"
        "  - {name: plain, thresholds: {queue_time: 1h}, priority: P1}\n"
    )
    written = tmp_path / "fleet.yaml"
    written.write_text(text, encoding="utf-8")
    assert main(["check-config", "--explain", str(written)]) == 0
    out = capsys.readouterr().out
    assert (
        "  forecast         10m: pages when a job waiting now or queued in the next 10m is predicted to wait past 30m\n"
    ) in out
    assert (
        "forecast         20m: pages when a job waiting now or queued in the next 20m is predicted to wait past " in out
    )
    assert "; longer than its queue_time, so it may page up to 25m before a wait passes 5m" in out
    assert "  forecast         (none: pages on what has happened only)\n" in out
