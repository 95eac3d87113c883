"""Every alert a config can never fire or fires twice is refused or warned at check-config, at the line of the
mistake, with the fix in the message; and the fix, fed back as written, is accepted.

Each row: a config written from the docs (two teams, a GPU pool paged at P1, an SLO, a Sunday window), one
mistake put in it, the pattern that reads the suggested value out of the message, and what the value replaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from queuewatch.config.load import CheckedConfig, ConfigError, ConfigProblem, parse_checked
from queuewatch_cli.main import main

FLEET = """\
version: 1
defaults:
  rule: {team: ci}
runner_types:
  - {name: linux-x64, queue: {name: ci-linux-x64-queued-builds}}
  - {name: linux-gpu-a10, queue: {name: ci-linux-gpu-a10-queued-builds}, team: gpu-infra}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}}
  - {name: gpu-queueing, match: ["*-gpu-*"], thresholds: {queue_time: 30m}, priority: P1, team: gpu-infra}
slos:
  - {name: gpu-wait, match: ["*-gpu-*"], objective: 99%, queue_time_under: 10m, team: gpu-infra}
maintenance_windows:
  - {name: sunday, time_zone: Europe/Berlin, weekdays: [sunday], start: "02:00", end: "04:00", teams: [gpu-infra]}
"""

DISCOVERED = """\
version: 1
defaults:
  rule: {team: ci, thresholds: {queue_time: 5m}}
discovery:
  - {queue_name_pattern: "ci-{runner_type}-queued-builds", match: ["linux-x64*"]}
  - {queue_name_pattern: "ci-{runner_type}-queued-builds", region: eu-west-1, match: ["linux-gpu-*"], team: gpu-infra}
rules:
  - {name: jobs-queueing, match: ["linux-x64*"]}
  - {name: gpu-queueing, match: ["linux-gpu-*"], thresholds: {queue_time: 30m}, priority: P1, team: gpu-infra}
"""

NAMED_AND_DISCOVERED = """\
version: 1
defaults:
  rule: {team: ci, thresholds: {queue_time: 5m}}
runner_types:
  - {name: linux-gpu-a10, queue: {name: ci-linux-gpu-a10-queued-builds}, team: gpu-infra}
discovery:
  - {queue_name_pattern: "ci-{runner_type}-queued-builds", region: eu-west-1}
rules:
  - {name: jobs-queueing, exclude: ["*-gpu-*"]}
  - {name: gpu-queueing, match: ["*-gpu-*"], team: gpu-infra}
"""

FORECASTING = """\
version: 1
defaults:
  rule: {team: ci}
autoscaler: {prefix: ci}
runner_types:
  - {name: linux-x64, queue: {name: ci-linux-x64-queued-builds}}
  - {name: linux-gpu-a10, queue: {name: ci-linux-gpu-a10-queued-builds}, team: gpu-infra}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}, forecast: 10m}
  - {name: gpu-queueing, match: ["*-gpu-*"], thresholds: {queue_time: 30m}, priority: P1, team: gpu-infra}
