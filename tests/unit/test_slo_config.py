"""The config's `slos:` section: validation with the key and line, and the defaults the Workbook gives."""

from __future__ import annotations

import pytest

from queuewatch.config.load import ConfigError, parse_config
from queuewatch.config.slos import history_days_needed
from queuewatch.model.rules import Priority
from queuewatch.model.slo import DEFAULT_BURN_ALERTS

HEAD = """version: 1
runner_types:
  - {name: linux.2xlarge, team: ci-infra, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: gpu.a100, team: ml-infra, queue: {name: gh-ci-gpu-a100-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 30m}}
"""


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="q.yaml")
    return [f"{p.line}:{p.key_path}: {p.message}" for p in caught.value.problems]


def test_an_slo_takes_the_workbook_pairs_and_a_percentage() -> None:
    config = parse_config(
        HEAD + "slos:\n  - {name: linux-start-fast, match: ['linux.*'], objective: 99%, queue_time_under: 2m, "
        "window: 28d, team: ci-infra}\n"
    )
    [slo] = config.resolved_slos
    assert slo.objective == pytest.approx(0.99)
    assert slo.budget == pytest.approx(0.01)
    assert (slo.queue_time_under, slo.window, slo.team) == (120, 28 * 86400, "ci-infra")
    assert slo.burn_alerts == DEFAULT_BURN_ALERTS
    assert [(a.factor, a.long_window, a.short_window, a.notify) for a in slo.burn_alerts] == [
        (14.4, 3600, 300, "page"),
        (6.0, 21600, 1800, "page"),
        (1.0, 259200, 21600, "ticket"),
    ]
    assert slo.priority is Priority.P2 and slo.ticket_priority is Priority.P3
    assert history_days_needed(slo) == 29
    assert slo.selects("linux.2xlarge", "ci-infra", ["self-hosted"])
    assert not slo.selects("gpu.a100", "ml-infra", [])


def test_selection_by_team_and_by_labels() -> None:
    config = parse_config(
        HEAD + "slos:\n  - {name: ml, teams: [ml-infra], labels: [GPU], objective: 95%, queue_time_under: 10m, "
        "team: ml-infra}\n"
        "  - {name: any, objective: 0.99, queue_time_under: 1m, team: ci-infra}\n"
    )
    ml, anything = config.resolved_slos
    assert ml.team == "ml-infra"
    assert ml.selects("gpu.a100", config.team_of("gpu.a100"), ["self-hosted", "gpu"])
    assert not ml.selects("gpu.a100", config.team_of("gpu.a100"), ["self-hosted"])
    assert not ml.selects("linux.2xlarge", config.team_of("linux.2xlarge"), ["gpu"])
    assert anything.selects("gpu.a100", "ml-infra", [])


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("{name: a, objective: 100%, queue_time_under: 2m, team: t}", "slos[0].objective: "),
        ("{name: a, objective: ninety, queue_time_under: 2m, team: t}", "expected a percentage such as 99%"),
        ("{name: a, objective: 99%, queue_time_under: 120, team: t}", "add a unit"),
        ("{name: a, objective: 99%, queue_time_under: 2m, window: 36h, team: t}", "expected whole days"),
        ("{name: a, objective: 99%, queue_time_under: 2m, window: 120d, team: t}", "JobHistoryDays, 90"),
        ("{name: a, objective: 99%, queue_time_under: 2m}", "SLO 'a' has no team"),
        ("{name: A B, objective: 99%, queue_time_under: 2m, team: t}", "expected an SLO name"),
        (
            "{name: a, objective: 99%, queue_time_under: 10m, page_when_waiting_over: 5m, team: t}",
            "page_when_waiting_over must be at least queue_time_under",
        ),
        (
            "{name: a, objective: 99%, queue_time_under: 2m, team: t, burn_alerts: "
            "[{name: f, factor: 10, long_window: 5m, short_window: 1h}]}",
            "short_window must be shorter than long_window",
        ),
    ],
)
def test_a_bad_slo_is_refused_naming_the_key_and_line(entry: str, expected: str) -> None:
    found = problems(HEAD + f"slos:\n  - {entry}\n")
    assert any(expected in p and p.startswith("8:slos[0]") for p in found), found


