"""The config keys the triage adds: clear errors, did-you-mean, and the shipped examples pass check-config."""

from __future__ import annotations

from pathlib import Path

import pytest

from queuewatch.config.load import ConfigError, parse_config
from queuewatch.model.signals import SignalName
from queuewatch_cli.devkit.handlers import REPO_ROOT
from queuewatch_cli.main import main

RULES = """
runner_types: [{name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}]
rules: [{name: jobs-queueing, team: ci-infra, thresholds: {queue_size: 0}}]
"""


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config("version: 1\n" + text + RULES, source="qw.yaml")
    return [f"{p.line}: {p.key_path}: {p.message}" for p in caught.value.problems]


def test_ec2_exceptions_needs_its_names_and_placeholder() -> None:
    [missing_names] = problems(
        "defaults:\n  signals:\n    ec2_exceptions: {namespace: N, metric: M, dimensions: {Exception: '{exception}'}}\n"
    )
    assert missing_names.startswith("3: defaults.signals: signal 'ec2_exceptions': found no 'exceptions' list")
    [no_placeholder] = problems(
        "defaults:\n  signals:\n    ec2_exceptions: {namespace: N, metric: M, exceptions: [A]}\n"
    )
    assert "found no '{exception}' placeholder" in no_placeholder
    [elsewhere] = problems("defaults:\n  signals:\n    max_hit: {namespace: N, metric: M, exceptions: [A]}\n")
    assert "signal 'max_hit': found 'exceptions' or '{exception}', which only ec2_exceptions takes" in elsewhere


def test_misspelt_new_keys_get_a_suggestion() -> None:
    assert any(
        "defaults.signals.ec2_exceptions.exception: unknown key 'exception'; did you mean 'exceptions'?" in p
        for p in problems(
            "defaults:\n  signals:\n    ec2_exceptions:\n"
            "      {namespace: N, metric: M, dimensions: {E: '{exception}'}, exception: [A]}\n"
        )
    )
    [signal] = problems("defaults:\n  signals:\n    ec2_exception: {namespace: N, metric: M}\n")
    assert "unknown signal 'ec2_exception'; did you mean 'ec2_exceptions'?" in signal
    [triage] = problems("defaults:\n  triage: {windw: 15m}\n")
    assert triage == "3: defaults.triage.windw: unknown key 'windw'; did you mean 'window'?"


@pytest.mark.parametrize(
    ("triage", "expected"),
    [
        ("{window: 2m}", "window: found 120s, expected whole minutes, at least 5m"),
        ("{window: 15m, baseline: 20m}", "baseline: found 1200s, expected whole minutes from twice the window to 24h"),
        ("{baseline: 2d}", "baseline: found 172800s"),
    ],
)
def test_the_triage_spans_are_checked(triage: str, expected: str) -> None:
    [problem] = problems(f"defaults:\n  triage: {triage}\n")
    assert expected in problem


def test_missing_takes_no_data_or_zero() -> None:
    assert any(
        "defaults.signals.max_hit.missing: found 'zeros'; did you mean 'zero'? expected one of 'no_data', 'zero'" in p
        for p in problems("defaults:\n  signals:\n    max_hit: {namespace: N, metric: M, missing: zeros}\n")
    )


EXAMPLES = sorted((REPO_ROOT / "config" / "examples").glob("*.yaml"))


def test_there_are_examples_for_upstream_and_the_pytorch_fork() -> None:
    assert {p.name for p in EXAMPLES} >= {"upstream-multi-runner.yaml", "pytorch-test-infra.yaml"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_passes_check_config(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-config", str(path)]) == 0
    assert f"{path}: OK" in capsys.readouterr().out


def test_each_example_configures_what_its_autoscaler_publishes() -> None:
    from queuewatch.config.load import load_config

    upstream = load_config(REPO_ROOT / "config" / "examples" / "upstream-multi-runner.yaml")
    signals = upstream.signals_for({})
    assert signals == {
        SignalName.QUEUE_SIZE: "sqs",
        SignalName.QUEUE_TIME: "sqs",
        SignalName.JOB_ARRIVALS: "sqs",
        SignalName.JOBS_DEQUEUED: "sqs",
    }
    fork = load_config(REPO_ROOT / "config" / "examples" / "pytorch-test-infra.yaml")
    fork_signals = fork.signals_for({})
    assert SignalName.JOB_DURATION not in fork_signals  # the fork publishes no job duration
    assert {s for s, source in fork_signals.items() if source == "sqs"} == set()  # one shared queue: no AWS/SQS
    assert {rt.queue.queue_name for rt in fork.runner_types if rt.queue} == {"gh-ci-queued-builds"}
