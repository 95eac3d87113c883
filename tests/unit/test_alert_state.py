"""The state machine with an injected clock: pending, firing, flapping, keep firing, repeat, resolve, silences."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from queuewatch.alerting.alert_state import (
    GroupStatus,
    InstanceKey,
    InstanceState,
    PageKind,
    Status,
    decide_group,
    step,
)

T0 = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def run(
    ticks: Sequence[tuple[float, bool | None]], *, pending_for: int = 0, keep_firing_for: int = 0
) -> list[InstanceState | None]:
    """Step through (seconds after T0, verdict) ticks; the state after each."""
    state: InstanceState | None = None
    states = []
    for seconds, breached in ticks:
        state = step(
            state,
            breached,
            at(seconds),
            rule="jobs-queueing",
            runner_type="linux.2xlarge",
            pending_for=pending_for,
            keep_firing_for=keep_firing_for,
        )
        states.append(state)
    return states


def every_minute(*verdicts: bool | None) -> list[tuple[float, bool | None]]:
    return [(60 * i, v) for i, v in enumerate(verdicts)]


def statuses(states: list[InstanceState | None]) -> list[str]:
    return [s.status.value if s else "ok" for s in states]


def test_clear_from_ok_stays_ok() -> None:
    assert run(every_minute(False, False)) == [None, None]


def test_pending_for_zero_fires_at_once() -> None:
    states = run(every_minute(False, True))
    assert statuses(states) == ["ok", "firing"]
    assert states[1] is not None and states[1].since == at(60)
    assert states[1].key == InstanceKey("jobs-queueing", "linux.2xlarge")


def test_ok_pending_firing_honours_pending_for() -> None:
    states = run([(0, True), (120, True), (179, True), (180, True), (240, True)], pending_for=180)
    assert statuses(states) == ["pending", "pending", "pending", "firing", "firing"]
    assert states[0] is not None and states[0].since == at(0)
    assert states[3] is not None and states[3].since == at(180), "since is when firing started"
    assert states[4] is not None and states[4].since == at(180)


def test_pending_then_recovering_goes_back_to_ok_without_firing() -> None:
    states = run(every_minute(True, True, False, True), pending_for=180)
    assert statuses(states) == ["pending", "pending", "ok", "pending"]
    assert states[3] is not None and states[3].since == at(180), "a new pending period starts afresh"


def test_keep_firing_for_resolves_once_clear_that_long_from_the_first_clear() -> None:
    ticks = [(0, True), (60, False), (120, None), (200, False), (359, False), (360, False)]
    states = run(ticks, keep_firing_for=300)
    assert statuses(states) == ["firing", "firing", "firing", "firing", "firing", "ok"]
    assert all(s.clear_since == at(60) for s in states[1:5] if s)


def test_a_breach_while_clearing_restarts_the_keep_firing_clock() -> None:
    ticks = [(0, True), (60, False), (120, True), (180, False), (400, False), (480, False)]
    states = run(ticks, keep_firing_for=300)
    assert statuses(states) == ["firing"] * 5 + ["ok"]
    assert states[2] is not None and states[2].clear_since is None
    assert states[3] is not None and states[3].clear_since == at(180)


def test_flapping_within_keep_firing_for_stays_one_alert_with_the_original_since() -> None:
    states = run(every_minute(True, False, True, False, True, False), keep_firing_for=300)
    assert statuses(states) == ["firing"] * 6
    assert {s.since for s in states if s} == {at(0)}


def test_keep_firing_for_zero_resolves_on_the_first_clear() -> None:
    assert statuses(run(every_minute(True, False))) == ["firing", "ok"]


@pytest.mark.parametrize(
    ("ticks", "pending_for", "keep_firing_for"),
    [
        ([(0, True)], 600, 0),  # pending
        ([(0, True)], 0, 0),  # firing
        ([(0, True), (60, False)], 0, 600),  # firing, clearing
    ],
    ids=["pending", "firing", "firing-clearing"],
)
def test_an_unknown_verdict_holds_any_state_unchanged(
    ticks: list[tuple[float, bool | None]], pending_for: int, keep_firing_for: int
) -> None:
    last = ticks[-1][0]
    held: list[tuple[float, bool | None]] = [(last + 60 * n, None) for n in range(1, 20)]  # 19 minutes of missing data
    states = run([*ticks, *held], pending_for=pending_for, keep_firing_for=keep_firing_for)
    assert states[-1] is not None
    assert all(s == states[len(ticks) - 1] for s in states[len(ticks) :])


def test_an_unknown_verdict_from_ok_stays_ok() -> None:
    assert run(every_minute(None, None)) == [None, None]


def test_an_unknown_verdict_does_not_count_as_clear() -> None:
    ticks = [(0, True), (60, None), (3600, True)]
    states = run(ticks, keep_firing_for=300)
    assert statuses(states) == ["firing"] * 3
    assert all(s.clear_since is None for s in states if s)
    assert states[-1] is not None and states[-1].status is Status.FIRING


# --- groups -----------------------------------------------------------------------------


def decide(
    *,
    status: GroupStatus | None = None,
    notified: tuple[str, ...] = (),
    last: float | None = None,
    firing: set[str] | None = None,
    silenced: set[str] | None = None,
    now: float = 0,
    repeat: int = 3600,
) -> tuple[PageKind | None, GroupStatus | None, tuple[str, ...]]:
    decision = decide_group(
        status,
        at(0) if status else None,
        notified,
        at(last) if last is not None else None,
        firing or set(),
        silenced or set(),
        at(now),
        repeat,
    )
    return decision.page, decision.status, decision.members


FIRING = GroupStatus.FIRING


def test_the_first_firing_member_pages_new_and_starts_the_episode() -> None:
    decision = decide_group(None, None, (), None, {"b", "a"}, set(), at(90), 3600)
    assert (decision.page, decision.status, decision.members) == (PageKind.NEW, FIRING, ("a", "b"))
    assert decision.started_at == at(90)


def test_nothing_firing_and_no_group_pages_nothing() -> None:
    assert decide() == (None, None, ())


def test_same_members_before_the_repeat_interval_page_nothing() -> None:
    assert decide(status=FIRING, notified=("a",), last=0, firing={"a"}, now=3599) == (None, FIRING, ("a",))


def test_same_members_after_the_repeat_interval_repeat() -> None:
    decision = decide_group(FIRING, at(0), ("a",), at(0), {"a"}, set(), at(3600), 3600)
    assert (decision.page, decision.status, decision.members) == (PageKind.REPEAT, FIRING, ("a",))
    assert decision.started_at == at(0), "a repeat keeps the episode's start"


def test_a_new_member_updates_the_page() -> None:
    assert decide(status=FIRING, notified=("a",), last=0, firing={"a", "b"}, now=60) == (
        PageKind.UPDATE,
        FIRING,
        ("a", "b"),
    )


def test_all_members_clear_resolves_listing_what_was_paged() -> None:
    decision = decide_group(FIRING, at(0), ("a", "b"), at(0), set(), set(), at(300), 3600)
    assert (decision.page, decision.status, decision.members) == (PageKind.RESOLVED, None, ("a", "b"))
    assert decision.started_at == at(0)


def test_a_shrinking_group_pages_nothing_but_remembers_its_members() -> None:
    assert decide(status=FIRING, notified=("a", "b"), last=0, firing={"a"}, now=300) == (None, FIRING, ("a",))


def test_a_member_that_left_and_came_back_updates_the_page() -> None:
    assert decide(status=FIRING, notified=("a",), last=0, firing={"a", "b"}, now=300)[0] is PageKind.UPDATE


def test_silenced_members_only_page_nobody_from_the_start() -> None:
    assert decide(firing={"a"}, silenced={"a"}) == (None, None, ())


def test_all_firing_members_silenced_page_nobody_and_mark_the_group_silenced() -> None:
    assert decide(status=FIRING, notified=("a",), last=0, firing={"a"}, silenced={"a"}, now=300) == (
        None,
        GroupStatus.SILENCED,
        ("a",),
    )


def test_a_silenced_member_does_not_count_as_new() -> None:
    assert decide(status=FIRING, notified=("a",), last=0, firing={"a", "b"}, silenced={"b"}, now=60) == (
        None,
        FIRING,
        ("a",),
    )


def test_a_silenced_group_whose_members_clear_still_sends_its_resolve() -> None:
    # It paged before the silence began: whoever got that page gets the resolve that closes it.
    assert decide(status=GroupStatus.SILENCED, notified=("a",), last=0, now=600) == (
        PageKind.RESOLVED,
        None,
        ("a",),
    )


def test_a_silenced_group_still_firing_stays_silenced() -> None:
    silenced = GroupStatus.SILENCED
    assert decide(status=silenced, notified=("a",), last=0, firing={"a"}, silenced={"a"}, now=7200) == (
        None,
        silenced,
        ("a",),
    )


def test_a_silence_that_ends_resumes_the_episode_it_held() -> None:
    # No hold opens an episode (docs/guarantees.md, I2): the page that says it still fires is the same incident.
    decision = decide_group(GroupStatus.SILENCED, at(0), ("a",), at(0), {"a"}, set(), at(120), 3600)
    assert (decision.page, decision.status, decision.members) == (PageKind.REPEAT, FIRING, ("a",))
    assert decision.started_at == at(0)
    joined = decide_group(GroupStatus.SILENCED, at(0), ("a",), at(0), {"a", "b"}, set(), at(120), 3600)
    assert (joined.page, joined.started_at) == (PageKind.UPDATE, at(0))