"""

MEANT = r"did you mean '([^']+)'"


@dataclass(frozen=True)
class Mistake:
    name: str
    config: str
    written: str  # a piece of the config as the docs would have it
    mistaken: str  # ... as the mistake writes it
    wrong: str  # the part of `mistaken` the suggestion replaces
    suggestion: str  # reads the suggested value(s) out of the message
    said: Literal["refused", "warned"] = "refused"


MISTAKES = [
    # silent passes: alerts that could never fire, or fire twice
    Mistake("window team typo", FLEET, "teams: [gpu-infra]}\n", "teams: [gpu-infa]}\n", "gpu-infa", MEANT),
    Mistake(
        "SLO glob selecting nothing",
        FLEET,
        'gpu-wait, match: ["*-gpu-*"]',
        'gpu-wait, match: ["*-gpu*-"]',
        "*-gpu*-",
        MEANT,
    ),
    Mistake("SLO for an unknown team", FLEET, "10m, team: gpu-infra}", "10m, team: gpu-infa}", "gpu-infa", MEANT),
    Mistake(
        "SLO counting an unknown team", FLEET, "10m, team: gpu-infra}", "10m, teams: [gpu-infa]}", "gpu-infa", MEANT
    ),
    Mistake(
        "P1 rule copied and left at P2, one team",
        FLEET,
        "priority: P1, team: gpu-infra}",
        "priority: P2}",
        "P2",
        r"write priority: (P\d) in rule 'gpu-queueing'",
    ),
    Mistake(
        "P1 rule copied and left at P2, another team",
        FLEET,
        "priority: P1, team: gpu-infra}",
        "priority: P2, team: gpu-infra}",
        "P2",
        r"write priority: (P\d) in rule 'gpu-queueing'",
        "warned",
    ),
    Mistake(
        "discovery-only rule whose glob selects nothing",
        DISCOVERED,
        'gpu-queueing, match: ["linux-gpu-*"]',
        'gpu-queueing, match: ["linux-gup-*"]',
        "linux-gup-*",
        MEANT,
    ),
    Mistake(
        "SLO window under the 72h ticket pair",
        FLEET,
        "10m, team",
        "10m, window: 2d, team",
        "2d",
        r"write window: (\d+d)",
    ),
    # a near-miss glob is a near miss, not an overlap on a name made up from it ('x-gup-x')
    Mistake(
        "GPU glob typo beside discovery",
        NAMED_AND_DISCOVERED,
        'match: ["*-gpu-*"], team',
        'match: ["*-gup-*"], team',
        "*-gup-*",
        MEANT,
    ),
    # messages whose fix was wrong or missing
    Mistake("unquoted clock", FLEET, 'start: "02:00"', "start: 22:00", "22:00", r'write start: ("\d\d:\d\d")'),
    Mistake(
        "unquoted clock past 23:59", FLEET, 'start: "02:00"', "start: 25:00", "25:00", r'such as start: ("\d\d:\d\d")'
    ),
    Mistake("objective without %", FLEET, "objective: 99%", "objective: 99", "99", r"write objective: (\S+) or (\S+)"),
    Mistake(
        "window's rule typo",
        FLEET,
        "teams: [gpu-infra]}\n",
        "rules: [gpu-queuing]}\n",
        "gpu-queuing",
        MEANT,
    ),
    Mistake("time zone without its _", FLEET, "Europe/Berlin", "America/NewYork", "America/NewYork", r"mean (\S+)\?"),
    Mistake("weeks", FLEET, "10m, team", "10m, window: 4w, team", "4w", r"did you mean (\d+d)\?"),
    # a forecast that can never page ahead, or that has nothing to read
    Mistake(
        "forecast on a rule with no queue_time",
        FORECASTING,
        "thresholds: {queue_time: 5m}, forecast: 10m}",
        "thresholds: {queue_size: 5}, forecast: 10m}",
        "{queue_size: 5}",
        r"such as thresholds: (\{[^}]*\})",
    ),
    Mistake(
        "forecast from defaults.rule on a rule with no queue_time",
        FORECASTING.replace("rule: {team: ci}", "rule: {team: ci, forecast: 10m}"),
        'gpu-queueing, match: ["*-gpu-*"], thresholds: {queue_time: 30m}',
        'gpu-queueing, match: ["*-gpu-*"], thresholds: {queue_size: 3}',
        "{queue_size: 3}",
        r"write thresholds: (\{[^}]*\})",
        "warned",
    ),
]


def said(text: str) -> tuple[Literal["refused", "warned"], list[ConfigProblem]]:
    try:
        checked: CheckedConfig = parse_checked(text, "fleet.yaml")
    except ConfigError as error:
        return "refused", error.problems
    return "warned", checked.warnings


@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.name for m in MISTAKES])
def test_each_mistake_is_said_at_its_line_and_the_fix_it_suggests_is_accepted(
    mistake: Mistake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert said(mistake.config) == ("warned", [])  # the config as written is clean
    assert mistake.written in mistake.config and mistake.wrong in mistake.mistaken
    text = mistake.config.replace(mistake.written, mistake.mistaken, 1)
    how, problems = said(text)
    assert (how, len(problems)) == (mistake.said, 1), problems
    [problem] = problems
    line = next(n for n, row in enumerate(text.splitlines(), 1) if mistake.mistaken.splitlines()[0] in row)
    assert problem.line == line, problem
    found = re.search(mistake.suggestion, problem.message)
    assert found, problem.message
    for suggested in found.groups():
        fixed = text.replace(mistake.mistaken, mistake.mistaken.replace(mistake.wrong, suggested), 1)
        assert said(fixed) == ("warned", []), (suggested, said(fixed))
        written = tmp_path / "fleet.yaml"
        written.write_text(fixed, encoding="utf-8")
        assert main(["check-config", str(written)]) == 0  # as the command takes it
        assert "warning" not in capsys.readouterr().err


def test_a_near_miss_glob_is_never_reported_as_an_overlap_on_a_name_it_invents() -> None:
    text = NAMED_AND_DISCOVERED.replace('match: ["*-gpu-*"], team', 'match: ["*-gup-*"], team')
    _, problems = said(text)
    assert not [p for p in problems if "overlaps" in p.message or "x-gup-x" in p.message], problems


def test_an_slo_counting_a_team_only_rules_have_is_refused_since_a_jobs_team_is_its_runner_types() -> None:
    text = FLEET.replace("10m, team: gpu-infra}", "10m, teams: [ci]}")  # ci: defaults.rule's, no runner type's
    how, [problem] = said(text)
    assert how == "refused" and "counts the jobs of team 'ci'" in problem.message
    assert problem.message.endswith("expected one of gpu-infra")
