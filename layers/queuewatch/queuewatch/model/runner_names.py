"""Which watched runner type a stored job is for: one resolver for the live collector and every replay.

The track stage stores a job's runner type as the config names it, or, for a discovered runner type it can
only guess from the labels, as a candidate in lower case (GitHub compares labels without case). So a job
is a watched runner type's when the names are equal, else when they are equal without case; of two watched
names that differ only in case, the one sorting first takes the folded jobs. Pure: names in, a name out.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable


class RunnerTypeNames:
    """The watched runner types' names, ready to resolve the name a stored job carries."""

    def __init__(self, watched: Iterable[str]) -> None:
        self.exact = frozenset(watched)
        self._folded = {name.lower(): name for name in sorted(self.exact, reverse=True)}

    def resolve(self, stored: str | None) -> str | None:
        """The watched runner type a job stored under `stored` is for, or None if none is."""
        if stored is None:
            return None
        return stored if stored in self.exact else self._folded.get(stored.lower())


def matches_without_case(name: str, pattern: str) -> bool:
    """A runner type name against a name or glob, compared without case as the resolver compares names."""
    return fnmatch.fnmatchcase(name.lower(), pattern.lower())
