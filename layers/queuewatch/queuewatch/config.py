"""The config file: runner types, where each signal comes from, and the alert rules.

The file is YAML with a `version`. It is validated whole before anything uses it;
every problem is reported with the file, the key path, the line, what was found
and what was expected, and a config with any problem is rejected whole.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from queuewatch.durations import Duration, format_duration

CONFIG_VERSION = 1
RESERVED_RULE = "queuewatch-health"
# Health instances share the runner types' key space (`queuewatch-health#<name>`): "collector" stands
# for collection itself, so no runner type may take it. ("discovery:<region>" has a ':', which no
# runner type name can hold.)
COLLECTOR_INSTANCE = "collector"
RESERVED_RUNNER_TYPES = frozenset({COLLECTOR_INSTANCE})

_REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d$")
_QUEUE_NAME = re.compile(r"^(?=.{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$")
_QUEUE_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?/(?P<account>\d{12})/(?P<name>[^/]+)$")
_SQS_HOST_REGION = re.compile(r"^https?://sqs\.(?P<region>[a-z0-9-]+)\.amazonaws\.com")
_RUNNER_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_RULE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_STAT = re.compile(r"^(SampleCount|Average|Sum|Minimum|Maximum|p\d{1,2}(\.\d+)?|tm\d{1,2}|IQM)$")
_ACCOUNT = re.compile(r"^\d{12}$")


def _check_region(value: str) -> str:
    if not _REGION.match(value):
        raise ValueError(f"found {value!r}, expected an AWS region such as us-east-1")
    return value


def _check_account(value: str) -> str:
    if not _ACCOUNT.match(value):
        raise ValueError(f"found {value!r}, expected a 12-digit AWS account id")
    return value


Region = Annotated[str, AfterValidator(_check_region)]
AccountId = Annotated[str, AfterValidator(_check_account)]


class SignalName(StrEnum):
    """Everything the collector can read for a runner type."""

    QUEUE_SIZE = "queue_size"  # jobs waiting: SQS visible + in flight + delayed, or a metric
    QUEUE_TIME = "queue_time"  # age of the oldest queued job, seconds
    TOTAL_RUNNERS = "total_runners"
    BUSY_RUNNERS = "busy_runners"
    IDLE_RUNNERS = "idle_runners"
    MAX_RUNNERS = "max_runners"  # the autoscaler's maximum for the runner type
    MAX_HIT = "max_hit"  # the autoscaler's own "reached maximum" count
    CREATION_FAILURES = "creation_failures"
    JOB_ARRIVALS = "job_arrivals"
    JOBS_DEQUEUED = "jobs_dequeued"  # the scale-up consumer's throughput
    JOB_DURATION = "job_duration"
    EC2_EXCEPTIONS = "ec2_exceptions"  # RunInstances errors, one query per exception name


TIME_SIGNALS = frozenset({SignalName.QUEUE_TIME, SignalName.JOB_DURATION})
COUNT_SIGNALS = frozenset(
    {
        SignalName.JOB_ARRIVALS,
        SignalName.JOBS_DEQUEUED,
        SignalName.CREATION_FAILURES,
        SignalName.MAX_HIT,
        SignalName.EC2_EXCEPTIONS,
    }
)
"""Events per period: the triage sums them over its window and compares with their baseline."""
EXCEPTION_PLACEHOLDER = "{exception}"
SQS_SOURCE: Literal["sqs"] = "sqs"
"""A signal read from the queue itself: its attributes, or its AWS/SQS metric."""

# The AWS/SQS metric behind each signal whose source is `sqs`; queue size is read
# from GetQueueAttributes instead, since it is exact and current.
SQS_METRICS: Mapping[SignalName, tuple[str, str]] = {
    SignalName.QUEUE_TIME: ("ApproximateAgeOfOldestMessage", "Maximum"),
    SignalName.JOB_ARRIVALS: ("NumberOfMessagesSent", "Sum"),
    SignalName.JOBS_DEQUEUED: ("NumberOfMessagesDeleted", "Sum"),
}


class Priority(StrEnum):
    P0 = "P0"
    P1 = "P1"
    P2 = "P2"
    P3 = "P3"

    @property
    def severity(self) -> str:
        return {"P0": "critical", "P1": "critical", "P2": "warning", "P3": "info"}[self.value]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class MetricQuery(_Strict):
    """One CloudWatch metric: any namespace, name, dimensions and statistic.

    Dimension values may say `{runner_type}`, filled in per runner type, so one
    query in `defaults.signals` serves a whole fleet.
    """

    namespace: str = Field(min_length=1, max_length=255)
    metric: str = Field(min_length=1, max_length=255)
    dimensions: dict[str, str] = Field(default_factory=dict, max_length=30)
    stat: str = "Maximum"
    period: Duration = 60
    unit: Literal["count", "seconds", "minutes", "hours"] = "count"
    region: Region | None = None
    missing: Literal["no_data", "zero"] = Field(
        default="no_data",
        description="what no datapoint means: 'no_data', or 'zero' for metrics published only when non-zero",
    )
    exceptions: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="ec2_exceptions only: the exception names to read, each filled in for '{exception}'",
    )

    @field_validator("stat")
    @classmethod
    def _known_stat(cls, value: str) -> str:
        if not _STAT.match(value):
            raise ValueError(f"found {value!r}, expected a CloudWatch statistic such as Maximum, Sum, Average or p99")
        return value

    @field_validator("period")
    @classmethod
    def _valid_period(cls, value: int) -> int:
        if value <= 0 or (value % 60 and value not in (1, 5, 10, 30)):
            raise ValueError(f"found {value}s, expected 1s, 5s, 10s, 30s or a multiple of 60s")
        return value

    @field_validator("exceptions")
    @classmethod
    def _exception_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.match(r"^[A-Za-z0-9._:-]{1,128}$", name):
                raise ValueError(f"found {name!r}, expected an exception name such as InsufficientInstanceCapacity")
        return value

    def for_runner_type(self, runner_type: str) -> MetricQuery:
        return self.model_copy(
            update={"dimensions": {k: v.replace("{runner_type}", runner_type) for k, v in self.dimensions.items()}}
        )

    def for_exception(self, name: str) -> MetricQuery:
        return self.model_copy(
            update={
                "metric": self.metric.replace(EXCEPTION_PLACEHOLDER, name),
                "dimensions": {k: v.replace(EXCEPTION_PLACEHOLDER, name) for k, v in self.dimensions.items()},
            }
        )

    @property
    def per_runner_type(self) -> bool:
        """False for a fleet-wide metric: one that names no runner type."""
        return any("{runner_type}" in v for v in self.dimensions.values())

    @property
    def names_exception(self) -> bool:
        return EXCEPTION_PLACEHOLDER in self.metric or any(EXCEPTION_PLACEHOLDER in v for v in self.dimensions.values())

    @property
    def seconds_per_unit(self) -> int:
        return {"count": 1, "seconds": 1, "minutes": 60, "hours": 3600}[self.unit]


SignalSource = Literal["sqs"] | MetricQuery


def _check_signal_sources(signals: dict[SignalName, SignalSource]) -> dict[SignalName, SignalSource]:
    for name, source in signals.items():
        if source == SQS_SOURCE and name not in SQS_METRICS and name != SignalName.QUEUE_SIZE:
            raise ValueError(
                f"signal {name.value!r} cannot come from 'sqs'; expected a metric query "
                "(only queue_size, queue_time, job_arrivals and jobs_dequeued can)"
            )
        if not isinstance(source, MetricQuery):
            continue
        if name == SignalName.EC2_EXCEPTIONS and not (source.exceptions and source.names_exception):
            lacking = "no 'exceptions' list" if not source.exceptions else "no '{exception}' placeholder"
            raise ValueError(
                f"signal 'ec2_exceptions': found {lacking}; expected 'exceptions: [names]' and '{{exception}}' "
                "in the metric name or a dimension value, such as dimensions: {Exception: '{exception}'}"
            )
        if name != SignalName.EC2_EXCEPTIONS and (source.exceptions or source.names_exception):
            raise ValueError(
                f"signal {name.value!r}: found 'exceptions' or '{{exception}}', which only ec2_exceptions takes"
            )
    return signals


Signals = Annotated[dict[SignalName, SignalSource], AfterValidator(_check_signal_sources)]


class QueueRef(_Strict):
    """The autoscaler's queue for one runner type: by name (with region) or by URL."""

    name: str | None = None
    url: str | None = None
    region: Region | None = None
    account_id: AccountId | None = None

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str | None) -> str | None:
        if value is not None and not _QUEUE_NAME.match(value):
            raise ValueError(
                f"found {value!r}, expected an SQS queue name: 1 to 80 letters, digits, '-' or '_', "
                "with an optional '.fifo' ending"
            )
        return value

    @field_validator("url")
    @classmethod
    def _valid_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        match = _QUEUE_URL.match(value)
        if not match or not _QUEUE_NAME.match(match["name"]):
            raise ValueError(
                f"found {value!r}, expected a queue URL such as "
                "https://sqs.us-east-1.amazonaws.com/123456789012/my-queue"
            )
        return value

    @model_validator(mode="after")
    def _name_or_url(self) -> QueueRef:
        if (self.name is None) == (self.url is None):
            raise ValueError("expected exactly one of 'name' or 'url'")
        if self.url and self.account_id:
            raise ValueError("'account_id' goes with 'name'; a URL already names its account")
        return self

    @property
    def queue_name(self) -> str:
        if self.name is not None:
            return self.name
        match = _QUEUE_URL.match(self.url or "")
        assert match  # checked by the validator
        return match["name"]

    def region_or(self, default: str) -> str:
        if self.region:
            return self.region
        host = _SQS_HOST_REGION.match(self.url or "")
        return host["region"] if host else default


