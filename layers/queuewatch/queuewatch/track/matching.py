"""The autoscaler's matcher config for the track stage: which parameters, read once per container and again
once older than MAX_AGE, so that a changed config routes jobs within a minute without a deploy, and a busy
fleet's events cost one SSM request a minute, not one each. A failed read is kept as its error for the same
time: the jobs it leaves unrouted and the degraded signal name it; the next read after MAX_AGE may recover."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.config import Config
from queuewatch.model.autoscaler import matcher_config_path
from queuewatch.model.matcher import MatcherConfig, MatcherConfigError

MAX_AGE = timedelta(seconds=60)


@dataclass(frozen=True)
class MatcherParameters:
    """Where the matcher config is: exactly these names (`explicit`), or the module's default path."""

    names: tuple[str, ...]
    explicit: bool


def matcher_parameters(config: Config, env_paths: str = "", env_prefix: str = "") -> MatcherParameters | None:
    """The deploy's first (MATCHER_CONFIG_PATH: one base name, read with its chunks, or upstream's names joined by
    ':'), then the config's (`autoscaler.matcher_config`), then the default path of the deploy's prefix, then of
    the config's; None: no autoscaler named, so no matcher config is expected."""
    if names := [name for name in env_paths.split(":") if name]:
        return MatcherParameters(tuple(names), explicit=len(names) > 1)
    spec = config.autoscaler
    if spec is not None and spec.matcher_config:
        return MatcherParameters(tuple(spec.matcher_config), explicit=len(spec.matcher_config) > 1)
    prefix = env_prefix or (spec.prefix if spec else "")
    return MatcherParameters((matcher_config_path(prefix),), explicit=False) if prefix else None


class CachedMatcherConfig:
    """One container's matcher config (or the error that stands for it), read again once older than max_age."""

    def __init__(self, read: Callable[[], MatcherConfig], max_age: timedelta = MAX_AGE) -> None:
        self._read = read
        self._max_age = max_age
        self._value: MatcherConfig | MatcherConfigError | None = None
        self._at: datetime | None = None

    def current(self, now: datetime) -> MatcherConfig | MatcherConfigError:
        # A clock that went back counts as stale too: reading again is cheap, serving a config for ever is not.
        if self._value is None or self._at is None or not timedelta(0) <= now - self._at < self._max_age:
            try:
                self._value = self._read()
            except MatcherConfigError as error:
                self._value = error
            self._at = now
        return self._value
