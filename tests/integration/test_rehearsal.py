"""`queuewatch demo --config FILE`: a config of one's own, two teams with an escalation each and their own
pagers, pages in the rehearsal exactly as `backtest` replays the same minutes, each page with its receivers:
its rules, escalations, windows, a rule discovery alone selects, and the autoscaler's other queues."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from queuewatch_cli.commands.demo.rehearsal import rehearse
from queuewatch_cli.main import main

FLEET = """
version: 1
defaults: {rule: {team: ci-infra, keep_firing_for: 2m}}
runner_types:
  - {name: linux.2xlarge, queue: {name: acme-linux-2xlarge-queued-builds}}
  - {name: linux.gpu, queue: {name: acme-linux-gpu-queued-builds, region: us-west-2}, team: gpu-infra}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}, group_by: team}
  - {name: jobs-stuck, thresholds: {queue_time: 15m}, priority: P1, group_by: team}
  - {name: gpu-backlog, match: ["*.gpu"], thresholds: {queue_size: 4}, for: 2m, group_by: runner_type}
receivers:
  - {name: ci-pager, pager: "https://pager.example.com/ci"}
  - {name: gpu-pager, pager: "https://pager.example.com/gpu"}
  - {name: chat, chat: true}
routes:
  - {receiver: ci-pager, teams: [ci-infra], priority: P2}
  - {receiver: gpu-pager, teams: [gpu-infra], priority: P1}
  - {receiver: chat, kinds: [page, ticket, monitor]}
"""
NOW = datetime(2026, 11, 28, 6, 0, tzinfo=UTC)


def test_your_config_pages_in_the_rehearsal_exactly_as_backtest_replays_it(aws: None, tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET, encoding="utf-8")
    lines: list[str] = []
    assert rehearse(path, lines.append, now=NOW) == 0, "\n".join(lines)
    text = "\n".join(lines)
    assert lines[-1].startswith("rehearsal OK: ") and "exactly as `queuewatch backtest` replays" in lines[-1]
    pages = [line.split()[1:4] for line in lines if line.startswith("  05:") or line.startswith("  06:")]
    # The P2 pages, then each escalates to P1, which closes the P2 as superseded, then the P1 resolves.
    assert ["new", "P2", "jobs-queueing"] in pages and ["new", "P1", "jobs-stuck"] in pages
    assert ["resolved", "P1", "jobs-stuck"] in pages
    # Each page names the receivers its routes give it: the GPU team's P2 reaches chat alone, its P1 its pager.
    assert "P2 jobs-queueing (linux.gpu) -> chat" in text
    assert "P1 jobs-stuck (linux.gpu) -> gpu-pager, chat" in text
    assert "P2 jobs-queueing (linux.2xlarge) -> ci-pager, chat" in text
    # A rule's page is its team's (the rule's, ci-infra), whichever runner type it lists.
    assert "P2 gpu-backlog (linux.gpu) -> ci-pager, chat" in text


DISCOVERED = """
version: 1
defaults: {rule: {team: ci-infra, keep_firing_for: 2m}, dead_letter: {max_messages: 2, priority: P1}}
runner_types:
  - {name: linux.2xlarge, queue: {name: acme-linux-2xlarge-queued-builds}}
discovery:
  - {queue_name_pattern: "acme-{runner_type}-queued-builds", match: ["*-gpu", "linux*"], team: gpu-infra}
rules:
  - {name: jobs-queueing, match: ["linux*"], thresholds: {queue_time: 5m}}
  - {name: gpu-backlog, match: ["*-gpu"], thresholds: {queue_size: 4}, team: gpu-infra}
  - {name: mac-backlog, match: ["mac-*"], thresholds: {queue_size: 4}}
receivers:
  - {name: gpu-pager, pager: "https://pager.example.com/gpu"}
  - {name: chat, chat: true}
routes:
  - {receiver: gpu-pager, teams: [gpu-infra]}
  - {receiver: chat, kinds: [page, ticket, monitor]}