class RunnerTypeSpec(_Strict):
    name: str
    queue: QueueRef
    team: str | None = None
    signals: Signals = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not _RUNNER_TYPE.match(value):
            raise ValueError(
                f"found {value!r}, expected a runner type name of letters, digits, '.', '_' or '-' (at most 128)"
            )
        if value in RESERVED_RUNNER_TYPES:
            raise ValueError(
                f"found {value!r}, which queuewatch reserves for its own health page ({RESERVED_RULE}#{value}); "
                "expected another name (the queue keeps its own)"
            )
        return value


class DiscoverySpec(_Strict):
    """Watch every queue whose name matches a pattern; the pattern's `{runner_type}` names it.

    `match` and `exclude` (runner type globs) keep only some of the runner types found, so that
    collectors can split one fleet between them (docs/SCALE_OUT.md).
    """

    queue_name_pattern: str
    prefix: str = ""
    region: Region | None = None
    account_id: AccountId | None = None
    team: str | None = None
    signals: Signals = Field(default_factory=dict)
    match: list[str] = Field(default_factory=lambda: ["*"], min_length=1)
    exclude: list[str] = Field(default_factory=list)

    @field_validator("queue_name_pattern")
    @classmethod
    def _one_placeholder(cls, value: str) -> str:
        if value.count("{runner_type}") != 1:
            raise ValueError(
                f"found {value!r}, expected a queue name pattern with one '{{runner_type}}', "
                "such as '{prefix}-{runner_type}-queued-builds'"
            )
        rest = value.replace("{runner_type}", "x").replace("{prefix}", "x")
        if not _QUEUE_NAME.match(rest):
            raise ValueError(f"found {value!r}, expected only letters, digits, '-', '_' around the placeholders")
        return value

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        literal = self.queue_name_pattern.replace("{prefix}", self.prefix)
        before, after = literal.split("{runner_type}")
        return re.compile(f"^{re.escape(before)}(?P<runner_type>[A-Za-z0-9._-]+?){re.escape(after)}$")

    @property
    def name_prefix(self) -> str:
        """The literal start of every matching queue name, for ListQueues' QueueNamePrefix."""
        return self.queue_name_pattern.replace("{prefix}", self.prefix).split("{runner_type}")[0]

    def runner_type_of(self, queue_name: str) -> str | None:
        """The runner type the queue name stands for, if the pattern, `match` and `exclude` select it."""
        found = self._regex.match(queue_name)
        if found is None:
            return None
        name = found["runner_type"]
        if name in RESERVED_RUNNER_TYPES:  # name that queue under runner_types: instead
            return None
        selected = any(fnmatch.fnmatchcase(name, p) for p in self.match) and not any(
            fnmatch.fnmatchcase(name, p) for p in self.exclude
        )
        return name if selected else None


