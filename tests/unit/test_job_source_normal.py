"""A job source's normal gap, from each day's longest: an outage (longer than the normal learned so far and the
floor) is left out, and a quiet that recurs on two days is learned."""

from __future__ import annotations

from queuewatch.model.job_sources import normal_gap

HOUR = 3600.0
FLOOR = 15 * 60.0


def test_one_outage_leaves_the_normal_as_it_was() -> None:
    days = {"2026-11-17": 600, "2026-11-18": 8 * HOUR, "2026-11-19": 600, "2026-11-20": 540}
    assert normal_gap(days, FLOOR) == (600, 8 * HOUR)


def test_a_quiet_on_two_days_is_learned_at_the_shorter_of_the_two() -> None:
    days = {"2026-11-17": 600, "2026-11-18": 8 * HOUR, "2026-11-19": 6 * HOUR}
    assert normal_gap(days, FLOOR) == (6 * HOUR, 8 * HOUR)


def test_gaps_within_the_floor_are_normal_and_none_is_an_outage() -> None:
    assert normal_gap({"2026-11-17": 300, "2026-11-18": 840}, FLOOR) == (840, 0)
    assert normal_gap({}, FLOOR) == (0, 0)
