"""What a command registers: its name and help, its flags, and what runs it. main.py builds the parser from the
registry's list of these (registry.py) and runs the one named on the command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def add_to(self, commands: argparse._SubParsersAction[Any]) -> argparse.ArgumentParser:
        """This command's subparser, with its flags, in a parser's subcommands."""
        parser: argparse.ArgumentParser = commands.add_parser(self.name, help=self.help)
        self.add_arguments(parser)
        return parser
