"""Rules that can never apply (unreachable) and rule pairs that page twice for one breach (overlapping)."""

from __future__ import annotations

import pytest

from queuewatch.config.load import ConfigError, parse_config

HEAD = """version: 1
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.4xlarge, queue: {name: gh-ci-linux-4xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}}
"""
# A rule for every runner type beside the one under test, so that none is left unselected (an error of its own).
ANY = "  - {name: slow-anywhere, team: ci-infra, thresholds: {queue_time: 6h}, priority: P3}\n"
DISCOVERY = """discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds"}
"""


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="q.yaml")
    return [f"{p.line}:{p.key_path}: {p.message}" for p in caught.value.problems]


def test_a_rule_that_selects_no_runner_type_without_discovery_is_unreachable() -> None:
    text = (
        HEAD
        + """rules:
  - {name: jobs-queueing, team: ci-infra, match: ["linux.*", "rocm.*"], thresholds: {queue_time: 1m}}
  - name: windows-queueing
    match: ["windows.*", "macos"]
    thresholds: {queue_time: 5m}
    team: ci-infra
"""
    )
    [problem] = problems(text)
    assert problem.startswith("9:rules[1].match: rule 'windows-queueing' can never apply")
    assert "selects none of runner_types, and there is no discovery entry" in problem


def test_the_same_rule_is_reachable_once_discovery_may_find_a_runner_type() -> None:
    rule = "{name: windows-queueing, team: ci-infra, match: ['windows.*'], thresholds: {queue_time: 5m}}"
    text = HEAD + DISCOVERY + f"rules:\n  - {rule}\n" + ANY
    assert parse_config(text).resolved_rules[0].name == "windows-queueing"


@pytest.mark.parametrize(
    ("match", "exclude"),
    [
        ('["linux.*"]', '["*"]'),
        ('["linux.2xlarge"]', '["linux.2xlarge"]'),
        ('["linux.2x*", "linux.4xlarge"]', '["linux.*"]'),
    ],
)
def test_an_exclude_that_removes_everything_the_match_selects_is_unreachable(match: str, exclude: str) -> None:
    rule = f"{{name: r, team: ci-infra, match: {match}, exclude: {exclude}, thresholds: {{queue_size: 0}}}}"
    text = HEAD + DISCOVERY + f"rules:\n  - {rule}\n" + ANY
    [problem] = problems(text)
    assert problem.startswith("9:rules[0].exclude: rule 'r' can never apply: exclude")
    assert "removes everything match" in problem


@pytest.mark.parametrize("exclude", ['["linux.2xlarge"]', '["linux.?xlarge"]', '["linux.[24]*"]'])
def test_an_exclude_that_leaves_something_is_accepted(exclude: str) -> None:
    # '?' and '[...]' globs are never claimed to cover a pattern: the check errs towards accepting.
    rule = f"{{name: r, team: ci-infra, match: ['linux.*'], exclude: {exclude}, thresholds: {{queue_size: 0}}}}"
    text = HEAD + DISCOVERY + f"rules:\n  - {rule}\n" + ANY
    assert parse_config(text).resolved_rules[0].exclude


def test_two_rules_paging_the_same_runner_type_at_the_same_priority_and_thresholds_overlap() -> None:
    text = (
        HEAD
        + """rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
  - name: linux-queueing
    match: ["linux.*"]
    thresholds: {queue_size: 0, queue_time: 60s}
    priority: P2
    team: linux-infra
"""
    )
    [problem] = problems(text)
    assert problem.startswith("8:rules[1]: rule 'linux-queueing' overlaps rules[0] 'jobs-queueing'")
    assert "on runner type 'linux.2xlarge' (and 1 more)" in problem
    assert "both page at P2 when queue size > 0 and queue time > 1m, so one breach pages twice" in problem


@pytest.mark.parametrize(
    "second",
    [
        # a higher bar at a higher priority: an escalation (at the same priority: test_silent_passes.py)
        "{name: escalate, team: ci-infra, thresholds: {queue_time: 30m, queue_size: 0}, priority: P1}",
        # another priority
        "{name: escalate, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, priority: P1}",
        # another condition
        "{name: escalate, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}, breach_when: any}",
        # disjoint selections
        "{name: gpu, team: ci-infra, match: ['rocm.*'], thresholds: {queue_time: 1m, queue_size: 0}}",
    ],
)
def test_rules_that_differ_in_what_they_page_for_or_whom_do_not_overlap(second: str) -> None:
    text = (
        HEAD
        + f"""rules:
  - {{name: jobs-queueing, team: ci-infra, match: ["linux.*"],
     thresholds: {{queue_time: 1m, queue_size: 0}}, priority: P2}}
  - {second}
"""
    )
    assert len(parse_config(text).resolved_rules) == 2


def test_rules_overlap_on_a_name_that_discovery_could_find() -> None:
    text = """version: 1
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds"}
rules:
  - {name: everything, team: ci-infra, thresholds: {queue_time: 1m}}
  - {name: gpus, team: ci-infra, match: ["*.gpu"], thresholds: {queue_time: 1m}}
"""
    [problem] = problems(text)
    assert "rule 'gpus' overlaps rules[0] 'everything' on runner type 'x.gpu'" in problem


def test_every_rule_problem_is_reported_at_once_with_its_line() -> None:
    text = (
        HEAD
        + """rules:
  - {name: a, team: ci-infra, thresholds: {queue_time: 1m}}
  - {name: b, team: ci-infra, match: ["linux.2xlarge"], thresholds: {queue_time: 1m}}
  - {name: c, team: ci-infra, match: ["windows"], thresholds: {queue_time: 1m}}
"""
    )
    found = problems(text)
    assert [p.split(": rule")[0] for p in found] == ["8:rules[1]", "9:rules[2].match"]  # in line order


def test_the_shipped_config_has_no_rule_problem() -> None:
    from queuewatch.config.load import load_config
    from queuewatch_cli.devkit.handlers import REPO_ROOT

    assert load_config(REPO_ROOT / "config" / "queuewatch.yaml").resolved_rules


def test_warnings_come_in_the_files_line_order_too() -> None:
    # The rule glob's warning is found before the lane's, though the lane is written first.
    from queuewatch.config.load import check_config_bytes

    text = (
        "version: 1\n"
        "defaults: {rule: {team: ci-infra}}\n"
        "runner_types:\n"
        "  - {name: lane, queue: none}\n"
        "discovery:\n"
        "  - {queue_name_pattern: 'gh-ci-{runner_type}-queued-builds', match: ['*-nvidia-gpu-*']}\n"
        "rules:\n"
        "  - {name: all, thresholds: {queue_time: 5m}}\n"
        "  - {name: gpu, match: ['*-nvida-gpu-*'], thresholds: {queue_time: 30m}}\n"
    )
    checked = check_config_bytes(text.encode(), "q.yaml")
    lines = [warning.line or 0 for warning in checked.warnings]
    assert len(lines) == 2 and lines == sorted(lines), checked.render_warnings()