class Thresholds(_Strict):
    """A signal breaches its threshold when its value is above it."""

    queue_time: Duration | None = None
    queue_size: Annotated[int, Field(ge=0)] | None = None


class RuleSettings(_Strict):
    """What a rule may leave to `defaults.rule`."""

    thresholds: Thresholds | None = None
    breach_when: Literal["all", "any"] | None = None
    for_: Duration | None = Field(default=None, alias="for")
    keep_firing_for: Duration | None = None
    repeat_interval: Duration | None = None
    priority: Priority | None = None
    team: str | None = None
    runbook_url: str | None = None
    dashboard_url: str | None = None
    group_by: Literal["all", "team", "runner_type"] | None = None

    @field_validator("runbook_url", "dashboard_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://\S+$", value):
            raise ValueError(f"found {value!r}, expected an http(s) URL")
        return value

    @field_validator("repeat_interval")
    @classmethod
    def _repeat_positive(cls, value: int | None) -> int | None:
        if value is not None and value < 60:
            raise ValueError(f"found {value}s, expected a repeat interval of at least 1m")
        return value


class RuleSpec(RuleSettings):
    name: str
    match: list[str] = Field(default_factory=lambda: ["*"], min_length=1)
    exclude: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not _RULE_NAME.match(value):
            raise ValueError(f"found {value!r}, expected a rule name of lower-case letters, digits and '-'")
        return value


