"""Loading the config file: YAML with every key's line, and errors a person can act on.

Every problem is reported at once, with the file, the line, the key path, what
was found and what was expected; a config with any problem is rejected whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from queuewatch.base.durations import WRITTEN
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.wording import plural
from queuewatch.config.coverage import coverage_findings
from queuewatch.config.forecast import forecast_findings
from queuewatch.config.limits import MAX_BYTES, fleet_problem, size_message, text_problem, tree_problem
from queuewatch.config.lint import cross_checks, label_set_problems, rule_coverage_problems
from queuewatch.config.messages import translator
from queuewatch.config.schema import (
    Config,
    Defaults,
    DiscoverySpec,
    MonitorSettings,
    QueueRef,
    RuleSpec,
    RunnerTypeSpec,
    Thresholds,
    TriageSettings,
)
from queuewatch.config.silent import silent_findings
from queuewatch.config.sources import MetricQuery
from queuewatch.model.signals import SignalName


@dataclass(frozen=True)
class ConfigProblem:
    key_path: str
    message: str
    line: int | None = None


def in_line_order(problems: list[ConfigProblem]) -> list[ConfigProblem]:
    """In the order of the file's lines, as a reader fixes them (stable: one line's keep the order found)."""
    return sorted(problems, key=lambda problem: (problem.line is None, problem.line or 0))


class ConfigError(QueuewatchError):
    """The config file is unusable; every problem found is listed, and nothing was applied."""

    def __init__(self, source: str, problems: list[ConfigProblem]) -> None:
        self.source = source
        self.problems = in_line_order(problems)
        super().__init__(self._render() + "; the config was not applied" + self._listed())

    def checked(self) -> str:
        """The problems as a check reports them: a check applies nothing, so it says nothing of applying."""
        return self._render() + self._listed()

    def _render(self) -> str:
        return f"{self.source}: {plural(len(self.problems), 'problem')}"

    def _listed(self) -> str:
        lines = [""]
        for problem in self.problems:
            where = f"{self.source}:{problem.line}" if problem.line else self.source
            lines.append(f"  {where}: {problem.key_path or '(top level)'}: {problem.message}")
        return "\n".join(lines)


@dataclass(frozen=True)
class CheckedConfig:
    """A config that loaded, and what check-config says of it that might be meant (warnings never fail)."""

    config: Config
    warnings: list[ConfigProblem]
    source: str

    def render_warnings(self) -> list[str]:
        return [
            f"{self.source}:{w.line}: {w.key_path}: warning: {w.message}"
            if w.line
            else f"{self.source}: warning: {w.message}"
            for w in self.warnings
        ]


def load_config(path: str | Path) -> Config:
    return check_config_file(path).config


def check_config_file(path: str | Path) -> CheckedConfig:
    path = Path(path)
    source = str(path)
    try:
        with path.open("rb") as file:
            raw = file.read(MAX_BYTES + 1)  # never more: a huge file is refused without reading it all
    except OSError as error:
        raise ConfigError(source, [ConfigProblem("", f"cannot read the file: {error.strerror}")]) from error
    if len(raw) > MAX_BYTES:
        raise ConfigError(source, [ConfigProblem("", size_message(path.stat().st_size))])
    return check_config_bytes(raw, source)


def check_config_bytes(raw: bytes, source: str) -> CheckedConfig:
    """The config in these bytes, checked: what a build then ships is these very bytes, not the file again."""
    if len(raw) > MAX_BYTES:
        raise ConfigError(source, [ConfigProblem("", size_message(len(raw)))])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = raw.rfind(b"\n", 0, error.start) + 1
        line = raw.count(b"\n", 0, error.start) + 1
        column = len(raw[line_start : error.start].decode("utf-8", "replace")) + 1
        found = raw[error.start : error.end].hex(" ")
        raise ConfigError(
            source, [ConfigProblem("", f"found byte(s) {found} at column {column}, expected UTF-8 text", line)]
        ) from error
    return parse_checked(text, source=source)


# libyaml's loader when PyYAML has it (its wheels do): the same safe loading, ~10x faster on a large fleet.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_config(text: str, source: str = "<config>") -> Config:
    return parse_checked(text, source).config


def parse_checked(text: str, source: str = "<config>") -> CheckedConfig:
    too_big = text_problem(text)
    if too_big:
        raise ConfigError(source, [ConfigProblem("", too_big[0], too_big[1])])
    loader = _SAFE_LOADER(text)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as error:
        loader.dispose()
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(source, [ConfigProblem("", f"YAML syntax error: {problem}", line)]) from error
    if node is None:
        loader.dispose()
        raise ConfigError(
            source, [ConfigProblem("", "the file is empty; expected a mapping with 'version' and 'rules'")]
        )
    # Before anything walks or builds the tree: aliases can make it a billion nodes.
    unsafe = tree_problem(node) or fleet_problem(node)
    if unsafe:
        loader.dispose()
        where, message, line = unsafe
        raise ConfigError(source, [ConfigProblem(_render_path(where), message, line)])
    lines: dict[tuple[str | int, ...], int] = {}
    duplicates = list(_index_lines(node, (), lines))
    try:
        if duplicates:
            raise ConfigError(source, duplicates)
        data = loader.construct_document(node)  # the parsed tree again, not the text: one parse
    except yaml.YAMLError as error:  # a tag the safe loader refuses, such as !!python/object
        raise ConfigError(source, [ConfigProblem("", f"YAML error: {error}", node.start_mark.line + 1)]) from error
    finally:
        loader.dispose()
    if data is None:
        raise ConfigError(
            source, [ConfigProblem("", "the file is empty; expected a mapping with 'version' and 'rules'")]
        )
    if not isinstance(data, dict):
        raise ConfigError(source, [ConfigProblem("", f"found {type(data).__name__}, expected a mapping at the top")])
    # Checks across entries run on the raw data too, so they are reported beside any field errors.
    across = [ConfigProblem(_render_path(loc), message, _line_of(loc, lines)) for loc, message in cross_checks(data)]
    try:
        config = Config.model_validate(data, context={WRITTEN: True})
    except ValidationError as error:
        raise ConfigError(source, [_problem(e, lines) for e in error.errors()] + across) from error
    if across:  # the checks below read the rules resolved, which these problems leave incomplete
        raise ConfigError(source, across)
    across += [
        ConfigProblem(_render_path(loc), message, _line_of(loc, lines))
        for loc, message in [*rule_coverage_problems(config), *label_set_problems(config)]
    ]
    findings = [*coverage_findings(config), *silent_findings(config), *forecast_findings(config)]
    across += [
        ConfigProblem(_render_path(f.location), f.message, _line_of(f.location, lines))
        for f in findings
        if f.severity == "error"
    ]
    if across:
        raise ConfigError(source, across)
    warnings = [
        ConfigProblem(_render_path(f.location), f.message, _line_of(f.location, lines))
        for f in findings
        if f.severity == "warning"
    ]
    return CheckedConfig(config, in_line_order(warnings), source)


def _line_of(loc: tuple[str | int, ...], lines: Mapping[tuple[str | int, ...], int]) -> int | None:
    return next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), None)


def _index_lines(
    node: yaml.Node, path: tuple[str | int, ...], lines: dict[tuple[str | int, ...], int]
) -> Iterator[ConfigProblem]:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in seen:
                yield ConfigProblem(
                    _render_path((*path, key)), "duplicate key; each key may appear once", key_node.start_mark.line + 1
                )
            seen.add(key)
            lines[(*path, key)] = key_node.start_mark.line + 1
            yield from _index_lines(value_node, (*path, key), lines)
            lines[(*path, key)] = key_node.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _index_lines(item, (*path, index), lines)


def _render_path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_MODELS = (
    Config,
    Defaults,
    RunnerTypeSpec,
    DiscoverySpec,
    QueueRef,
    MetricQuery,
    RuleSpec,
    Thresholds,
    MonitorSettings,
    TriageSettings,
)
_translate = translator(_MODELS)


def _known_keys() -> set[str]:
    keys: set[str] = set()
    for model in _MODELS:
        for name, field in model.model_fields.items():
            keys.add(field.alias or name)
    return keys | {s.value for s in SignalName}


PATH_SETTINGS = ("job_retry", "dead_letter")  # defaults.<these>: the autoscaler's other queues (demand_paths.py)
_PATH_FORECAST = (
    "{where} has no forecast: the forecast predicts the build queue's jobs waiting for a runner, while the "
    "job-retry and dead-letter queues page on what they hold; expected forecast: on a rule with a queue_time "
    "(rules[].forecast or defaults.rule.forecast), and none here"
)


def _problem(error: Any, lines: Mapping[tuple[str | int, ...], int]) -> ConfigProblem:
    # Drop pydantic's union-branch labels ("literal['sqs']", "MetricQuery") from the path.
    loc = tuple(
        p
        for p in error["loc"]
        if not (isinstance(p, str) and (p[:1].isupper() or p.startswith(("literal[", "function-"))))
    )
    line = _line_of(loc, lines)
    import difflib  # only bad files need suggestions: kept off the cold start

    kind = error["type"]
    if kind == "extra_forbidden":
        unknown = str(loc[-1])
        if unknown == "forecast" and len(loc) > 1 and loc[-2] in PATH_SETTINGS:
            return ConfigProblem(_render_path(loc), _PATH_FORECAST.format(where=_render_path(loc[:-1])), line)
        close = difflib.get_close_matches(unknown, sorted(_known_keys()), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close and close[0] != unknown else ""
        elsewhere = "; it is a key elsewhere in the config, not here" if unknown in _known_keys() else ""
        return ConfigProblem(_render_path(loc), f"unknown key {unknown!r}{hint or elsewhere}", line)
    if kind == "missing":
        return ConfigProblem(_render_path(loc), "required key is missing", line)
    if "[key]" in loc:
        loc = loc[: loc.index("[key]")]
        found = str(loc[-1])
        names = sorted(s.value for s in SignalName)
        close = difflib.get_close_matches(found, names, n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return ConfigProblem(
            _render_path(loc), f"unknown signal {found!r}; {hint}expected one of {', '.join(names)}", line
        )
    translated = _translate(error, str(loc[-1]) if loc else "")
    if translated:
        return ConfigProblem(_render_path(loc), translated, line)
    message = str(error["msg"]).removeprefix("Value error, ")
    # A check across a list entry's keys names those keys: the whole entry is not repeated back.
    whole_entry = isinstance(error.get("input"), Mapping) and bool(loc) and isinstance(loc[-1], int)
    if not whole_entry and "found" not in message and not message.startswith(str(error.get("input")).strip()[:12]):
        message = f"found {error.get('input')!r}: {message}"
    return ConfigProblem(_render_path(loc), message, line)
