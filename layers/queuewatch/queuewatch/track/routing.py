"""Which runner type a job waits for, from its labels and the config.

A runner type with `labels:` takes a job whose labels are all among its own (GitHub's rule for a
self-hosted runner, and the upstream multi-runner's matcher; with `exact_match`, the same set and no
other). Without `labels:`, a runner type takes a job that names it among its labels (`runs-on:
linux.2xlarge`). A discovered runner type is known only by its queue, so a job names it with the one
label left once GitHub's generic labels are set aside, if discovery selects that name. Labels compare
without case, as GitHub compares them. The first runner type in the config that takes a job wins.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable

from queuewatch.config import Config
from queuewatch.rules import RESERVED_RUNNER_TYPES

GENERIC_LABELS = frozenset({"self-hosted", "linux", "windows", "macos", "x64", "arm", "arm64"})
"""Labels every self-hosted runner of an OS or architecture carries: they name no runner type."""


def label_set(labels: Iterable[str]) -> str:
    """One stable text for a set of labels: how unmatched jobs are counted."""
    return ",".join(sorted({label.lower() for label in labels}))


class Router:
    """The config's runner types, ready to take jobs."""

    def __init__(self, config: Config) -> None:
        self._by_labels: list[tuple[str, frozenset[str], bool]] = []
        self._by_name: dict[str, str] = {}
        for spec in config.runner_types:
            if spec.labels is not None:
                self._by_labels.append((spec.name, frozenset(x.lower() for x in spec.labels), spec.exact_match))
            else:
                self._by_name.setdefault(spec.name.lower(), spec.name)
        self._discovery = [(d.match, d.exclude) for d in config.discovery]

    def runner_type(self, labels: Iterable[str]) -> str | None:
        wanted = frozenset(label.lower() for label in labels)
        if not wanted:
            return None
        for name, offered, exact in self._by_labels:
            if wanted == offered if exact else wanted <= offered:
                return name
        named = [self._by_name[label] for label in sorted(wanted) if label in self._by_name]
        if named:
            return named[0]
        return self._discovered(labels)

    def _discovered(self, labels: Iterable[str]) -> str | None:
        specific = {label for label in labels if label.lower() not in GENERIC_LABELS}
        if len(specific) != 1 or not self._discovery:
            return None
        [name] = specific
        if name in RESERVED_RUNNER_TYPES:
            return None
        for match, exclude in self._discovery:
            taken = any(fnmatch.fnmatchcase(name, p) for p in match)
            if taken and not any(fnmatch.fnmatchcase(name, p) for p in exclude):
                return name
        return None
