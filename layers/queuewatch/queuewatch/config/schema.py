"""The config file's schema: runner types, where each signal comes from, rules, and their defaults.

A rule names only what it changes; `resolved_rules` applies `defaults.rule` and the
built-in defaults, so the evaluator sees each rule whole (rules.Rule).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from queuewatch.base.durations import Duration
from queuewatch.base.frozen import FrozenModel
from queuewatch.config.autoscaler import AutoscalerSpec
from queuewatch.config.github_status import GitHubStatusSettings
from queuewatch.config.maintenance import MaintenanceWindow
from queuewatch.config.names import (
    QUEUE_NAME,
    QUEUE_URL,
    RULE_NAME,
    RUNNER_TYPE,
    SQS_HOST_REGION,
    AccountId,
    Region,
    RunnerTypeGlob,
)
from queuewatch.config.routes import DEFAULT_ROUTING, Receiver, RouteSpec, Routing
from queuewatch.config.slos import SloSpec
from queuewatch.config.sources import Signals, SignalSource
from queuewatch.config.spans import (
    ForecastHorizon,
    KeepFiringPeriod,
    MetricLookback,
    PendingPeriod,
    QueueTimeThreshold,
    RepeatInterval,
)
from queuewatch.model.demand_paths import DEAD_LETTER_RULE, JOB_RETRY_RULE, PATH_RULES, PATH_SIGNALS
from queuewatch.model.rules import HEALTH_RULE, RESERVED_RUNNER_TYPES, Priority, Rule
from queuewatch.model.signals import SignalName
from queuewatch.model.slo import Slo

CONFIG_VERSION = 1


class QueueRef(FrozenModel):
    """The autoscaler's queue for one runner type: by name (with region) or by URL."""

    name: str | None = None
    url: str | None = None
    region: Region | None = None
    account_id: AccountId | None = None

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str | None) -> str | None:
        if value is not None and not QUEUE_NAME.match(value):
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
        match = QUEUE_URL.match(value)
        if not match or not QUEUE_NAME.match(match["name"]):
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
        match = QUEUE_URL.match(self.url or "")
        assert match  # checked by the validator
        return match["name"]

    def region_or(self, default: str) -> str:
        if self.region:
            return self.region
        host = SQS_HOST_REGION.match(self.url or "")
        return host["region"] if host else default


FIFO_SUFFIX = ".fifo"
TITLE_LIMIT = 120  # a rule's title: the SNS subject (under 100 characters) keeps its start
JOB_LABEL = re.compile(r"^[^\s,]{1,100}$")


def _runner_labels(value: list[str]) -> list[str]:
    for label in value:
        if not JOB_LABEL.match(label):
            raise ValueError(f"found {label!r}, expected a runner label: 1 to 100 characters, no space or comma")
    return value


class LabelSet(FrozenModel):
    """One of a runner type's label sets: a job whose labels are all among these (with exact_match, these
    and no other) is this runner type's."""

    labels: list[str] = Field(min_length=1, max_length=100)
    exact_match: bool = False

    @field_validator("labels", mode="before")
    @classmethod
    def _a_list(cls, value: object) -> object:
        if isinstance(value, str):
            raise ValueError(f"found {value!r}, expected a list of labels: write labels: [{value}]")
        return value

    @field_validator("labels")
    @classmethod
    def _valid_labels(cls, value: list[str]) -> list[str]:
        return _runner_labels(value)


NO_QUEUE = "none"
"""`queue: none`: a runner type with no build queue (a scale-set lane): judged on its tracked jobs alone."""


