"""--suggest on histories where pages are not monotone in the threshold, and without incidents: the choice is the
best of the whole ladder, and a choice that leaves the range's worst wait unpaged says so."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from support import runner_type, snapshot

from queuewatch.config.load import parse_config
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.backtest.replay import Replay
from queuewatch_cli.commands.backtest.suggest import (
    Setting,
    candidate_config,
    parse_budget,
    parse_incidents,
    suggest,
    suggestion_lines,
)

START = datetime(2026, 3, 2, tzinfo=UTC)
HALF_DAY = 12 * 60
END = START + timedelta(minutes=HALF_DAY)
CONFIG = """
version: 1
defaults: {region: us-east-1, queue_source: sqs}
runner_types: [{name: linux.2xlarge, queue: {name: q-linux}}]
rules:
  - {name: linux, team: ci-infra, match: ["linux.*"], thresholds: {queue_time: 30m, queue_size: 0}, for: 0s}
"""


def flapping_half_day() -> Iterator[Snapshot]:
    """Twelve hours. 02:00 to 06:00: the oldest job's wait swings between 22 and 31 minutes every 10 minutes, over
    30 minutes one minute in ten (each a page at 30m, one long page at 20m or less). 08:00: an outage, a wait
    growing a minute a minute to two hours."""
    for minute in range(HALF_DAY + 1):
        wait = 0.0
        if 120 <= minute < 360:
            wait = (22 + minute % 10) * 60.0
        elif 480 <= minute < 600:
            wait = (minute - 480) * 60.0
        yield snapshot(START + timedelta(minutes=minute), runner_type("linux.2xlarge", 3 if wait else 0, wait))


def test_the_setting_paging_the_incident_soonest_is_found_where_higher_thresholds_flap() -> None:
    config = parse_config(CONFIG, source="t.yaml")
    incidents = parse_incidents("2026-03-02T08:00Z 2026-03-02T10:00Z\n", "incidents.txt")
    [answer] = suggest(config, flapping_half_day, START, END, parse_budget("1/12h"), incidents)
    flapping = next(t for t in answer.tried if t.setting == Setting(1800, 0, True))
    assert flapping.noise > 20 and not flapping.within_budget  # the rule as it is flaps
    assert answer.chosen is not None
    # A search assuming higher thresholds page less never replays the low thresholds with no pending period.
    assert answer.chosen.setting == Setting(60, 0, True)
    assert answer.chosen.noise == 1 and answer.chosen.worst_lateness <= 120
    best = min((t for t in answer.tried if t.within_budget and t.pages_every_incident), key=lambda t: t.worst_lateness)
    assert answer.chosen.worst_lateness == best.worst_lateness
    assert len(answer.tried) == 12 * 5  # the whole ladder, every pending period


def spikes_and_an_outage() -> Iterator[Snapshot]:
    """Six hours: four spikes of 10 minutes, one an hour from 00:00; at 04:00 an outage of 1h54m."""
    for minute in range(6 * 60 + 1):
        wait = 0.0
        if minute < 4 * 60 and minute % 60 < 10:
            wait = (minute % 60) * 60.0
        elif 240 <= minute < 240 + 114:
            wait = (minute - 240) * 60.0
        yield snapshot(START + timedelta(minutes=minute), runner_type("linux.2xlarge", 2 if wait else 0, wait))


def test_without_incidents_it_says_it_only_minimises_pages_and_warns_of_the_worst_wait_left_unpaged() -> None:
    config = parse_config(CONFIG, source="t.yaml")
    end = START + timedelta(hours=6)
    budget = parse_budget("0/day")
    answers = suggest(config, spikes_and_an_outage, START, end, budget)
    [answer] = answers
    assert answer.chosen is not None and answer.chosen.setting.threshold >= 7200  # nothing pages: within 0
    lines = "\n".join(suggestion_lines(answers, budget, [], START, end))
    assert "no --incidents: the choice only minimises pages" in lines
    assert "warning: the range's longest wait, 1h53m on linux.2xlarge" in lines

    # With the outage listed, the choice pages it, and no warning is given.
    incidents = parse_incidents("2026-03-02T04:00Z 2026-03-02T06:00Z\n", "incidents.txt")
    answers = suggest(config, spikes_and_an_outage, START, end, budget, incidents)
    assert answers[0].chosen is not None and answers[0].chosen.pages_every_incident
    lines = "\n".join(suggestion_lines(answers, budget, incidents, START, end))
    assert "warning" not in lines and "no --incidents" not in lines


def test_skipping_calm_ticks_gives_what_planning_every_tick_gives() -> None:
    config = parse_config(CONFIG, source="t.yaml")
    [spec], [rule] = config.rules, config.resolved_rules
    [answer] = suggest(config, flapping_half_day, START, END, parse_budget("1/12h"))
    found = {t.setting: [(e.started_at, e.resolved_at, e.peak_queue_time) for e in t.episodes] for t in answer.tried}
    for setting in (Setting(60, 0, True), Setting(1800, 0, True), Setting(2700, 0, True), Setting(1200, 600, True)):
        replay = Replay(candidate_config(config, spec, rule, setting))  # planned on every tick
        for tick in flapping_half_day():
            replay.tick(tick, tick.collected_at)
        assert found[setting] == [(e.started_at, e.resolved_at, e.peak_queue_time) for e in replay.episodes]
