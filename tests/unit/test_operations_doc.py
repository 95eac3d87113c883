"""docs/operations.md's on-call's day is real output of real commands: each command it shows still parses."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from queuewatch_cli.main import build_parser

DOC = Path(__file__).parents[2] / "docs" / "operations.md"


def day_commands() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## An on-call's day", 1)[1].split("\n## ", 1)[0]
    return [line[2:] for line in section.splitlines() if line.startswith("$ queuewatch ")]


def test_the_day_shows_the_commands_an_on_call_uses() -> None:
    commands = day_commands()
    assert {shlex.split(c)[1] for c in commands} == {"status", "history", "silence"}
    assert {shlex.split(c)[2] for c in commands if c.startswith("queuewatch silence")} == {
        "add",
        "list",
        "expire",
        "extend",
    }
    assert any("--alert" in c for c in commands) and any("--start" in c for c in commands)


@pytest.mark.parametrize("command", day_commands())
def test_each_command_of_the_day_parses(command: str) -> None:
    build_parser().parse_args(shlex.split(command)[1:])
