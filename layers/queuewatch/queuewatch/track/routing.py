"""Which runner type a job waits for, from its labels and the config.

A runner type with label sets (`labels:`, or several in `label_sets:`) takes a job whose labels are all
among one set's (GitHub's rule for a self-hosted runner, and the upstream multi-runner's matcher; with
that set's `exact_match`, the same set and no other). Without them, a runner type takes a job that names
it among its labels (`runs-on: linux.2xlarge`). The first runner type in the config that takes a job wins.

A discovered runner type is known only by its queue, so a job names it with the one label left once
GitHub's generic labels are set aside, if discovery selects that name. The track stage cannot list the
queues, so that name is only a candidate: the collector confirms it against the queues it watches
(collect/jobs.py), and no per-runner-type figure is emitted for it here. Labels compare without case, as
GitHub compares them; a candidate is kept in lower case for that reason.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

from queuewatch.config import Config
from queuewatch.rules import RESERVED_RUNNER_TYPES

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

    def __init__(self, config: Config) -> None:
        self.config = config  # the SLOs a started job is counted for (track/slo.py)
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

    def runner_type(self, labels: Iterable[str]) -> str | None:
        wanted = frozenset(label.lower() for label in labels)
        if not wanted:
            return None
        for matcher in self._matchers:
            if matcher.takes(wanted):
                return matcher.runner_type
        named = [self._by_name[label] for label in sorted(wanted) if label in self._by_name]
        if named:
            return named[0]
        return self._discovered(wanted)

    def configured(self, runner_type: str | None) -> bool:
        """Whether the name is a runner type the config names, not a discovered candidate."""
        return runner_type in self._configured

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
