"""Observations the evaluator refuses before anything is read or written, and the heartbeat of ticks that judged."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
from aws_lambda_powertools.metrics import Metrics
from support import T0, runner_type, snapshot

from queuewatch.alerting.alert_state import GroupRecord, GroupStatus, Outbox, PageKind, StoredState
from queuewatch.evaluate import EvaluationResult
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.telemetry import record_tick
from queuewatch.model.snapshot import MAX_AHEAD, MAX_BEHIND, ImplausibleObservation, check_plausible
from queuewatch.runtime.wire import decode_snapshot


def plain(**changes: Any) -> dict[str, Any]:
    base = snapshot(T0, runner_type("linux.2xlarge", 3, 120)).model_dump(mode="json", exclude_none=True)
    base.update(changes)
    return base


def with_reading(signal: str, value: Any) -> dict[str, Any]:
    payload = plain()
    payload["runner_types"][0]["signals"][signal] = {"value": value}
    return payload


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (plain(version=99), "version"),
        (with_reading("queue_size", -1), "queue_size is -1.0, expected 0 or more"),
        (with_reading("queue_time", -5), "queue_time is -5.0, expected 0 or more"),
        (with_reading("queue_size", float("nan")), "expected a finite number"),
        (with_reading("busy_runners", float("inf")), "expected a finite number"),
    ],
)
def test_a_snapshot_with_impossible_figures_is_refused(payload: dict[str, Any], expected: str) -> None:
    # Through JSON, as the destination record brings it: NaN and Infinity are tokens Python's json reads.
    with pytest.raises(ValueError, match=expected):
        decode_snapshot(json.loads(json.dumps(payload)))


@pytest.mark.parametrize("name", ["x" * 5000, "", "linux 2xlarge", "linux#2xlarge", "-leading-dash"])
def test_a_runner_type_name_no_key_takes_is_refused_before_anything_is_written(name: str) -> None:
    payload = plain()
    payload["runner_types"][0]["name"] = name
    with pytest.raises(ValueError, match="expected a runner type name"):
        decode_snapshot(payload)


def test_a_long_runner_type_is_named_shortly_in_the_error() -> None:
    payload = plain()
    payload["runner_types"][0]["name"] = "x" * 5000
    with pytest.raises(ValueError, match=r"\(5000 characters\)") as raised:
        decode_snapshot(payload)
    assert len(str(raised.value)) < 1000


def test_times_are_normalised_to_utc_on_decode() -> None:
    decoded = decode_snapshot(plain(collected_at="2026-11-21T19:00:00+01:00"))
    assert decoded.collected_at == T0 and decoded.collected_at.utcoffset() == timedelta(0)


def test_observations_far_from_the_wall_clock_are_refused_and_near_ones_taken() -> None:
    tick = snapshot(T0)
    check_plausible(tick, T0 - MAX_AHEAD)  # the tick a little ahead of the evaluator's clock: skew
    check_plausible(tick, T0 + MAX_BEHIND)  # a tick that took long to arrive
    with pytest.raises(ImplausibleObservation, match="ahead of the evaluator's clock"):
        check_plausible(tick, T0 - MAX_AHEAD - timedelta(seconds=1))
    with pytest.raises(ImplausibleObservation, match="behind the evaluator's clock"):
        check_plausible(tick, T0 + MAX_BEHIND + timedelta(seconds=1))


@pytest.mark.parametrize(("outcome", "beats"), [("applied", 1), ("unchanged", 1), ("stale", 0), ("conflict", 0)])
def test_only_a_tick_that_judged_the_present_is_a_heartbeat(outcome: Any, beats: int) -> None:
    metrics = Metrics(namespace="Queuewatch")
    result = EvaluationResult(outcome=outcome, evaluated_at=T0, observation="snap")
    record_tick(metrics, None, result, stack="prod")
    emitted = metrics.serialize_metric_set()
    metrics.clear_metrics()
    assert emitted.get("Heartbeat", []) == ([1.0] if beats else [])


def outbox(n: int) -> Outbox:
    return Outbox(f"page-{n}", "subject", f"message {n}", {}, "json", T0, PageKind.NEW)


def test_memory_holds_every_page_one_tick_sends_and_forgets_what_no_outbox_holds() -> None:
    memory = EvaluatorMemory()
    pages = [outbox(n) for n in range(5000)]  # group_by: runner_type, 5,000 runner types firing at once
    for page in pages:
        memory.remember(page)
    waiting = StoredState(
        groups={
            f"r#{n}": GroupRecord("r", str(n), GroupStatus.FIRING, T0, (str(n),), T0, 1, 1, page)
            for n, page in enumerate(pages[:4000])
        }
    )
    memory.forget_sent_except(waiting)  # the next tick: 4,000 clearing writes were lost
    assert all(memory.holds(page) for page in pages[:4000])  # none of them goes out twice
    assert not any(memory.holds(page) for page in pages[4000:]) and len(memory) == 4000
