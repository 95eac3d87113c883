"""No invisible defaults: `check-config --explain` says where every setting comes from, and no rule pages a team
queuewatch made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from queuewatch.config.load import ConfigError, parse_config
from queuewatch_cli.main import main

CONFIG = """\
version: 1
defaults:
  rule:
    team: ci-infra
    keep_firing_for: 10m
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux.g5.4xlarge.nvidia.gpu, queue: {name: gh-ci-linux-g5-4xlarge-nvidia-gpu-queued-builds}, team: gpu-infra}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", match: ["windows.*"]}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, priority: P2}
  - {name: gpu-queueing, match: ["*.nvidia.gpu"], thresholds: {queue_time: 30m}, priority: P1, team: gpu-infra}
"""


def explained(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> list[str]:
    path = tmp_path / "fleet.yaml"
    path.write_text(text)
    assert main(["check-config", "--explain", str(path)]) == 0
    return capsys.readouterr().out.splitlines()


def test_every_setting_says_whether_it_came_from_the_rule_defaults_rule_or_the_built_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = explained(tmp_path, capsys, CONFIG)
    first = out[out.index("rule jobs-queueing: match ['*']") :]
    assert "  thresholds       queue size > 0 and queue time > 1m" in first
    assert "  keep_firing_for  10m  (from defaults.rule)" in first
    assert "  team             ci-infra  (from defaults.rule)" in first
    assert "  for              0s  (built-in default)" in first
    assert "  repeat_interval  4h  (built-in default)" in first
    assert "  priority         P2" in first  # the rule's own: no mark
    gpu = out[out.index("rule gpu-queueing: match ['*.nvidia.gpu']") :]
    assert "  team             gpu-infra" in gpu
    assert "  breach_when      all  (built-in default)" in gpu
    assert "  selects 1 named runner type: linux.g5.4xlarge.nvidia.gpu" in gpu
    assert (
        "  selects 2 named runner types: linux.2xlarge, linux.g5.4xlarge.nvidia.gpu (team gpu-infra)" in first
    )  # a runner type's own team, where it routes elsewhere than the rule's
    assert any(
        "when discovered, the runner types of gh-ci-{runner_type}-queued-builds in us-east-1 (match ['windows.*'])"
        in line
        for line in first
    )
    assert "  team             ci-infra  (rule jobs-queueing's: monitor.team is not set)" in out


def test_a_rule_with_no_team_from_anywhere_is_an_error_naming_it_and_the_fix() -> None:
    text = CONFIG.replace("    team: ci-infra\n", "")
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="fleet.yaml")
    [problem] = caught.value.problems
    assert (problem.line, problem.key_path) == (
        11,
        "rules[0].name",
    )  # the line of the rule, in the file without the team
    assert problem.message.startswith("rule 'jobs-queueing' has no team: queuewatch has no built-in one")
    assert "expected team: in this rule, or defaults.rule.team for every rule" in problem.message


REGIONS = """\
version: 1
defaults: {region: us-east-1, rule: {team: ci-infra}}
discovery:
  - {queue_name_pattern: "acme-{runner_type}-queued-builds"}
  - {queue_name_pattern: "acme-{runner_type}-queued-builds", region: eu-west-1}
  - {queue_name_pattern: "gpu-{runner_type}-queued-builds", match: ["gpu-*"], exclude: ["gpu-*"]}
  - {queue_name_pattern: "win-{runner_type}-queued-builds", match: ["windows-*"]}
rules:
  - {name: linux-queueing, match: ["linux-*"], thresholds: {queue_time: 5m}}
"""


def test_explain_names_the_entries_a_rule_cannot_reach_and_the_names_a_second_region_gets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = explained(tmp_path, capsys, REGIONS)
    assert (
        "  not discovery[2] (gpu-{runner_type}-queued-builds in us-east-1): its match ['gpu-*'], exclude ['gpu-*'] "
        "leaves no runner type to find"
    ) in out
    assert (
        "  not discovery[3] (win-{runner_type}-queued-builds in us-east-1): no runner type its match ['windows-*'] "
        "keeps is one the rule's match ['linux-*'] selects"
    ) in out
    [first] = [line for line in out if "acme-{runner_type}-queued-builds in us-east-1" in line]
    [second] = [line for line in out if "acme-{runner_type}-queued-builds in eu-west-1" in line]
    assert "@" not in first  # the first region keeps the plain names
    assert second.endswith("; a key discovery[0] also finds is named <key>@eu-west-1 here")


LISTED = (
    CONFIG.replace("  rule:\n", "  dead_letter: {priority: P1}\n  rule:\n")
    + """\
