"""Verdicts: thresholds are strict, all/any combine three-valued, missing data is named."""

from __future__ import annotations

import pytest
from support import runner_type

from queuewatch.config import Rule, parse_config
from queuewatch.rules import judge


def rule(breach_when: str = "all", thresholds: str = "{queue_time: 1m, queue_size: 0}") -> Rule:
    config = parse_config(
        "version: 1\n"
        "runner_types: [{name: a, queue: {name: q}}]\n"
        f"rules: [{{name: r, thresholds: {thresholds}, breach_when: {breach_when}}}]\n"
    )
    return config.resolved_rules[0]


def test_the_seed_incident_breaches_both_thresholds() -> None:
    verdict = judge(rule(), runner_type("a", 14, 6840))
    assert verdict.breached is True
    assert verdict.breached_signals == ("queue_size", "queue_time")
    assert (verdict.queue_size, verdict.queue_time) == (14, 6840)


def test_a_value_equal_to_its_threshold_is_not_a_breach() -> None:
    assert judge(rule(), runner_type("a", 1, 60)).breached is False
    assert judge(rule(), runner_type("a", 1, 61)).breached is True


@pytest.mark.parametrize(
    ("breach_when", "size", "age", "expected"),
    [
        ("all", 0, None, False),  # a known clear signal decides "all"
        ("all", 3, None, None),  # the other one could still be clear
        ("all", None, None, None),
        ("any", 3, None, True),  # a known breach decides "any"
        ("any", 0, None, None),
        ("any", 0, 30, False),
    ],
)
def test_missing_data_is_unknown_unless_a_known_signal_decides(
    breach_when: str, size: float | None, age: float | None, expected: bool | None
) -> None:
    assert judge(rule(breach_when), runner_type("a", size, age)).breached is expected


def test_missing_signals_carry_their_reason() -> None:
    verdict = judge(rule(), runner_type("a", 3, None, missing="GetMetricData failed: AccessDenied"))
    assert verdict.missing == {"queue_time": "GetMetricData failed: AccessDenied"}


def test_a_rule_with_one_threshold_ignores_the_other_signal() -> None:
    verdict = judge(rule(thresholds="{queue_time: 30m}"), runner_type("a", None, 3600))
    assert verdict.breached is True and verdict.missing == {}
