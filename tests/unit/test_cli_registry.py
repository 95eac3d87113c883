"""The command line is its registry: every command registered once, and the parser made of those alone."""

from __future__ import annotations

import argparse

import pytest

from queuewatch_cli.common.command import Command
from queuewatch_cli.main import BY_NAME, build_parser
from queuewatch_cli.registry import COMMANDS


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_command_has_a_name_of_its_own() -> None:
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    assert all(isinstance(command, Command) for command in COMMANDS)
    assert {command.name: command for command in COMMANDS} == BY_NAME


def test_the_parsers_commands_are_the_registrys_in_its_order() -> None:
    # A command added to the parser outside the registry, or registered and not parsed, fails here.
    assert list(subcommands(build_parser())) == [command.name for command in COMMANDS]
    assert {"check-config", "demo", "local", "status", "backtest", "capacity", "silence"} <= set(BY_NAME)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command.name)
def test_each_command_parses_its_own_flags_and_says_what_it_does(command: Command) -> None:
    parser = subcommands(build_parser())[command.name]
    assert command.help and parser.prog == f"queuewatch {command.name}"
    alone = argparse.ArgumentParser(prog="queuewatch")
    made = command.add_to(alone.add_subparsers(dest="command"))
    assert [a.dest for a in made._actions] == [a.dest for a in parser._actions]  # the flags travel with the command
