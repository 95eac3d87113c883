"""Properties of the evaluator against moto DynamoDB and SNS, for any sequence of snapshots and clock times.

Snapshots arrive in order, repeated or late (a step back in time), with each runner
type queueing, quiet, or unreadable. Example counts follow the hypothesis profile
loaded in conftest.py (HYPOTHESIS_PROFILE=thorough for many more).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from itertools import count
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from moto import mock_aws
from support import Inbox, StackInMoto, arriving_now, minutes, runner_type, session, snapshot

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.state_table.alerts import load_state, put_silence
from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.load import parse_config
from queuewatch.evaluate import EvaluationResult
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.snapshot import Snapshot

CONFIG = parse_config("""
version: 1
defaults:
  rule: {keep_firing_for: 3m, repeat_interval: 30m}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}, team: rocm}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, for: 1m}
monitor: {for: 2m}
""")
KEEP_FIRING_MINUTES = 3
RUNNER_TYPES = ("linux.2xlarge", "rocm.gpu")
READINGS: dict[str, tuple[float | None, float | None]] = {
    "queueing": (5, 600),
    "quiet": (0, 0),
    "unreadable": (None, None),
    "size only": (4, None),
}
# (minutes since the last snapshot, reading per runner type): 0 repeats a tick, a negative step is late
TICKS = st.lists(
    st.tuples(st.sampled_from([1, 1, 1, 2, 3, 7, 0, -2]), st.tuples(*[st.sampled_from(list(READINGS))] * 2)),
    min_size=1,
    max_size=10,
)
_names = count()


@pytest.fixture(scope="module", autouse=True)
def moto() -> Iterator[None]:
    """One moto for the module; each example gets its own table and topic."""
    with pytest.MonkeyPatch.context() as env, mock_aws():
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            env.setenv(key, "testing")
        yield


class World:
    def __init__(self) -> None:
        name = f"prop-{next(_names)}"
        moto = StackInMoto.create(name, name="prop", clients=AwsClients(session()))
        self.dynamodb, self.sns, self.stack = moto.dynamodb, moto.sns, moto.stack
        self.inbox = Inbox(self.sns)
        self.memory = EvaluatorMemory()

    def tick(self, observation: Snapshot) -> EvaluationResult:
        return evaluate(
            observation,
            CONFIG,
            self.dynamodb,
            self.sns,
            self.stack,
            memory=self.memory,
            clock=arriving_now(observation),
        )

    def instances(self) -> dict[str, tuple[Any, ...]]:
        state = load_state(self.dynamodb, self.stack.table)
        return {str(k): (s.status, s.since, s.clear_since) for k, s in state.instances.items()}


def observations(ticks: list[tuple[int, tuple[str, str]]]) -> Iterator[tuple[int, Snapshot]]:
    minute = 10
    for step, readings in ticks:
        minute += step
        yield (
            minute,
            snapshot(
                minutes(minute),
                *[runner_type(name, *READINGS[reading]) for name, reading in zip(RUNNER_TYPES, readings, strict=True)],
            ),
        )


def check_episodes(pages: list[dict[str, Any]]) -> None:
    """Per alert: new, then updates or repeats, then one resolve; each page sent once."""
    sent = [(p["notification_id"], p["started_at"]) for p in pages]
    assert len(sent) == len(set(sent)), "a page was sent twice"
    by_alert: dict[str, list[str]] = {}
    for page in pages:
        by_alert.setdefault(page["dedup_key"], []).append(page["page"])
    for kinds in by_alert.values():
        for before, after in zip(["resolved", *kinds], kinds, strict=False):
            if before == "resolved":
                assert after == "new", kinds  # an episode opens with "new", once
            else:
                assert after != "new", kinds  # no second "new" within an episode


@given(TICKS)
def test_no_transition_pages_twice_and_every_alert_resolves_once_clear_past_keep_firing_for(
    ticks: list[tuple[int, tuple[str, str]]],
) -> None:
    stack = World()
    last = 0
    for minute, observation in observations(ticks):
        stack.tick(observation)
        last = max(last, minute)
    # Then the fleet is quiet and readable for longer than keep_firing_for.
    for minute in range(last + 1, last + KEEP_FIRING_MINUTES + 3):
        stack.tick(snapshot(minutes(minute), *[runner_type(name) for name in RUNNER_TYPES]))
    pages = stack.inbox.drain()
    check_episodes(pages)
    for kinds in [[p["page"] for p in pages if p["dedup_key"] == key] for key in {p["dedup_key"] for p in pages}]:
        assert kinds[-1] == "resolved", kinds  # every alert that paged has resolved
    state = load_state(stack.dynamodb, stack.stack.table)
    assert (state.instances, state.groups) == ({}, {})


@settings(max_examples=max(8, settings().max_examples // 2))  # two stacks per example
@given(TICKS, st.integers(min_value=10, max_value=30), st.integers(min_value=1, max_value=20))
# Found by a CI run: the silence's start changes the silenced stack's groups at minute 29 (a write),
# while the plain stack's minute 29 changes nothing; a late minute 27 must be stale for both.
@example(
    ticks=[(1, ("queueing", "queueing"))] * 2
    + [(7, ("queueing", "queueing"))]
    + [(1, ("queueing", "queueing"))] * 3
    + [(3, ("queueing", "queueing"))] * 2
    + [(1, ("queueing", "queueing")), (-2, ("queueing", "size only"))],
    silence_start=29,
    silence_minutes=1,
)
def test_a_silence_never_loses_state_nor_a_resolve(
    ticks: list[tuple[int, tuple[str, str]]], silence_start: int, silence_minutes: int
) -> None:
    plain, silenced = World(), World()
    start, end = minutes(silence_start), minutes(silence_start + silence_minutes)
    put_silence(
        silenced.dynamodb,
        silenced.stack.table,
        SilenceRecord("s1", ("linux.*",), "jobs-queueing", None, start, end, "prop", "property test"),
    )
    applied_until = minutes(-1)
    sent: list[dict[str, Any]] = []
    last = 0
    for minute, observation in observations(ticks):
        last = max(last, minute)
        plain.tick(observation)
        result = silenced.tick(observation)
        assert silenced.instances() == plain.instances()  # a silence changes who is paged, never the state
        now = observation.collected_at
        fresh = silenced.inbox.drain()
        sent += fresh
        during = [p for p in fresh if p["status"] == "firing" and p["rule"] == "jobs-queueing"]
        if start <= now < end:
            assert all(r["runner_type"] != "linux.2xlarge" for p in during for r in p["runner_types"])
        if result.outcome != "stale":
            applied_until = max(applied_until, now)
        if now >= end and now == applied_until and InstanceKey("jobs-queueing", "linux.2xlarge") in result.firing:
            # The silence is over and it still fires: it has been paged.
            [group] = [
                g
                for g in load_state(silenced.dynamodb, silenced.stack.table).groups.values()
                if g.rule == "jobs-queueing"
            ]
            assert group.status is not None and group.status.value == "firing" and "linux.2xlarge" in group.members
    assert timedelta(0) <= end - start
    # Then the fleet is quiet, under a silence that matches everything: each alert that paged still resolves.
    put_silence(
        silenced.dynamodb,
        silenced.stack.table,
        SilenceRecord("s2", (), None, None, minutes(last), minutes(last + 60), "prop", "covers every resolve"),
    )
    for minute in range(last + 1, last + KEEP_FIRING_MINUTES + 3):
        silenced.tick(snapshot(minutes(minute), *[runner_type(name) for name in RUNNER_TYPES]))
    sent += silenced.inbox.drain()
    for key in {p["dedup_key"] for p in sent}:
        assert [p["page"] for p in sent if p["dedup_key"] == key][-1] == "resolved", key
    state = load_state(silenced.dynamodb, silenced.stack.table)
    assert (state.instances, state.groups) == ({}, {})