class RunnerTypeSpec(FrozenModel):
    name: str
    queue: QueueRef | None = Field(
        description="its build queue, by name or URL; 'none' for a runner type with no build queue (a scale-set "
        "lane): judged on its tracked jobs alone, with nothing to cross-check them"
    )
    team: str | None = None
    signals: Signals = Field(default_factory=dict)
    labels: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="the runner's labels: a tracked job whose labels are all among them belongs to this runner type "
        "(all of them and no other with exact_match); without them, a job belongs here when its labels name it",
    )
    exact_match: bool = False
    job_retry_queue: str | None = Field(
        default=None,
        description="the runner type's job-retry queue, in the build queue's region and account; by default "
        "upstream's name beside the build queue (<prefix>-<key>-job-retry) where a discovery listing holds it",
    )
    dead_letter_queue: str | None = Field(
        default=None,
        description="the build queue's dead-letter queue; by default upstream's name "
        "(<prefix>-<key>-queued-builds_dead_letter, .fifo for a FIFO build queue) where a discovery listing holds it",
    )
    label_sets: list[LabelSet] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="several label sets, each with its own exact_match (the upstream module's labelMatchers): "
        "a tracked job belongs to this runner type when one of them takes it",
    )
    runners_maximum_count: int | None = Field(
        default=None,
        ge=1,
        description="the autoscaler's runners_maximum_count for this runner type: `queuewatch capacity --config` "
        "replays the history at it and says whether it binds",
    )

    @field_validator("labels")
    @classmethod
    def _valid_labels(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _runner_labels(value)

    @field_validator("queue", mode="before")
    @classmethod
    def _no_queue(cls, value: object) -> object:
        if value is None:
            raise ValueError(f"found null, expected a queue ({{name: ...}} or {{url: ...}}) or '{NO_QUEUE}'")
        return None if value == NO_QUEUE else value  # any other single value: the config's own message says how

    @model_validator(mode="after")
    def _one_way_to_say_labels(self) -> RunnerTypeSpec:
        if self.labels is not None and self.label_sets is not None:
            raise ValueError(
                "labels and label_sets both given: write one set as labels (with exact_match), "
                "or every set under label_sets, each with its own exact_match"
            )
        if self.exact_match and self.labels is None:
            where = (
                "each label set's own exact_match under label_sets" if self.label_sets else "the runner type's labels"
            )
            raise ValueError(f"exact_match: true needs {where}")
        return self

    @field_validator("job_retry_queue", "dead_letter_queue")
    @classmethod
    def _valid_path_queue(cls, value: str | None) -> str | None:
        if value is not None and not QUEUE_NAME.match(value):
            raise ValueError(
                f"found {value!r}, expected an SQS queue name: 1 to 80 letters, digits, '-' or '_', "
                "with an optional '.fifo' ending"
            )
        return value

    @property
    def all_label_sets(self) -> list[tuple[list[str], bool]]:
        """Every label set with its exact_match, however the config wrote them; none: matched by name."""
        if self.labels is not None:
            return [(self.labels, self.exact_match)]
        return [(s.labels, s.exact_match) for s in self.label_sets or []]

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not RUNNER_TYPE.match(value):
            raise ValueError(
                f"found {value!r}, expected a runner type name of letters, digits, '.', '_' or '-' (at most 128)"
            )
        if value in RESERVED_RUNNER_TYPES:
            raise ValueError(
                f"found {value!r}, which queuewatch reserves for its own health page ({HEALTH_RULE}#{value}); "
                "expected another name (the queue keeps its own)"
            )
        return value


class DiscoverySpec(FrozenModel):
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
    match: list[RunnerTypeGlob] = Field(default_factory=lambda: ["*"], min_length=1)
    exclude: list[RunnerTypeGlob] = Field(default_factory=list)

    @field_validator("account_id")
    @classmethod
    def _own_account_only(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError(
                f"found {value!r}: discovery lists queues with ListQueues, which lists only the stack's own "
                "account, so it would find nothing there; name another account's queues under runner_types "
                '(queue: {name: ..., account_id: "..."}) and deploy with WatchedAccountIds'
            )
        return value

    @field_validator("queue_name_pattern")
    @classmethod
    def _one_placeholder(cls, value: str) -> str:
        if value.count("{runner_type}") != 1:
            raise ValueError(
                f"found {value!r}, expected a queue name pattern with one '{{runner_type}}', "
                "such as '{prefix}-{runner_type}-queued-builds'"
            )
        rest = value.replace("{runner_type}", "x").replace("{prefix}", "x")
        if not QUEUE_NAME.match(rest):
            raise ValueError(f"found {value!r}, expected only letters, digits, '-', '_' around the placeholders")
        return value

    @cached_property
    def _regex(self) -> re.Pattern[str]:
        literal = self.queue_name_pattern.replace("{prefix}", self.prefix)
        before, after = literal.split("{runner_type}")
        # A FIFO queue's name must end in '.fifo' (the upstream module, before v6, named a `fifo: true` config's
        # queue "<prefix>-<key>-queued-builds.fifo"): the default pattern finds it, and the key drops the suffix.
        fifo = "" if after.endswith(FIFO_SUFFIX) else f"(?:{re.escape(FIFO_SUFFIX)})?"
        return re.compile(f"^{re.escape(before)}(?P<runner_type>[A-Za-z0-9._-]+?){re.escape(after)}{fifo}$")

    @property
    def name_prefix(self) -> str:
        """The literal start of every matching queue name, for ListQueues' QueueNamePrefix."""
        return self.queue_name_pattern.replace("{prefix}", self.prefix).split("{runner_type}")[0]

    def key_of(self, queue_name: str) -> str | None:
        """The runner type key the queue name stands for, if the pattern matches it; `match`, `exclude` and the
        reserved names aside (`runner_type_of` applies them)."""
        found = self._regex.match(queue_name)
        return found["runner_type"] if found else None

    def selects(self, key: str) -> bool:
        """Whether `match` and `exclude` keep the runner type key."""
        return any(fnmatch.fnmatchcase(key, p) for p in self.match) and not any(
            fnmatch.fnmatchcase(key, p) for p in self.exclude
        )

    def runner_type_of(self, queue_name: str) -> str | None:
        """The runner type the queue name stands for, if the pattern, `match` and `exclude` select it."""
        name = self.key_of(queue_name)
        if name is None or name in RESERVED_RUNNER_TYPES:  # name that queue under runner_types: instead
            return None
        return name if self.selects(name) else None


class Thresholds(FrozenModel):
    """A signal breaches its threshold when its value is above it."""

    queue_time: QueueTimeThreshold | None = None
    queue_size: Annotated[int, Field(ge=0)] | None = None


class RuleSettings(FrozenModel):
    """What a rule may leave to `defaults.rule`."""

    thresholds: Thresholds | None = None
    breach_when: Literal["all", "any"] | None = None
    for_: PendingPeriod | None = Field(default=None, alias="for")
    keep_firing_for: KeepFiringPeriod | None = None
    repeat_interval: RepeatInterval | None = None
    priority: Priority | None = None
    team: str | None = None
    runbook_url: str | None = None
    dashboard_url: str | None = None
    group_by: Literal["all", "team", "runner_type"] | None = None
    forecast: ForecastHorizon | None = Field(
        default=None,
        description="page ahead: when the forecast (queuewatch/model/forecast) says a job queued within this horizon "
        "will wait past the rule's queue_time; unset: the rule pages on what has happened only",
    )

    @field_validator("runbook_url", "dashboard_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://\S+$", value):
            raise ValueError(f"found {value!r}, expected an http(s) URL")
        return value


class RuleSpec(RuleSettings):
    name: str
    match: list[RunnerTypeGlob] = Field(default_factory=lambda: ["*"], min_length=1)
    exclude: list[RunnerTypeGlob] = Field(default_factory=list)
    title: str | None = Field(
        default=None,
        description="the page's title, which pagers show and key on; the group is added to it "
        "('... on linux-x64', '... team gpu-infra'); default 'Jobs are queueing (<rule>)'",
    )

    @field_validator("title")
    @classmethod
    def _one_line_title(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or len(value) > TITLE_LIMIT or not value.isprintable()):
            raise ValueError(f"found {value!r}, expected a title on one line, 1 to {TITLE_LIMIT} characters")
        return value

    @field_validator("name")
    @classmethod
    def _valid_name(cls, value: str) -> str:
        if not RULE_NAME.match(value):
            raise ValueError(f"found {value!r}, expected a rule name of lower-case letters, digits and '-'")
        if value in PATH_RULES:
            raise ValueError(
                f"found {value!r}, which queuewatch reserves for the autoscaler's {value} queues; expected another "
                f"name (set their thresholds under defaults.{value.replace('-', '_')})"
            )
        return value


class MonitorSettings(FrozenModel):
    """The page queuewatch sends about itself: collection failing, signals missing."""

    priority: Priority = Priority.P3
    team: str | None = None
    for_: PendingPeriod = Field(default=300, alias="for")
    repeat_interval: RepeatInterval = 14400
    runbook_url: str | None = None
    unserved_after: Duration | None = Field(
        default=600,
        description="how long a tracked job may wait for labels no runner type serves before the monitor page "
        "says so; null: never (a stack watching part of a fleet whose other runner types another stack watches)",
    )
    job_source_quiet_after: Duration | None = Field(
        default=900,
        description="where jobs are tracked: a job source (the bus, the webhook) silent longer than this and than "
        "its own normal gap of the last 7 days (outages left out) pages the monitor (after `for`); null: never",
    )


class TriageSettings(FrozenModel):
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


class JobRetrySettings(FrozenModel):
    """The job-retry queue beside each runner type (demand_paths.py), judged by the rule `job-retry`."""

    max_age: Duration | None = Field(
        default=1800,
        description="a job-retry check older than this pages (upstream delays a check 15 minutes at most); "
        "null: the job-retry queues are not read",
    )
    priority: Priority | None = None
    team: str | None = None


class DeadLetterSettings(FrozenModel):
    """The build queue's dead-letter queue beside each runner type, judged by the rule `dead-letter`."""

    max_messages: Annotated[int, Field(ge=0)] | None = Field(
        default=0,
        description="more dead-lettered requests than this page (0: any); null: the dead-letter queues are not read",
    )
    priority: Priority | None = None
    team: str | None = None


class Defaults(FrozenModel):
    region: Region = "us-east-1"
    account_id: AccountId | None = None
    metric_lookback: MetricLookback = 600
    queue_source: Literal["jobs", "sqs"] = Field(
        default="jobs",
        description="where jobs are tracked, what the rules judge as queue size and time: the jobs GitHub "
        "holds queued ('jobs'), or the scale-up requests in the autoscaler's queue ('sqs'); the other "
        "rides along as evidence. Without tracking, always the queue.",
    )
    signals: Signals = Field(default_factory=dict)
    rule: RuleSettings = RuleSettings()
    triage: TriageSettings = TriageSettings()
    queue_selection_strategy: Literal["first", "random", "all"] = Field(
        default="first",
        description="the upstream webhook's queue_selection_strategy: with 'all' (v7.9) one job's scale-up request "
        "goes to every matching queue, so summed requests count it once per queue; a page's jobs total is then "
        "the tracked jobs', or not summed",
    )
    job_retry: JobRetrySettings = JobRetrySettings()
    dead_letter: DeadLetterSettings = DeadLetterSettings()


# No built-in team: a page routed to a team queuewatch made up is a page nobody gets. Every rule's team is
# the config's (its own or defaults.rule's); lint.cross_checks names a rule with none.
RuleOrigin = Literal["rule", "defaults.rule", "built-in", "unset"]
BUILTIN_RULE_DEFAULTS: dict[str, Any] = {
    "breach_when": "all",
    "for_": 0,
    "keep_firing_for": 300,
    "repeat_interval": 14400,
    "priority": Priority.P2,
    "group_by": "all",
}


class Config(FrozenModel):
    version: int
    autoscaler: AutoscalerSpec | None = Field(
        default=None, description="the upstream autoscaler, named by its prefix: its bus, queues and matcher config"
    )
    defaults: Defaults = Defaults()
    runner_types: list[RunnerTypeSpec] = Field(default_factory=list)
    discovery: list[DiscoverySpec] = Field(default_factory=list)
    rules: list[RuleSpec] = Field(min_length=1)
    monitor: MonitorSettings = MonitorSettings()
    slos: list[SloSpec] = Field(default_factory=list, max_length=50)
    maintenance_windows: list[MaintenanceWindow] = Field(
        default_factory=list, description="weekly windows in which the pages they name are held back"
    )
    github_status: GitHubStatusSettings = GitHubStatusSettings()
    receivers: list[Receiver] | None = Field(
        default=None, description="where alerts go: pagers, e-mail, SQS queues, the chat topic (config/routes.py)"
    )
    routes: list[RouteSpec] | None = Field(
        default=None, description="which alerts each receiver gets, by team, priority and kind"
    )

    @cached_property
    def routing(self) -> Routing:
        """The receivers and routes; without either in the file, every alert to the chat topic alone."""
        if self.receivers is None and self.routes is None:
            return DEFAULT_ROUTING
        return Routing(receivers=self.receivers or [], routes=self.routes or [])

    @model_validator(mode="before")
    @classmethod
    def _autoscaler_queues_by_default(cls, raw: Any) -> Any:
        """An autoscaler named and no queue listed: its build queues are discovered under its prefix (the job-retry
        and dead-letter queues beside each, demand_paths.py), so the prefix is all a deploy needs to say."""
        if not isinstance(raw, dict) or raw.get("runner_types") or raw.get("discovery"):
            return raw
        try:
            spec = AutoscalerSpec.model_validate(raw.get("autoscaler"))
        except ValueError:
            return raw  # None or invalid: the field's own validation says so
        pattern, match = spec.discovery_pattern
        implied = {"queue_name_pattern": pattern, "prefix": spec.prefix, "match": match}
        if spec.region:
            implied["region"] = spec.region
        return {**raw, "discovery": [implied]}

    @model_validator(mode="after")
    def _routes_name_known_teams(self) -> Config:
        if (self.receivers is None) != (self.routes is None):
            given, missing = ("receivers", "routes") if self.routes is None else ("routes", "receivers")
            raise ValueError(f"{given} without {missing}: expected both (docs/alerts.md, Routing)")
        try:
            routing = self.routing
        except ValidationError as error:  # the message alone, without pydantic's wrapping
            raise ValueError(str(error.errors()[0]["msg"]).removeprefix("Value error, ")) from None
        if not any(route.teams for route in routing.routes):
            return self
        try:
            known = self.known_teams
        except ValueError:  # a rule with no team: the loader says so at its line (lint.py), once
            return self
        for index, route in enumerate(routing.routes):
            for team in route.teams:
                if team not in known:
                    near = difflib.get_close_matches(team, sorted(known), n=1)
                    hint = f"; did you mean {near[0]!r}?" if near else ""
                    raise ValueError(
                        f"routes[{index}].teams: found {team!r}{hint} expected a team the config names: "
                        f"{', '.join(sorted(known))}"
                    )
        return self

    @cached_property
    def known_teams(self) -> set[str]:
        """Every team an alert can carry: the rules', runner types', discovery's, SLOs' and the monitor's."""
        teams = {rule.team for rule in (*self.resolved_rules, *self.path_rules)}
        teams |= {spec.team for spec in self.runner_types if spec.team}
        teams |= {entry.team for entry in self.discovery if entry.team}
        teams |= {slo.team for slo in self.resolved_slos}
        return teams | {self.monitor.team or self.resolved_rules[0].team}

    @model_validator(mode="after")
    def _windows_unique(self) -> Config:
        # (the rules a window names are the loader's to check, lint.cross_checks: at their line, with the fix)
        seen: set[str] = set()
        for index, window in enumerate(self.maintenance_windows):
            if window.name in seen:
                raise ValueError(f"maintenance_windows[{index}].name: {window.name!r} is used twice; expected unique")
            seen.add(window.name)
        return self

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != CONFIG_VERSION:
            raise ValueError(f"found {value}, expected version {CONFIG_VERSION}")
        return value

    @cached_property
    def resolved_rules(self) -> tuple[Rule, ...]:
        return tuple(self._resolve(spec) for spec in self.rules)

    @cached_property
    def resolved_slos(self) -> tuple[Slo, ...]:
        return tuple(spec.resolved(self.defaults.rule.team) for spec in self.slos)

    def team_of(self, runner_type: str) -> str | None:
        """The team the config gives a runner type: its own entry's, else the first discovery entry selecting it."""
        for spec in self.runner_types:
            if spec.name == runner_type:
                return spec.team
        return next((d.team for d in self.discovery if d.selects(runner_type)), None)

    @cached_property
    def path_rules(self) -> tuple[Rule, ...]:
        """The rules of the autoscaler's other queues (demand_paths.py), from defaults.job_retry and
        defaults.dead_letter and, for what they leave out, defaults.rule; none for a path switched off."""
        retry, dead = self.defaults.job_retry, self.defaults.dead_letter
        wanted = [
            (JOB_RETRY_RULE, None, retry.max_age, retry.priority, retry.team),
            (DEAD_LETTER_RULE, dead.max_messages, None, dead.priority, dead.team),
        ]
        base = self.defaults.rule
        rules = []
        for name, size, age, priority, team in wanted:
            if size is None and age is None:
                continue
            size_signal, time_signal = PATH_SIGNALS[name]
            rules.append(
                Rule(
                    name=name,
                    match=("*",),
                    exclude=(),
                    queue_time_threshold=age,
                    queue_size_threshold=size,
                    breach_when="any",
                    pending_for=0,
                    keep_firing_for=BUILTIN_RULE_DEFAULTS["keep_firing_for"],
                    repeat_interval=base.repeat_interval or BUILTIN_RULE_DEFAULTS["repeat_interval"],
                    priority=priority or base.priority or BUILTIN_RULE_DEFAULTS["priority"],
                    team=team or base.team or self.resolved_rules[0].team,
                    runbook_url=base.runbook_url,
                    dashboard_url=base.dashboard_url,
                    group_by=base.group_by or BUILTIN_RULE_DEFAULTS["group_by"],
                    size_signal=size_signal,
                    time_signal=time_signal,
                    path=True,
                )
            )
        return tuple(rules)

    def rule_origins(self, spec: RuleSpec) -> dict[str, RuleOrigin]:
        """Where each of the rule's settings comes from: itself, defaults.rule, the built-in default, or unset."""
        origins: dict[str, RuleOrigin] = {}
        for field in RuleSettings.model_fields:
            if getattr(spec, field) is not None:
                origins[field] = "rule"
            elif getattr(self.defaults.rule, field) is not None:
                origins[field] = "defaults.rule"
            else:
                origins[field] = "built-in" if field in BUILTIN_RULE_DEFAULTS else "unset"
        return origins

    def _resolve(self, spec: RuleSpec) -> Rule:
        base = self.defaults.rule

        def pick(field: str) -> Any:
            own = getattr(spec, field)
            if own is not None:
                return own
            inherited = getattr(base, field)
            return inherited if inherited is not None else BUILTIN_RULE_DEFAULTS.get(field)

        thresholds = spec.thresholds or base.thresholds or Thresholds()
        if pick("team") is None:
            raise ValueError(f"rule {spec.name!r} has no team; expected team: in the rule or in defaults.rule")
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
            title=spec.title,
            forecast_horizon=pick("forecast"),
        )

    def signals_for(self, own: Mapping[SignalName, SignalSource]) -> dict[SignalName, SignalSource]:
        """Defaults, then the runner type's (or discovery's) own; queue size and time from SQS unless said."""
        merged: dict[SignalName, SignalSource] = {SignalName.QUEUE_SIZE: "sqs", SignalName.QUEUE_TIME: "sqs"}
        merged.update(self.defaults.signals)
        merged.update(own)
        return merged

    def rules_for(self, runner_type: str) -> list[Rule]:
        return [rule for rule in self.resolved_rules if rule.applies_to(runner_type)]
