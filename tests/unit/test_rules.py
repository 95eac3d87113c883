"""Verdicts: thresholds are strict, all/any combine three-valued, missing data is named."""

from __future__ import annotations

from typing import Literal

import pytest

from queuewatch.config.load import parse_config
from queuewatch.model.rules import Priority, Rule, judge
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

BreachWhen = Literal["all", "any"]


def rule(breach_when: BreachWhen = "all", queue_size: int | None = 0, queue_time: int | None = 60) -> Rule:
    return Rule(
        name="jobs-queueing",
        match=("*",),
        exclude=(),
        queue_time_threshold=queue_time,
        queue_size_threshold=queue_size,
        breach_when=breach_when,
        pending_for=0,
        keep_firing_for=300,
        repeat_interval=14400,
        priority=Priority.P2,
        team="ci-infra",
        runbook_url=None,
        dashboard_url=None,
        group_by="all",
    )


def runner(
    size: float | None = 0, age: float | None = 0, *, missing: str = "no datapoints in the last 10m"
) -> RunnerTypeSnapshot:
    def reading(value: float | None) -> Reading:
        return Reading.of(value) if value is not None else Reading.missing(missing)

    return RunnerTypeSnapshot(
        name="linux.2xlarge",
        region="us-east-1",
        queue_name="gh-ci-linux-2xlarge-queued-builds",
        signals={SignalName.QUEUE_SIZE: reading(size), SignalName.QUEUE_TIME: reading(age)},
    )


def test_the_seed_incident_breaches_both_thresholds() -> None:
    verdict = judge(rule(), runner(14, 6840))
    assert verdict.breached is True
    assert set(verdict.breached_signals) == {"queue_size", "queue_time"}
    assert (verdict.queue_size, verdict.queue_time) == (14, 6840)
    assert verdict.missing == {}


def test_a_rule_from_the_config_file_judges_the_same() -> None:
    config = parse_config(
        "version: 1\n"
        "runner_types: [{name: linux.2xlarge, queue: {name: q}}]\n"
        "rules: [{name: r, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, breach_when: any}]\n",
        source="qw.yaml",
    )
    [from_file] = config.resolved_rules
    assert judge(from_file, runner(0, 61)).breached is True
    assert judge(from_file, runner(0, 60)).breached is False


@pytest.mark.parametrize(
    ("size", "age", "breached", "signals"),
    [
        (0, 60, False, ()),  # both equal to their thresholds
        (1, 60, False, ("queue_size",)),
        (0, 61, False, ("queue_time",)),
        (1, 61, True, ("queue_size", "queue_time")),
        (0.5, 60.5, True, ("queue_size", "queue_time")),
    ],
)
def test_thresholds_are_strictly_greater_than(
    size: float, age: float, breached: bool, signals: tuple[str, ...]
) -> None:
    verdict = judge(rule("all"), runner(size, age))
    assert verdict.breached is breached
    assert set(verdict.breached_signals) == set(signals)


@pytest.mark.parametrize(
    ("size", "age", "breached", "signals"),
    [(0, 60, False, ()), (1, 60, True, ("queue_size",)), (0, 61, True, ("queue_time",))],
)
def test_any_breaches_on_one_signal_and_says_which(
    size: float, age: float, breached: bool, signals: tuple[str, ...]
) -> None:
    verdict = judge(rule("any"), runner(size, age))
    assert verdict.breached is breached
    assert verdict.breached_signals == signals


@pytest.mark.parametrize(
    ("breach_when", "size", "age", "expected"),
    [
        ("all", 0, None, False),  # a known clear signal decides "all"
        ("all", None, 0, False),
        ("all", 3, None, None),  # the missing one could still be clear
        ("all", None, None, None),
        ("any", 3, None, True),  # a known breach decides "any"
        ("any", None, 600, True),
        ("any", 0, None, None),  # the missing one could still breach
        ("any", None, None, None),
    ],
)
def test_missing_data_is_unknown_unless_a_known_signal_decides(
    breach_when: BreachWhen, size: float | None, age: float | None, expected: bool | None
) -> None:
    assert judge(rule(breach_when), runner(size, age)).breached is expected


def test_missing_signals_carry_their_reason() -> None:
    verdict = judge(rule(), runner(3, None, missing="GetMetricData failed: AccessDenied"))
    assert verdict.missing == {"queue_time": "GetMetricData failed: AccessDenied"}
    assert verdict.queue_time is None and verdict.queue_size == 3


def test_a_signal_absent_from_the_snapshot_is_missing_as_not_collected() -> None:
    bare = RunnerTypeSnapshot(
        name="linux.2xlarge",
        region="us-east-1",
        queue_name="q",
        signals={SignalName.QUEUE_SIZE: Reading.of(5)},
    )
    verdict = judge(rule("all"), bare)
    assert verdict.breached is None
    assert set(verdict.missing) == {"queue_time"}
    assert verdict.missing["queue_time"]


@pytest.mark.parametrize(
    ("queue_size", "queue_time", "size", "age", "expected"),
    [
        (None, 1800, None, 3600, True),  # a queue-time-only rule ignores missing queue size
        (None, 1800, None, 60, False),
        (0, None, 2, None, True),  # a queue-size-only rule ignores missing queue time
    ],
)
def test_a_rule_with_one_threshold_ignores_the_other_signal(
    queue_size: int | None, queue_time: int | None, size: float | None, age: float | None, expected: bool
) -> None:
    verdict = judge(rule("all", queue_size=queue_size, queue_time=queue_time), runner(size, age))
    assert verdict.breached is expected
    assert verdict.missing == {}