slos:
  - {name: gpu-wait, match: ["*.nvidia.gpu"], objective: 99%, queue_time_under: 10m, team: gpu-infra}
receivers:
  - {name: gpu-pager, pager: "https://events.example.com/gpu"}
  - {name: chat, chat: true}
routes:
  - {receiver: gpu-pager, teams: [gpu-infra], priority: P1}
  - {receiver: chat, kinds: [page, ticket, monitor]}
"""
)


def test_explain_lists_every_alert_the_config_can_raise_with_its_team_and_a_receiver_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = explained(tmp_path, capsys, LISTED)
    table = out[out.index(next(line for line in out if line.startswith("alerts this config can raise"))) + 1 :]
    rows = [line.split() for line in table[: table.index(next(line for line in table if not line.startswith("  ")))]]
    assert rows[0] == ["kind", "alert", "priority", "team", "also", "in", "teams", "receiver"]
    listed = {(row[0], row[1]): row for row in rows[1:]}
    assert listed[("rule", "jobs-queueing")][2:5] == ["P2", "ci-infra", "gpu-infra"]
    assert listed[("rule", "gpu-queueing")][2:5] == ["P1", "gpu-infra", "-"]
    assert listed[("path", "job-retry")][2:4] == ["P2", "ci-infra"]
    # a GPU pool's dead-letter page: the dead-letter rule's team, with the pool's team in its `teams`
    assert listed[("path", "dead-letter")][2:5] == ["P1", "ci-infra", "gpu-infra"]
    slo_page = next(row for key, row in listed.items() if key[0] == "slo" and row[2] == "slo:gpu-wait")
    assert slo_page[3:6] == ["(fast,", "slow)", "P2"]
    assert any(key[0] == "slo" and row[2] == "slo:gpu-wait:ticket" and "P3" in row for key, row in listed.items())
    assert listed[("monitor", "queuewatch-health")][2:4] == ["P3", "ci-infra"]
    # the receiver column: the receivers the config's routes give each alert
    receivers = {(line.split()[0], line.split()[1]): line for line in table[1 : len(rows)]}
    assert receivers[("rule", "gpu-queueing")].endswith("  gpu-pager, chat")
    assert receivers[("rule", "jobs-queueing")].endswith("  chat")  # ci-infra's: no route to the GPU pager
    assert receivers[("monitor", "queuewatch-health")].endswith("  chat")
    ticket = next(line for line in table[1 : len(rows)] if "slo:gpu-wait:ticket" in line)
    assert ticket.endswith("  chat")  # gpu-infra's, but the GPU pager's route takes pages and the monitor only
    assert (
        "  gpu-infra: gpu-queueing, slo:gpu-wait, slo:gpu-wait:ticket; named in the teams of jobs-queueing, "
        "job-retry, dead-letter" in out
    )


def test_explain_says_who_holds_back_whom_and_that_equal_priorities_hold_back_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = explained(tmp_path, capsys, LISTED)
    said = list(out[out.index(next(x for x in out if x.startswith("escalation"))) + 1 :])
    # The same problem only (evaluate/holds/inhibit.py): the GPU pool's own team's queue rules; discovery's runner
    # types carry each rule's own team, so neither holds back the other there.
    assert said[0] == "  gpu-queueing (P1) holds back jobs-queueing (P2) on linux.g5.4xlarge.nvidia.gpu"
    # never across kinds: a dead-letter or job-retry page is its own problem
    assert not [line for line in out if "holds back job-retry" in line or "dead-letter (P1) holds back" in line]
    assert not [line for line in out if "holds back dead-letter" in line or "gpu-queueing (P1) holds back gpu" in line]