def test_two_slos_of_one_name_are_refused() -> None:
    entry = "{name: a, objective: 99%, queue_time_under: 2m, team: t}"
    found = problems(HEAD + f"slos:\n  - {entry}\n  - {entry}\n")
    assert any("slos[1].name: 'a' is already slos[0]" in p for p in found), found


def test_check_config_states_the_budget_in_jobs_only_from_a_volume_it_was_given() -> None:
    from queuewatch_cli.commands.check_config.slos import slo_lines

    config = parse_config(
        HEAD + "slos:\n  - {name: fast, objective: 99%, queue_time_under: 2m, window: 28d, team: ci-infra}\n"
    )
    unknown = "\n".join(slo_lines(config))
    assert "budget in jobs: unknown here" in unknown
    assert "JobHistoryDays >= 29 keeps the window's jobs in the history" in unknown
    assert "fast (page): burn >= 14.4 over 1h and 5m: 2.1% of the budget spent in 1h" in unknown
    known = "\n".join(slo_lines(config, {"fast": 2000.0}))
    # 1% of 28 days at 2,000 jobs a day.
    assert "budget in jobs: 560 of 56,000 jobs over 28d at today's 2,000 a day" in known


def test_check_config_states_the_history_an_slo_needs_and_its_cost_as_docs_cost_measures_it() -> None:
    import re
    from pathlib import Path

    from queuewatch_cli.commands.check_config.slos import history_usd_a_month, slo_lines

    cost = (Path(__file__).parents[2] / "docs" / "COST.md").read_text(encoding="utf-8")
    found = re.search(r"\| DynamoDB storage \(the history\) \| \$([0-9.]+) \| 14 days of jobs", cost)
    assert found, "docs/COST.md's history storage line"
    assert history_usd_a_month(50_000, 14) == pytest.approx(float(found[1]), abs=0.006)
    config = parse_config(
        HEAD + "slos:\n  - {name: fast, objective: 99%, queue_time_under: 2m, window: 28d, team: ci-infra}\n"
    )
    stated = "\n".join(slo_lines(config))
    assert "the history's storage at 29 days: $0.43 a month at a fleet's 50,000 jobs a day ($0.015 a day kept" in stated
    measured = "\n".join(slo_lines(config, {"fast": 2000.0}, 4000.0))
    assert "the history's storage at 29 days: $0.03 a month at today's 4,000 jobs a day" in measured


def test_burn_alerts_replace_the_workbook_pairs_and_fire_as_configured() -> None:
    from queuewatch.evaluate.slo import judge_slos
    from queuewatch.model.snapshot import SloReading, SloWindowCount, Snapshot

    config = parse_config(
        HEAD + "slos:\n  - {name: fast, objective: 99%, queue_time_under: 2m, team: ci-infra, burn_alerts: ["
        "{name: sustained, factor: 3, long_window: 1d, short_window: 2h}, "
        "{name: drift, factor: 1.5, long_window: 7d, short_window: 1d, notify: ticket}]}\n"
    )
    [slo] = config.resolved_slos
    assert [(a.name, a.factor, a.long_window, a.short_window, a.notify) for a in slo.burn_alerts] == [
        ("sustained", 3.0, 86400, 7200, "page"),
        ("drift", 1.5, 7 * 86400, 86400, "ticket"),
    ]
    # 5% of jobs late over a day and two hours: burn 5, which the Workbook's slow page (6) misses.
    windows = [SloWindowCount(seconds=s, good=950, bad=50) for s in (7200, 86400, 7 * 86400)]
    snapshot = Snapshot(
        snapshot_id="s",
        collected_at="2026-11-21T12:00:00Z",
        runner_types=[],
        slos=[SloReading(name="fast", windows=windows)],
    )
    judged, blind = judge_slos(config, snapshot)
    assert blind == {}
    assert {(j.rule, j.instance, j.verdict.breached) for j in judged} == {
        ("slo:fast", "sustained", True),
        ("slo:fast:ticket", "drift", True),
    }
