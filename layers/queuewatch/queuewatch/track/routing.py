"""Which runner type a job waits for, from its labels and the config.

A runner type with label sets (`labels:`, or several in `label_sets:`) takes a job whose labels are all
among one set's (GitHub's rule for a self-hosted runner, and the upstream multi-runner's matcher; with
that set's `exact_match`, the same set and no other). Without them, a runner type takes a job that names
it among its labels (`runs-on: linux.2xlarge`). The first runner type in the config that takes a job wins.

Where the autoscaler's matcher config is read (queuewatch/model/matcher.py), a job no label set of the config
takes goes where the autoscaler's webhook sends it: to the runner type whose build queue is the matched
entry's (a configured one by its queue's name, else the name discovery gives that queue, else the entry's
key, a candidate). A job the autoscaler refuses serves no runner type. A matcher config that could not be
read routes nothing further: the job is stored without a runner type and the failure is reported
(`matcher_error`), never replaced by a guess from the labels.

Without a matcher config, a discovered runner type is known only by its queue, so a job names it with the
one label left once GitHub's generic labels are set aside, if discovery selects that name. The track stage
cannot list the queues, so that name is only a candidate: the collector confirms it against the queues it watches
(collect/jobs.py), and no per-runner-type figure is emitted for it here. Labels compare without case, as
GitHub compares them; a candidate is kept in lower case for that reason.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from queuewatch.config import Config
from queuewatch.model.matcher import MatcherConfig, MatcherConfigError, MatcherEntry
from queuewatch.model.rules import RESERVED_RUNNER_TYPES

GENERIC_LABELS = frozenset({"self-hosted", "linux", "windows", "macos", "x64", "arm", "arm64"})
"""Labels every self-hosted runner of an OS or architecture carries: they name no runner type."""


def label_set(labels: Iterable[str]) -> str:
    """One stable text for a set of labels: how unmatched jobs are counted."""
    return ",".join(sorted({label.lower() for label in labels}))


@dataclass(frozen=True)
class LabelMatcher:
    runner_type: str
    labels: frozenset[str]  # lower case
    exact: bool

    def takes(self, wanted: frozenset[str]) -> bool:
        return wanted == self.labels if self.exact else wanted <= self.labels


class Router:
    """The config's runner types, ready to take jobs."""

    def __init__(self, config: Config, matcher: MatcherConfig | MatcherConfigError | None = None) -> None:
        self.config = config  # the SLOs a started job is counted for (track/slo.py)
        self.matcher = matcher  # the autoscaler's own routing; an error: it was expected and could not be read
        self._matchers: list[LabelMatcher] = []
        self._by_name: dict[str, str] = {}
        for spec in config.runner_types:
            sets = spec.all_label_sets
            for labels, exact in sets:
                self._matchers.append(LabelMatcher(spec.name, frozenset(x.lower() for x in labels), exact))
            if not sets:
                self._by_name.setdefault(spec.name.lower(), spec.name)
        self._configured = {spec.name for spec in config.runner_types}
        self._discovery = [(d.match, d.exclude) for d in config.discovery]
        self._by_queue = {spec.queue.queue_name: spec.name for spec in config.runner_types if spec.queue}

    @property
    def matcher_error(self) -> str | None:
        return str(self.matcher) if isinstance(self.matcher, MatcherConfigError) else None

    def runner_type(self, labels: Iterable[str]) -> str | None:
        given = list(labels)
        wanted = frozenset(label.lower() for label in given)
        if not wanted and not isinstance(self.matcher, MatcherConfig):
            return None
        for matcher in self._matchers if wanted else ():
            if matcher.takes(wanted):
                return matcher.runner_type
        if isinstance(self.matcher, MatcherConfigError):
            return None
        if self.matcher is not None:
            targets = self.matcher.dispatch(given, self.config.defaults.queue_selection_strategy)
            return self._served_by(targets[0]) if targets else None
        named = [self._by_name[label] for label in sorted(wanted) if label in self._by_name]
        if named:
            return named[0]
        return self._discovered(wanted)

    def configured(self, runner_type: str | None) -> bool:
        """Whether the name is a runner type the config names, not a discovered candidate."""
        return runner_type in self._configured

    def _served_by(self, entry: MatcherEntry) -> str:
        """The runner type the matched entry's queue stands for."""
        queue = entry.queue_name
        if queue in self._by_queue:
            return self._by_queue[queue]
        for spec in self.config.discovery:
            if (found := spec.runner_type_of(queue)) is not None:
                return found
        return entry.key or queue

    def _discovered(self, wanted: frozenset[str]) -> str | None:
        specific = wanted - GENERIC_LABELS
        if len(specific) != 1 or not self._discovery:
            return None
        [name] = specific
        if name in RESERVED_RUNNER_TYPES:
            return None
        for match, exclude in self._discovery:
            # Discovery's patterns are globs on queue names, which keep their case; the job's label has
            # lost it, so both are compared in lower case.
            taken = any(fnmatch.fnmatchcase(name, p.lower()) for p in match)
            if taken and not any(fnmatch.fnmatchcase(name, p.lower()) for p in exclude):
                return name
        return None
