"""Properties of the pure state machine (alert_state), for any sequence of verdicts and clock times."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from support import T0

from queuewatch.alerting.alert_state import GroupStatus, InstanceState, PageKind, Status, decide_group, step

GAPS = st.sampled_from([1, 30, 59, 60, 61, 120, 299, 300, 301, 900])
VERDICTS = st.lists(st.tuples(GAPS, st.sampled_from([True, False, None])), max_size=25)
PERIODS = st.sampled_from([0, 60, 180, 300])
PURE = settings(max_examples=settings().max_examples * 10)  # no I/O: many examples cost little


def run(
    verdicts: list[tuple[int, bool | None]], pending_for: int, keep_firing_for: int
) -> list[tuple[int, InstanceState | None]]:
    """(seconds since T0, state after the step) for each verdict."""
    state: InstanceState | None = None
    clock = 0
    out = []
    for gap, breached in verdicts:
        clock += gap
        state = step(
            state,
            breached,
            T0 + timedelta(seconds=clock),
            rule="r",
            runner_type="x",
            pending_for=pending_for,
            keep_firing_for=keep_firing_for,
        )
        out.append((clock, state))
    return out


@PURE
@given(VERDICTS, PERIODS, PERIODS)
def test_a_breach_never_clears_and_missing_data_changes_nothing(
    verdicts: list[tuple[int, bool | None]], pending_for: int, keep_firing_for: int
) -> None:
    states = [None, *(s for _, s in run(verdicts, pending_for, keep_firing_for))]
    for (_, breached), before, after in zip(verdicts, states[:-1], states[1:], strict=True):
        if breached is None:
            assert after == before
        if breached:
            assert after is not None
        if before is not None and before.status is Status.FIRING and breached is not False:
            assert after is not None and after.status is Status.FIRING


@PURE
@given(VERDICTS, PERIODS, PERIODS, st.lists(GAPS, min_size=1, max_size=12))
def test_a_firing_alert_resolves_exactly_once_clear_for_keep_firing_for(
    verdicts: list[tuple[int, bool | None]], pending_for: int, keep_firing_for: int, clear_gaps: list[int]
) -> None:
    history = run(verdicts, pending_for, keep_firing_for)
    last = history[-1][1] if history else None
    clear = run([*verdicts, *((gap, False) for gap in clear_gaps)], pending_for, keep_firing_for)[len(verdicts) :]
    if last is None or last.status is Status.PENDING:
        assert all(state is None for _, state in clear)  # pending never fired: nothing to resolve
        return
    first_clear = clear[0][0] if last.clear_since is None else (last.clear_since - T0).total_seconds()
    for clock, state in clear:
        if clock - first_clear >= keep_firing_for:
            assert state is None, "clear past keep_firing_for, yet still firing"
        else:
            assert state is not None and state.status is Status.FIRING, "resolved before keep_firing_for"
    # and once resolved, it stays resolved while clear
    resolved_at = next((i for i, (_, s) in enumerate(clear) if s is None), len(clear))
    assert all(s is None for _, s in clear[resolved_at:])


RUNNER_TYPES = ["a", "b", "c"]
TICKS = st.lists(
    st.tuples(GAPS, st.sets(st.sampled_from(RUNNER_TYPES)), st.sets(st.sampled_from(RUNNER_TYPES))), max_size=30
)


@PURE
@given(TICKS, st.sampled_from([60, 3600]))
def test_group_pages_follow_episodes_and_never_repeat_a_transition(
    ticks: list[tuple[int, set[str], set[str]]], repeat_interval: int
) -> None:
    status: GroupStatus | None = None
    started = None
    notified: tuple[str, ...] = ()
    last_notified = None
    clock = 0
    for gap, firing, silenced in ticks:
        clock += gap
        now = T0 + timedelta(seconds=clock)
        decision = decide_group(status, started, notified, last_notified, firing, silenced, now, repeat_interval)
        page = decision.page
        # Each page is one transition: it opens, changes, repeats or closes what was paged, once.
        if page is PageKind.NEW:  # only where no episode is open: a released hold resumes its own
            assert status is None and decision.status is GroupStatus.FIRING
        if page is PageKind.UPDATE:
            assert status is not None and set(decision.members) - set(notified)
        if page is PageKind.REPEAT:  # due, or a hold released: the episode it held says it still fires
            due = last_notified is not None and (now - last_notified).total_seconds() >= repeat_interval
            assert due or status is GroupStatus.SILENCED
        if page is PageKind.RESOLVED:  # only what paged resolves, silenced since or not
            assert status in (GroupStatus.FIRING, GroupStatus.SILENCED) and decision.status is None and not firing
        if page is not None and page is not PageKind.RESOLVED:
            assert set(decision.members) == firing - silenced  # exactly who fires, never the silenced
        if page is None and status is not None and decision.status is None:
            raise AssertionError("a paged alert ended without its resolve")  # a silence holds back no resolve
        if firing and status is not None:
            assert decision.status is not None  # while anything fires, silenced or not, the alert is kept
        if page is not None:
            last_notified = now
        status, started, notified = decision.status, decision.started_at, decision.members
        # The same inputs again at the same moment (a retried evaluation) page nothing and change nothing.
        again = decide_group(status, started, notified, last_notified, firing, silenced, now, repeat_interval)
        assert again.page is None and (again.status, again.members) == (status, notified)
