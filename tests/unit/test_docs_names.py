"""Docs that cannot drift: every `queuewatch` command and flag the README and docs/ write is one `queuewatch
--help` (each subcommand's) knows, every `make` target one the Makefile has, and every stack parameter or
output they name is one of template.yaml's Parameters or Outputs."""

from __future__ import annotations

import argparse
import re
from functools import cache
from pathlib import Path

import pytest
from support import load_template

from queuewatch_cli.main import build_parser

ROOT = Path(__file__).parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMAND = re.compile(r"(?:^|(?<=[\s(]))queuewatch((?:\s+[a-z][a-z0-9-]*)+)(?P<rest>[^`|;&)]*)")
SPAN = re.compile(r"`([^`]+)`")
MONITOR_TITLE = "queuewatch monitor degraded"  # the monitor page's title (evaluate/page.py), not a command
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
MAKE = re.compile(r"(?<![\w-])make ([a-z][a-z0-9-]*)")
ASSIGNED = re.compile(r"\b([A-Z][a-z0-9]+(?:[A-Z][a-zA-Z0-9]*)+)=")  # --parameter-overrides Name=value
NAMED = re.compile(
    r"`([A-Z][a-z0-9]+(?:[A-Z][a-zA-Z0-9]*)+)`(?= (?:parameter|output)s?\b)"  # `Name` parameter
    r"|\b(?:parameters?|outputs?) `([A-Z][a-z0-9]+(?:[A-Z][a-zA-Z0-9]*)+)`"  # the parameter `Name`
)
TABLE_ROW = re.compile(r"^\| `([A-Z][A-Za-z0-9]*)` \|")


def lines(doc: Path) -> list[tuple[int, str]]:
    """The doc's lines, a shell line continued with '\\' joined to the next (numbered by its first)."""
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        first, text = (pending[0], pending[1] + " " + line.strip()) if pending else (number, line)
        pending = (first, text[:-1]) if text.endswith("\\") else None
        if pending is None:
            out.append((first, text))
    return out


def code(doc: Path) -> list[tuple[int, str]]:
    """What the doc writes as code: its fenced blocks' lines and its `spans`, where commands are written."""
    out: list[tuple[int, str]] = []
    fenced = False
    for number, text in lines(doc):
        if text.lstrip().startswith("```"):
            fenced = not fenced
            continue
        out += [(number, text)] if fenced else [(number, span) for span in SPAN.findall(text)]
    return out


@cache
def commands() -> dict[tuple[str, ...], set[str]]:
    """Each command path (`("silence", "add")`) and the flags its --help lists."""
    found: dict[tuple[str, ...], set[str]] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        found[path] = {option for action in parser._actions for option in action.option_strings}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


def command_of(words: list[str]) -> tuple[str, ...]:
    """The longest known command path the words start with."""
    path: tuple[str, ...] = ()
    for word in words:
        if (*path, word) not in commands():
            break
        path = (*path, word)
    return path


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_queuewatch_command_and_flag_the_docs_write_is_one_the_command_knows(doc: Path) -> None:
    wrong = []
    for number, text in code(doc):
        for found in COMMAND.finditer(text.replace(MONITOR_TITLE, "")):
            words = found[1].split()
            path = command_of(words)
            if not path:
                wrong.append(f"line {number}: queuewatch {words[0]}: no such command")
                continue
            if len(words) > len(path):
                subcommands = sorted({p[len(path)] for p in commands() if len(p) > len(path) and p[:-1] == path})
                if subcommands and words[len(path)] not in subcommands:
                    wrong.append(f"line {number}: queuewatch {' '.join(words)}: expected one of {subcommands}")
            flags = FLAG.findall(" ".join(words[len(path) :]) + found["rest"])
            unknown = [flag for flag in flags if flag not in commands()[path]]
            if unknown:
                wrong.append(f"line {number}: queuewatch {' '.join(path)}: {', '.join(unknown)} unknown to its --help")
    assert not wrong, f"{doc.name}:\n" + "\n".join(wrong)


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([a-z][a-z0-9-]*):", text, re.MULTILINE))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_make_target_the_docs_name_is_one_the_makefile_has(doc: Path) -> None:
    targets = make_targets()
    wrong = [
        f"line {number}: make {target}"
        for number, text in code(doc)
        for target in MAKE.findall(text)
        if target not in targets
    ]
    assert not wrong, f"{doc.name} names make targets the Makefile does not have: {wrong}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_stack_parameter_and_output_the_docs_name_is_in_the_template(doc: Path) -> None:
    template = load_template()
    known = set(template["Parameters"]) | set(template["Outputs"])
    named = []
    for number, text in lines(doc):
        names = ASSIGNED.findall(text) if "parameter-overrides" in text or "ParameterKey" in text else []
        names += [a or b for a, b in NAMED.findall(text)]
        names += TABLE_ROW.findall(text) if parameter_table(doc, number) else []
        named += [(number, name) for name in names]
    wrong = [f"line {number}: {name}" for number, name in named if name not in known]
    assert not wrong, f"{doc.name} names stack parameters or outputs template.yaml does not have: {wrong}"