@dataclass(frozen=True)
class Rule:
    """A rule with its defaults applied: every field has a value."""

    name: str
    match: tuple[str, ...]
    exclude: tuple[str, ...]
    queue_time_threshold: int | None
    queue_size_threshold: int | None
    breach_when: Literal["all", "any"]
    pending_for: int
    keep_firing_for: int
    repeat_interval: int
    priority: Priority
    team: str
    runbook_url: str | None
    dashboard_url: str | None
    group_by: Literal["all", "team", "runner_type"]

    def applies_to(self, runner_type: str) -> bool:
        return any(fnmatch.fnmatchcase(runner_type, p) for p in self.match) and not any(
            fnmatch.fnmatchcase(runner_type, p) for p in self.exclude
        )


class MonitorSettings(_Strict):
    """The page queuewatch sends about itself: collection failing, signals missing."""

    priority: Priority = Priority.P3
    team: str | None = None
    for_: Duration = Field(default=300, alias="for")
    repeat_interval: Duration = 14400
    runbook_url: str | None = None


class TriageSettings(_Strict):
    """How far back the triage looks: its window, and the baseline before it that "usual" means."""

    window: Duration = 900
    baseline: Duration = 10800

    @model_validator(mode="after")
    def _spans(self) -> TriageSettings:
        if self.window < 300 or self.window % 60:
            raise ValueError(f"window: found {self.window}s, expected whole minutes, at least 5m")
        if self.baseline % 60 or not 2 * self.window <= self.baseline <= 86400:
            raise ValueError(f"baseline: found {self.baseline}s, expected whole minutes from twice the window to 24h")
        return self


class Defaults(_Strict):
    region: Region = "us-east-1"
    account_id: AccountId | None = None
    metric_lookback: Duration = 600
    signals: Signals = Field(default_factory=dict)
    rule: RuleSettings = RuleSettings()
    triage: TriageSettings = TriageSettings()


BUILTIN_RULE_DEFAULTS: dict[str, Any] = {
    "breach_when": "all",
    "for_": 0,
    "keep_firing_for": 300,
    "repeat_interval": 14400,
    "priority": Priority.P2,
    "team": "ci-infra",
    "group_by": "all",
}


class Config(_Strict):
    version: int
    defaults: Defaults = Defaults()
    runner_types: list[RunnerTypeSpec] = Field(default_factory=list)
    discovery: list[DiscoverySpec] = Field(default_factory=list)
    rules: list[RuleSpec] = Field(min_length=1)
    monitor: MonitorSettings = MonitorSettings()

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != CONFIG_VERSION:
            raise ValueError(f"found {value}, expected version {CONFIG_VERSION}")
        return value

    @cached_property
    def resolved_rules(self) -> tuple[Rule, ...]:
        return tuple(self._resolve(spec) for spec in self.rules)

    def _resolve(self, spec: RuleSpec) -> Rule:
        base = self.defaults.rule

        def pick(field: str) -> Any:
            own = getattr(spec, field)
            if own is not None:
                return own
            inherited = getattr(base, field)
            return inherited if inherited is not None else BUILTIN_RULE_DEFAULTS.get(field)

        thresholds = spec.thresholds or base.thresholds or Thresholds()
        return Rule(
            name=spec.name,
            match=tuple(spec.match),
            exclude=tuple(spec.exclude),
            queue_time_threshold=thresholds.queue_time,
            queue_size_threshold=thresholds.queue_size,
            breach_when=pick("breach_when"),
            pending_for=pick("for_"),
            keep_firing_for=pick("keep_firing_for"),
            repeat_interval=pick("repeat_interval"),
            priority=pick("priority"),
            team=pick("team"),
            runbook_url=pick("runbook_url"),
            dashboard_url=pick("dashboard_url"),
            group_by=pick("group_by"),
        )

    def signals_for(self, own: Mapping[SignalName, SignalSource]) -> dict[SignalName, SignalSource]:
        """Defaults, then the runner type's (or discovery's) own; queue size and time from SQS unless said."""
        merged: dict[SignalName, SignalSource] = {SignalName.QUEUE_SIZE: "sqs", SignalName.QUEUE_TIME: "sqs"}
        merged.update(self.defaults.signals)
        merged.update(own)
        return merged

    def rules_for(self, runner_type: str) -> list[Rule]:
        return [rule for rule in self.resolved_rules if rule.applies_to(runner_type)]