"""


def test_a_discovery_only_rule_and_the_autoscalers_other_queues_page_as_the_backtest_replays_them(
    aws: None, tmp_path: Path
) -> None:
    """A rule no named runner type selects is rehearsed on a name its glob selects, under the queue discovery
    finds; a stuck job-retry check and dead-lettered requests page beside a seeded build queue."""
    path = tmp_path / "fleet.yaml"
    path.write_text(DISCOVERED, encoding="utf-8")
    lines: list[str] = []
    assert rehearse(path, lines.append, now=NOW) == 0, "\n".join(lines)
    text = "\n".join(lines)
    assert "rule gpu-backlog: selects no named runner type: rehearsed on rehearsal-gpu" in text
    assert "whose queue discovery would find as acme-rehearsal-gpu-queued-builds" in text
    assert "new      P2 gpu-backlog (rehearsal-gpu) -> gpu-pager, chat" in text
    assert "resolved P2 gpu-backlog (rehearsal-gpu)" in text
    # discovery selects no mac-* name: said, not passed over
    assert "rule mac-backlog: selects no named runner type, and none of its globs names one" in text
    # the paths beside the first seeded build queue that has them (the named one's, found by the listing)
    assert "3 dead-lettered in acme-linux-2xlarge-queued-builds_dead_letter" in text
    assert "new      P1 dead-letter (linux.2xlarge)" in text and "resolved P1 dead-letter (linux.2xlarge)" in text
    assert "new      P2 job-retry (linux.2xlarge)" in text and "resolved P2 job-retry (linux.2xlarge)" in text
    assert lines[-1].startswith("rehearsal OK: ")


def test_a_config_whose_rules_name_nothing_it_can_seed_says_so(
    aws: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "found.yaml"
    path.write_text(
        "version: 1\ndefaults: {rule: {team: ci}}\n"
        'discovery:\n  - {queue_name_pattern: "acme-{runner_type}-queued-builds", match: ["linux-*"]}\n'
        'rules:\n  - {name: q, match: ["linux-[0-9]*"], thresholds: {queue_time: 5m}}\n',
        encoding="utf-8",
    )
    assert main(["demo", "--config", str(path)]) == 1
    out = capsys.readouterr().out
    assert "rule q: selects no named runner type, and none of its globs names one a discovery entry selects" in out
    assert "nothing to rehearse" in out


def test_a_window_open_over_the_rehearsal_holds_its_pages_there_and_an_slo_burns_as_in_the_backtest(
    aws: None, tmp_path: Path
) -> None:
    window = (
        'maintenance_windows:\n  - {name: gpu-patching, time_zone: UTC, weekdays: [saturday], start: "05:00", '
        'end: "07:00", teams: [gpu-infra], rules: [jobs-queueing]}\n'
        'slos:\n  - {name: gpu-fast, match: ["*.gpu"], objective: 99%, queue_time_under: 10m, team: gpu-infra}\n'
    )
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET + window, encoding="utf-8")
    lines: list[str] = []
    assert rehearse(path, lines.append, now=NOW) == 0, "\n".join(lines)  # 2026-11-28 is a Saturday
    text = "\n".join(lines)
    assert "note: maintenance window gpu-patching: open over the rehearsal's minutes" in text
    # the SLO burns on tracked jobs of a runner type it selects: its page, and its ticket, as the backtest replays
    assert "SLO gpu-fast: 40 jobs on linux.gpu over 20 minutes, each waiting 11m (over its 10m)" in text
    assert "new      P2 slo:gpu-fast (fast, slow) -> chat" in text, text
    assert "new      P3 slo:gpu-fast:ticket (ticket) -> chat" in text
    assert "queuewatch-health (slo:gpu-fast)" not in text  # the queues' part has no jobs: its SLO is not blind
    assert "P2 jobs-queueing (linux.gpu)" not in text  # held back by the window, in both
    assert "P2 jobs-queueing (linux.2xlarge) -> ci-pager, chat" in text


def test_a_fifo_build_queue_and_its_dead_letter_queue_are_rehearsed_as_the_autoscaler_names_them(
    aws: None, tmp_path: Path
) -> None:
    """The upstream module before v6 named a FIFO build queue `...-queued-builds.fifo`, and its dead-letter queue
    `...-queued-builds_dead_letter.fifo`: the made-up runner type's key drops the suffix, as discovery's does,
    and the dead-letter page comes from the queue upstream puts beside it."""
    path = tmp_path / "fifo.yaml"
    path.write_text(
        "version: 1\ndefaults: {rule: {team: ci}, dead_letter: {max_messages: 0}}\n"
        'discovery:\n  - {queue_name_pattern: "acme-{runner_type}-queued-builds.fifo"}\n'
        'rules:\n  - {name: q, match: ["linux-*"], thresholds: {queue_time: 5m}}\n',
        encoding="utf-8",
    )
    lines: list[str] = []
    assert rehearse(path, lines.append, now=NOW) == 0, "\n".join(lines)
    text = "\n".join(lines)
    assert "acme-linux-rehearsal-queued-builds.fifo" in text
    assert "1 dead-lettered in acme-linux-rehearsal-queued-builds_dead_letter.fifo" in text, text
    assert "new      P2 dead-letter (linux-rehearsal)" in text, text