def parameter_table(doc: Path, number: int) -> bool:
    """Whether line `number` is a row of a table whose first column is headed 'parameter' or 'output'."""
    text = doc.read_text(encoding="utf-8").splitlines()
    index = number - 1
    while index > 0 and text[index - 1].startswith("|"):
        index -= 1
    header = text[index].lower()
    return header.startswith(("| parameter", "| output"))


def test_the_docs_name_every_subcommand_and_the_top_level_help_lists_each() -> None:
    parser = build_parser()
    top = {path[0] for path in commands() if path}
    said = parser.format_help()
    description = (parser.description or "").lower()
    for command in top - {"stage-config", "stage-dashboard"}:  # the build's own steps, said by `make build`
        assert command in said
        words = {"check-config": "config checks", "backtest": "backtests", "silence": "silences"}
        assert words.get(command, command) in description, f"the top-level --help's description omits {command}"
    text = "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)
    unsaid = [command for command in sorted(top) if f"queuewatch {command}" not in text]
    assert not unsaid, f"no doc shows these commands: {unsaid}"


def test_the_operations_guide_lists_every_stack_parameter_with_the_templates_default() -> None:
    doc = ROOT / "docs" / "operations.md"
    rows = {}
    for number, text in lines(doc):
        found = TABLE_ROW.match(text)
        if found and parameter_table(doc, number):
            rows[found[1]] = text.split("|")[2].strip()
    wrong = []
    for name, parameter in load_template()["Parameters"].items():
        default = str(parameter.get("Default", ""))
        if name not in rows:
            wrong.append(f"{name}: not in the parameter table")
        elif default == "" and not rows[name].startswith("empty"):
            wrong.append(f"{name}: the table says {rows[name]!r}, the template's default is empty")
        elif default and default not in rows[name]:
            wrong.append(f"{name}: the table says {rows[name]!r}, the template's default is {default!r}")
    assert not wrong, wrong


def stack_actions() -> dict[tuple[str, ...], argparse.Action]:
    """Each command path's --stack option, where it has one."""
    found: dict[tuple[str, ...], argparse.Action] = {}

    def walk(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        for action in parser._actions:
            if "--stack" in action.option_strings:
                found[path] = action
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, (*path, name))

    walk(build_parser(), ())
    return found


def test_every_operator_command_the_readme_lists_finds_its_stack_by_name_as_it_says() -> None:
    """The README's Operate section: every operator command (its IAM table's) takes --stack, and a command it
    names as an exception (`Every operator command but X`) does not."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    operate = readme[readme.index("\n## Operate\n") : readme.index("\n## Read on\n")]
    table = operate[operate.index("| command | actions |") :].split("\n\n")[0]
    listed = {
        command_of(span.split())
        for row in table.splitlines()[2:]
        for span in SPAN.findall(row.split("|")[1])
        if span != "--stack"
    }
    said = " ".join(operate.split())
    claim = re.search(r"Every operator command(?: but ((?:`[^`]+`(?:, | and )?)+))?", said)
    assert claim is not None, "the Operate section no longer says which commands find a stack by name"
    exceptions = {command_of(span.split()) for span in SPAN.findall(claim[1] or "")}
    assert listed and exceptions <= listed
    actions = stack_actions()
    for path in sorted(listed):
        has = path in actions
        assert has != (path in exceptions), f"queuewatch {' '.join(path)}: --stack {has}, the README says otherwise"