# --- loading, with errors a person can act on -------------------------------------------


@dataclass(frozen=True)
class ConfigProblem:
    key_path: str
    message: str
    line: int | None = None


class ConfigError(Exception):
    """The config file is unusable; every problem found is listed, and nothing was applied."""

    def __init__(self, source: str, problems: list[ConfigProblem]) -> None:
        self.source = source
        self.problems = problems
        super().__init__(self._render())

    def _render(self) -> str:
        lines = [f"{self.source}: {len(self.problems)} problem(s); the config was not applied"]
        for problem in self.problems:
            where = f"{self.source}:{problem.line}" if problem.line else self.source
            lines.append(f"  {where}: {problem.key_path or '(top level)'}: {problem.message}")
        return "\n".join(lines)


def load_config(path: str | Path) -> Config:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(str(path), [ConfigProblem("", f"cannot read the file: {error.strerror}")]) from error
    return parse_config(text, source=str(path))


# libyaml's loader when PyYAML has it (its wheels do): the same safe loading, ~10x faster on a large fleet.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_config(text: str, source: str = "<config>") -> Config:
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
    across = [ConfigProblem(_render_path(loc), message, _line_of(loc, lines)) for loc, message in _cross_checks(data)]
    try:
        config = Config.model_validate(data)
    except ValidationError as error:
        raise ConfigError(source, [_problem(e, lines) for e in error.errors()] + across) from error
    across += [
        ConfigProblem(_render_path(loc), message, _line_of(loc, lines))
        for loc, message in rule_coverage_problems(config)
    ]
    if across:
        raise ConfigError(source, across)
    return config


