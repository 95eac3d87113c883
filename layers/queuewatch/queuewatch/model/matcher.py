"""The autoscaler's own routing of a job to its runner types: its webhook's matcher config, applied as it does.

The upstream webhook (lambdas/functions/webhook/src, v6 and v7) reads a JSON list from SSM, one entry per
runner type: the queue's URL (`id`), its ARN, the key (`key`, v6 and later), and `matcherConfig` with
`labelMatchers` (a list of label lists), `exactMatch`, `priority` and, from v7.9, `bidirectionalLabelMatch`
and `enableDynamicLabels`. The terraform writes the list sorted by priority, then key. A queued job goes:

- its labels compared without case (the runner's labels lowered, each of the job's lowered);
- `exactMatch`: every label of the job is in one of the entry's label lists; otherwise *any* label of the job
  is; upstream inverts the test for a job without labels (an exactMatch entry refuses it, any other takes it);
  `bidirectionalLabelMatch`: one list holds exactly the job's labels;
- the entries tried strict first (exactMatch or bidirectional), the written order kept among equals;
- of the matches, those sharing the first one's exactMatch are the equally best; the webhook's
  `queue_selection_strategy` picks `first` (one), `random` (one by chance), or `all` (each of them);
- labels starting `ghr-` (v7.9's dynamic labels) take no part in the match; a job carrying any goes to the
  first match that allows dynamic labels, or nowhere (the label policy itself is not applied here).

A job counted once: under `random` and `all` the first of the equally best stands for the job (a `random`
pick cannot be known from outside). Pure: the parameters' texts in, runner types out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Strategy = Literal["first", "random", "all"]
DYNAMIC_PREFIX = "ghr-"


class MatcherConfigError(ValueError):
    """The matcher config cannot be read or does not say what upstream writes: a degraded signal, never a guess."""


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class MatcherRule(_Lenient):
    label_matchers: list[list[str]] = Field(alias="labelMatchers")
    exact_match: bool = Field(alias="exactMatch")
    bidirectional: bool = Field(default=False, alias="bidirectionalLabelMatch")
    dynamic_labels: bool = Field(default=False, alias="enableDynamicLabels")
    priority: int | None = None


class MatcherEntry(_Lenient):
    """One runner type as the webhook knows it."""

    id: str = Field(min_length=1)  # the build queue's URL
    arn: str | None = None
    key: str | None = None
    matcher_config: MatcherRule = Field(alias="matcherConfig")

    @property
    def strict(self) -> bool:
        return self.matcher_config.exact_match or self.matcher_config.bidirectional

    @property
    def queue_name(self) -> str:
        """The build queue's name: the URL's last part (an ARN's, if the URL says none)."""
        name = self.id.rstrip("/").rsplit("/", 1)[-1]
        return name if name and "://" not in name else (self.arn or "").rsplit(":", 1)[-1]

    @property
    def queue_region(self) -> str | None:
        """The region the queue's URL names (`https://sqs.<region>.amazonaws.com/...`), as upstream reads it."""
        host = self.id.split("://", 1)[-1].split("/", 1)[0].split(".")
        return host[1] if len(host) >= 3 and host[0] == "sqs" else None


@dataclass(frozen=True, slots=True)
class _Compiled:
    """An entry's test, its label lists lowered once per read, not once per job (thousands of entries a job)."""

    entry: MatcherEntry
    lists: tuple[frozenset[str], ...]
    exact: bool
    bidirectional: bool

    @classmethod
    def of(cls, entry: MatcherEntry) -> _Compiled:
        rule = entry.matcher_config
        lists = tuple(frozenset(label.lower() for label in matcher) for matcher in rule.label_matchers)
        return cls(entry, lists, rule.exact_match, rule.bidirectional)

    def takes(self, wanted: frozenset[str]) -> bool:
        """Upstream's canRunJob: `wanted` are the job's labels, lowered, with the dynamic ones set aside."""
        if self.bidirectional:
            return wanted in self.lists
        if not wanted:  # upstream inverts its test for a job without labels
            return not (self.exact and self.lists)
        if self.exact:
            return any(wanted <= runner for runner in self.lists)
        return any(not wanted.isdisjoint(runner) for runner in self.lists)


@dataclass(frozen=True, eq=False)  # each read its own: the track stage keys its router by the read
class MatcherConfig:
    """The webhook's entries, in the order the webhook tries them (strict first, written order kept)."""

    entries: tuple[MatcherEntry, ...]
    source: str  # the parameters read, for the messages that name it
    _compiled: tuple[_Compiled, ...] = field(init=False, repr=False)
    # label -> the positions of the entries whose lists hold it: a strict entry can take a job only if each
    # of its labels is in some list of it, a loose one if any is, so a job tries a few entries, not thousands.
    _strict: dict[str, set[int]] = field(init=False, repr=False)
    _loose: dict[str, set[int]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        compiled = tuple(_Compiled.of(entry) for entry in self.entries)
        strict: dict[str, set[int]] = {}
        loose: dict[str, set[int]] = {}
        for position, rule in enumerate(compiled):
            index = strict if rule.exact or rule.bidirectional else loose
            for label in frozenset().union(*rule.lists):
                index.setdefault(label, set()).add(position)
        object.__setattr__(self, "_compiled", compiled)
        object.__setattr__(self, "_strict", strict)
        object.__setattr__(self, "_loose", loose)

    def _candidates(self, wanted: frozenset[str]) -> list[int]:
        """The entries that may take a job with these labels, in the webhook's order; every entry without labels."""
        if not wanted:
            return list(range(len(self._compiled)))
        postings = sorted((self._strict.get(label, set()) for label in wanted), key=len)
        strict = set(postings[0]).intersection(*postings[1:])
        loose = set().union(*(self._loose.get(label, set()) for label in wanted))
        return sorted(strict | loose)

    def dispatch(self, labels: Sequence[str], strategy: Strategy = "first") -> list[MatcherEntry]:
        """The entries the webhook sends a queued job with these labels to; none: it refuses the job.
        Under `random` the candidates are all returned, the one the webhook drew first among them unknown."""
        plain = [label for label in labels if not label.startswith(DYNAMIC_PREFIX)]
        wanted = frozenset(label.lower() for label in plain)
        tried = (self._compiled[position] for position in self._candidates(wanted))
        matching = (compiled.entry for compiled in tried if compiled.takes(wanted))
        if len(plain) != len(labels):
            dynamic = next((entry for entry in matching if entry.matcher_config.dynamic_labels), None)
            return [dynamic] if dynamic else []
        first = next(matching, None)
        if first is None or strategy == "first":  # the first match is the webhook's choice: no need to try the rest
            return [first] if first else []
        exact = first.matcher_config.exact_match
        return [first, *(entry for entry in matching if entry.matcher_config.exact_match == exact)]


def parse(texts: Sequence[tuple[str, str]]) -> MatcherConfig:
    """The matcher config from its parameters' (name, value) in order, joined as upstream joins its chunks."""
    source = ":".join(name for name, _ in texts) or "(no parameter)"
    joined = "".join(value for _, value in texts)
    try:
        raw = json.loads(joined)
    except json.JSONDecodeError as error:
        raise MatcherConfigError(f"{source}: not JSON ({error.msg} at character {error.pos})") from None
    if not isinstance(raw, list) or not raw:
        raise MatcherConfigError(f"{source}: found {type(raw).__name__}, expected a non-empty list of runner entries")
    entries = []
    for index, item in enumerate(raw):
        try:
            entries.append(MatcherEntry.model_validate(item))
        except ValidationError as error:
            first = error.errors(include_input=False, include_url=False)[0]
            where = ".".join(str(part) for part in first["loc"])
            raise MatcherConfigError(f"{source}: entry {index}: {where}: {first['msg']}") from None
    # Python's sort is stable, as the webhook's is: the written (priority, key) order stays among equals.
    ordered = sorted(entries, key=lambda entry: not entry.strict)
    return MatcherConfig(entries=tuple(ordered), source=source)
