"""The state machine with an injected clock: pending, firing, flapping, keep firing, repeat, resolve, silences."""

from __future__ import annotations

from datetime import datetime

import pytest
from support import minutes

from queuewatch.alert_state import GroupStatus, InstanceState, PageKind, decide_group, step


def run(verdicts: list[bool | None], *, pending_for: int = 0, keep_firing_for: int = 0) -> list[InstanceState | None]:
    """Step once a minute through the verdicts; the states after each step."""
    state: InstanceState | None = None
    states = []
    for minute, breached in enumerate(verdicts):
        state = step(
            state,
            breached,
            minutes(minute),
            rule="r",
            runner_type="linux.2xlarge",
            pending_for=pending_for,
            keep_firing_for=keep_firing_for,
        )
        states.append(state)
    return states


def statuses(states: list[InstanceState | None]) -> list[str]:
    return [s.status.value if s else "ok" for s in states]


def test_fires_at_once_without_a_pending_period() -> None:
    assert statuses(run([False, True])) == ["ok", "firing"]


def test_pending_for_delays_firing_until_it_has_lasted() -> None:
    states = run([True, True, True, True], pending_for=180)
    assert statuses(states) == ["pending", "pending", "pending", "firing"]
    assert states[3] is not None and states[3].since == minutes(3)


def test_pending_then_recovering_never_fires() -> None:
    assert statuses(run([True, True, False, True], pending_for=180)) == ["pending", "pending", "ok", "pending"]


def test_keep_firing_for_counts_from_the_first_clear_tick() -> None:
    states = run([True, False, False, False, False, False, False], keep_firing_for=300)
    assert statuses(states) == ["firing"] * 6 + ["ok"]
    assert states[1] is not None and states[1].clear_since == minutes(1)


def test_flapping_within_keep_firing_for_stays_one_alert() -> None:
    states = run([True, False, True, False, True, False], keep_firing_for=300)
    assert statuses(states) == ["firing"] * 6
    assert {s.since for s in states if s} == {minutes(0)}
    assert states[2] is not None and states[2].clear_since is None


@pytest.mark.parametrize("held", ["pending", "firing"])
def test_an_unknown_verdict_holds_the_state(held: str) -> None:
    pending_for = 600 if held == "pending" else 0
    states = run([True, None, None, None], pending_for=pending_for)
    assert statuses(states) == [held] * 4
    assert states[0] == states[3]


def test_an_unknown_verdict_from_ok_stays_ok() -> None:
    assert run([None, None]) == [None, None]


def decide(
    *,
    status: GroupStatus | None = None,
    notified: tuple[str, ...] = (),
    last: datetime | None = None,
    firing: set[str] | None = None,
    silenced: set[str] | None = None,
    at: float = 0,
    repeat: int = 3600,
) -> tuple[PageKind | None, GroupStatus | None, tuple[str, ...]]:
    decision = decide_group(status, minutes(0), notified, last, firing or set(), silenced or set(), minutes(at), repeat)
    return decision.page, decision.status, decision.members


def test_first_firing_member_pages_new() -> None:
    assert decide(firing={"a"}) == (PageKind.NEW, GroupStatus.FIRING, ("a",))


def test_same_members_before_the_repeat_interval_page_nothing() -> None:
    firing = GroupStatus.FIRING
    assert decide(status=firing, notified=("a",), last=minutes(0), firing={"a"}, at=59) == (None, firing, ("a",))


def test_repeat_after_the_interval() -> None:
    page = decide(status=GroupStatus.FIRING, notified=("a",), last=minutes(0), firing={"a"}, at=60)
    assert page[0] is PageKind.REPEAT


def test_a_new_member_updates_the_page() -> None:
    page = decide(status=GroupStatus.FIRING, notified=("a",), last=minutes(0), firing={"a", "b"}, at=1)
    assert page == (PageKind.UPDATE, GroupStatus.FIRING, ("a", "b"))


def test_all_clear_resolves_listing_what_was_paged() -> None:
    page = decide(status=GroupStatus.FIRING, notified=("a", "b"), last=minutes(0), at=5)
    assert page == (PageKind.RESOLVED, None, ("a", "b"))


def test_a_shrinking_group_pages_nothing_but_remembers() -> None:
    page = decide(status=GroupStatus.FIRING, notified=("a", "b"), last=minutes(0), firing={"a"}, at=5)
    assert page == (None, GroupStatus.FIRING, ("a",))


def test_silenced_members_page_nobody_and_keep_the_group() -> None:
    assert decide(firing={"a"}, silenced={"a"}) == (None, None, ())
    page = decide(status=GroupStatus.FIRING, notified=("a",), last=minutes(0), firing={"a"}, silenced={"a"}, at=5)
    assert page == (None, GroupStatus.SILENCED, ("a",))


def test_a_silenced_group_resolves_quietly() -> None:
    assert decide(status=GroupStatus.SILENCED, notified=("a",), last=minutes(0), at=9) == (None, None, ("a",))


def test_a_silence_that_ends_lets_a_firing_alert_page_again() -> None:
    page = decide(status=GroupStatus.SILENCED, notified=("a",), last=minutes(0), firing={"a"}, at=120)
    assert page == (PageKind.NEW, GroupStatus.FIRING, ("a",))
