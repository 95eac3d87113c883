"""Which watched runner type a job belongs to, from its labels and the config's runner types.

By default a runner type takes the jobs whose labels include its name (`runs-on: linux.2xlarge`). A
runner type with `labels` follows the autoscaler's multi-runner rule instead, case-insensitive: with
`exact_match`, every label of the job is among the runner type's; without it, any one is. The first
runner type in the config that matches wins, as the autoscaler takes the first matching queue.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from queuewatch.config import Config, RunnerTypeSpec


@dataclass(frozen=True, slots=True)
class _Matcher:
    name: str
    labels: frozenset[str] | None  # lower-cased; None: match on the runner type's name
    exact_match: bool

    def matches(self, job_labels: frozenset[str]) -> bool:
        if not job_labels:
            return False  # a job with no labels names no self-hosted runner type
        if self.labels is None:
            return self.name.lower() in job_labels
        if self.exact_match:
            return job_labels <= self.labels
        return bool(job_labels & self.labels)


class Router:
    """Built once per config (a container keeps it): routing a job is then a pass over the runner types."""

    def __init__(self, runner_types: Sequence[RunnerTypeSpec]) -> None:
        self._matchers = [
            _Matcher(
                name=spec.name,
                labels=None if spec.labels is None else frozenset(label.lower() for label in spec.labels),
                exact_match=spec.exact_match,
            )
            for spec in runner_types
        ]

    @classmethod
    def of(cls, config: Config) -> Router:
        return cls(config.runner_types)

    def route(self, labels: Sequence[str]) -> str | None:
        job_labels = frozenset(label.lower() for label in labels)
        for matcher in self._matchers:
            if matcher.matches(job_labels):
                return matcher.name
        return None