def _cross_checks(data: Mapping[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """Duplicate names, the reserved rule name, rules without thresholds, nothing to watch."""
    problems: list[tuple[tuple[str | int, ...], str]] = []

    def entries(key: str) -> list[tuple[int, Mapping[str, Any]]]:
        value = data.get(key)
        return [(i, e) for i, e in enumerate(value) if isinstance(e, Mapping)] if isinstance(value, list) else []

    for key in ("runner_types", "rules"):
        seen: dict[object, int] = {}
        for index, entry in entries(key):
            name = entry.get("name")
            if isinstance(name, str) and name in seen:
                problems.append(((key, index, "name"), f"{name!r} is already {key}[{seen[name]}]"))
            elif isinstance(name, str):
                seen[name] = index
    defaults = data.get("defaults")
    default_rule = defaults.get("rule") if isinstance(defaults, Mapping) else None
    inherited = default_rule.get("thresholds") if isinstance(default_rule, Mapping) else None
    for index, entry in entries("rules"):
        if entry.get("name") == RESERVED_RULE:
            problems.append(
                (("rules", index, "name"), f"{RESERVED_RULE!r} is reserved for queuewatch's own health page")
            )
        thresholds = entry.get("thresholds", inherited)
        if not isinstance(thresholds, Mapping) or all(thresholds.get(k) is None for k in ("queue_time", "queue_size")):
            problems.append(
                (("rules", index, "thresholds"), "expected queue_time, queue_size or both (here or in defaults.rule)")
            )
    if not data.get("runner_types") and not data.get("discovery"):
        problems.append((("runner_types",), "expected at least one runner type or a discovery entry"))
    return problems


def _line_of(loc: tuple[str | int, ...], lines: Mapping[tuple[str | int, ...], int]) -> int | None:
    return next((lines[loc[:n]] for n in range(len(loc), -1, -1) if loc[:n] in lines), None)


# --- rules that can never apply, or that page twice for one breach ----------------------

_PLAIN_GLOB = re.compile(r"^[^?\[\]]*$")  # literal characters and '*' only


def _covers(exclude: str, pattern: str) -> bool:
    """True if every name `pattern` selects is also excluded by `exclude`.

    Exact for literal names and '*' globs: a '*'-only glob covers another such glob
    exactly when it matches that glob's text. Patterns with '?' or '[...]' are never
    claimed to be covered, so the check errs towards accepting a config.
    """
    return bool(_PLAIN_GLOB.match(exclude) and _PLAIN_GLOB.match(pattern)) and fnmatch.fnmatchcase(pattern, exclude)


def _sample_name(pattern: str) -> str:
    """A runner type name the pattern selects: each wildcard stands for 'x'."""
    return re.sub(r"\[!?([^\]]).*?\]", r"\1", pattern).replace("*", "x").replace("?", "x")


def _condition(rule: Rule) -> str:
    parts = []
    if rule.queue_time_threshold is not None:
        parts.append(f"queue_time > {format_duration(rule.queue_time_threshold)}")
    if rule.queue_size_threshold is not None:
        parts.append(f"queue_size > {rule.queue_size_threshold}")
    return f"{', '.join(parts)}, breach_when {rule.breach_when}"


def rule_coverage_problems(config: Config) -> list[tuple[tuple[str | int, ...], str]]:
    """Rules that can never apply (unreachable) and pairs that page twice for one breach (overlapping).

    Unreachable: the rule's `exclude` removes everything its `match` selects; or the
    config has no `discovery` and the rule selects none of `runner_types`.
    Overlapping: two rules with the same thresholds, `breach_when` and priority select
    one runner type queuewatch can watch: a configured one, or, when discovery may find
    any name, a name both rules' patterns select.
    """
    problems: list[tuple[tuple[str | int, ...], str]] = []
    names = [spec.name for spec in config.runner_types]
    rules = config.resolved_rules
    for index, rule in enumerate(rules):
        covered = [p for p in rule.match if any(_covers(e, p) for e in rule.exclude)]
        if len(covered) == len(rule.match):
            problems.append(
                (
                    ("rules", index, "exclude"),
                    f"rule {rule.name!r} can never apply: exclude {list(rule.exclude)} removes everything "
                    f"match {list(rule.match)} selects; expected exclude to leave some runner types",
                )
            )
        elif not config.discovery and not any(rule.applies_to(name) for name in names):
            problems.append(
                (
                    ("rules", index, "match"),
                    f"rule {rule.name!r} can never apply: match {list(rule.match)}"
                    + (f" minus exclude {list(rule.exclude)}" if rule.exclude else "")
                    + " selects none of runner_types, and there is no discovery entry to find more; "
                    "expected a name or glob of a configured runner type",
                )
            )
    candidates = list(names)
    if config.discovery:
        samples = {(_sample_name(p), p) for rule in rules for p in rule.match}
        known = set(names)
        candidates += sorted(
            {s for s, p in samples if fnmatch.fnmatchcase(s, p) and _RUNNER_TYPE.match(s) and s not in known}
        )
    for later in range(len(rules)):
        for earlier in range(later):
            first, second = rules[earlier], rules[later]
            if (first.priority, _condition(first)) != (second.priority, _condition(second)):
                continue
            shared = [name for name in candidates if first.applies_to(name) and second.applies_to(name)]
            if not shared:
                continue
            more = f" (and {len(shared) - 1} more)" if len(shared) > 1 else ""
            problems.append(
                (
                    ("rules", later),
                    f"rule {second.name!r} overlaps rules[{earlier}] {first.name!r} on runner type "
                    f"{shared[0]!r}{more}: both page at {first.priority.value} when {_condition(first)}, "
                    "so one breach pages twice; expected match/exclude that give each runner type one such "
                    "rule, or different thresholds or priorities (to escalate)",
                )
            )
    return problems


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


def _known_keys() -> set[str]:
    keys: set[str] = set()
    for model in (
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
    ):
        for name, field in model.model_fields.items():
            keys.add(field.alias or name)
    return keys | {s.value for s in SignalName}


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
        close = difflib.get_close_matches(unknown, sorted(_known_keys()), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return ConfigProblem(_render_path(loc), f"unknown key {unknown!r}{hint}", line)
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
    message = str(error["msg"]).removeprefix("Value error, ")
    if "found" not in message:
        message = f"found {error.get('input')!r}: {message}"
    return ConfigProblem(_render_path(loc), message, line)
