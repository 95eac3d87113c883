"""docs/alerts.md's figures for the autoscaler's own words are the code's: its bounds, and COST.md's model."""

from __future__ import annotations

import json

from bench.autoscaler_words import RESULTS
from bench.words_cost import metric_filter_month, words_section
from queuewatch.collect.autoscaler_log import MAX_WINDOW, WAIT_SECONDS
from queuewatch.model.autoscaler_log import MAX_READ_PER_TICK
from queuewatch_cli.devkit.handlers import REPO_ROOT

ALERTS = (REPO_ROOT / "docs" / "alerts.md").read_text(encoding="utf-8")
SECTION = ALERTS.split("## The autoscaler's own words", 1)[1].split("\n## ", 1)[0]


def test_the_bounds_the_doc_states_are_the_collectors() -> None:
    assert f"At most {MAX_READ_PER_TICK} runner types are read a tick" in SECTION
    assert f"still running after\n  {WAIT_SECONDS:g} s" in SECTION or f"after {WAIT_SECONDS:g} s" in SECTION
    assert f"at most {MAX_WINDOW.total_seconds() / 3600:g} hours" in SECTION


def test_the_costs_the_doc_compares_are_the_models() -> None:
    assert f"${metric_filter_month(150):,.0f} a month at 150 runner types" in SECTION
    assert f"${metric_filter_month(5000):,.0f} at 5,000" in SECTION
    [row] = [r for r in json.loads(RESULTS.read_text(encoding="utf-8"))["rows"] if r["runner_types"] == 5000]
    assert f"about ${row['dollars_per_tick']:.6f} a tick" in SECTION
    assert any("$0.37 of Logs Insights" in line for line in words_section()) and "$0.37 a month" in SECTION
