"""`make demo` ends with capacity and backtest --suggest on the demo's own history, a few lines each."""

from __future__ import annotations

import os
import re

import pytest

from queuewatch_cli.commands.demo.harness import DEMO_ENV
from queuewatch_cli.commands.demo.run import run_demo


def test_the_demo_ends_with_capacity_and_suggest(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in DEMO_ENV:
        monkeypatch.setenv(key, os.environ.get(key, ""))  # restored after the test
    lines: list[str] = []
    assert run_demo(lines.append) == 0
    text = "\n".join(lines)
    capacity = text.split("=== queuewatch capacity ", 1)[1].split("=== queuewatch backtest", 1)[0]
    assert "linux.2xlarge    14      1h54m" in capacity  # its 14 tracked jobs, each queued 114 minutes
    assert "thin: the range is 2h20m, under a week" in capacity
    assert "only 14 job(s) queued below its ceiling: too few to read its start-up delay from" in capacity
    # up to the demo's next part
    suggest = re.split(r"\n(?:===|Part )", text.split("--suggest --budget 1/week", 1)[1], maxsplit=1)[0]
    assert "chosen: queue time > 1m, for 0s: 1 page(s), 0 besides the incidents" in suggest
    assert "on linux.2xlarge: paged 0s after its start" in suggest
    assert len(capacity.splitlines()) <= 14 and len(suggest.splitlines()) <= 9
