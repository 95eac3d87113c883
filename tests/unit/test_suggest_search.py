"""--suggest's search on six hours of ticks made here: which incidents each rule answers for, and the history held
between passes only while it is small."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from support import runner_type, snapshot

from queuewatch.config.load import parse_config
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.backtest import suggest as suggest_module
from queuewatch_cli.commands.backtest.suggest import HeldTicks, parse_budget, parse_incidents, suggest

START = datetime(2026, 3, 2, tzinfo=UTC)
END = START + timedelta(hours=6)
MINUTES = 6 * 60 + 1
CONFIG = """
version: 1
defaults: {region: us-east-1, queue_source: sqs}
runner_types:
  - {name: linux.2xlarge, queue: {name: q-linux}}
  - {name: windows.4xlarge, queue: {name: q-windows}}
rules:
  - {name: linux, team: ci-infra, match: ["linux.*"], thresholds: {queue_time: 1m, queue_size: 0}, for: 0s}
  - {name: windows, team: ci-infra, match: ["windows.*"], thresholds: {queue_time: 1m, queue_size: 0}, for: 0s}
"""


def ticks() -> Iterator[Snapshot]:
    """linux queues for an hour from 02:00 (its oldest job aging a minute a minute); windows for 4 minutes
    every hour on the half hour."""
    for minute in range(MINUTES):
        linux = (minute - 120) * 60.0 if 120 <= minute < 180 else 0.0
        windows = (minute % 60 - 30) * 60.0 if 30 <= minute % 60 < 34 else 0.0
        yield snapshot(
            START + timedelta(minutes=minute),
            runner_type("linux.2xlarge", 5 if linux else 0, linux),
            runner_type("windows.4xlarge", 2 if windows else 0, windows),
        )


def test_each_rule_answers_for_the_incidents_on_its_runner_types() -> None:
    config = parse_config(CONFIG, source="t.yaml")
    incidents = parse_incidents("2026-03-02T02:00Z 2026-03-02T03:00Z linux.2xlarge\n", "incidents.txt")
    linux, windows = suggest(config, ticks, START, END, parse_budget("4/day"), incidents)
    assert [i.line for i in linux.incidents] == [1] and windows.incidents == []
    assert linux.chosen is not None and linux.chosen.lateness == {1: pytest.approx(linux.chosen.worst_lateness)}
    assert linux.chosen.setting.threshold == 60 and linux.chosen.setting.pending == 0  # the soonest page
    assert windows.chosen is not None and windows.chosen.noise <= 1
    # The rule as it is pages every one of windows' 6 spikes.
    [current] = [t for t in windows.tried if t.setting == windows.current]
    assert current.noise == 6 and not current.within_budget


def test_the_history_is_read_once_when_small_and_for_every_pass_when_not(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = []

    def read() -> Iterator[Snapshot]:
        reads.append(1)
        return ticks()

    held = HeldTicks(read, MINUTES)
    assert [len(list(held())) for _ in range(3)] == [MINUTES] * 3
    assert len(reads) == 1
    monkeypatch.setattr(suggest_module, "MAX_HELD", 2 * MINUTES - 1)  # two runner types a minute: one too many
    reads.clear()
    held = HeldTicks(read, MINUTES)
    assert [len(list(held())) for _ in range(3)] == [MINUTES] * 3
    assert len(reads) == 3
