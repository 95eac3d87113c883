"""The config's `autoscaler:` section: the upstream autoscaler named by its prefix, from which queuewatch finds
its bus, its queues, its matcher config and its log groups (queuewatch/model/autoscaler.py names them)."""

from __future__ import annotations

import re

from pydantic import Field, field_validator

from queuewatch.base.frozen import FrozenModel
from queuewatch.config.names import Region
from queuewatch.model import autoscaler

PREFIX = re.compile(r"^[A-Za-z0-9_-]{1,60}$")
PARAMETER = re.compile(r"^/[A-Za-z0-9_.\-/]{1,1010}$")


class AutoscalerSpec(FrozenModel):
    """The autoscaler this stack watches, as its terraform `prefix` names it."""

    prefix: str = Field(description="the upstream module's `prefix`: its bus is <prefix>-runners")
    layout: autoscaler.Layout = Field(
        default="multi-runner",
        description="the upstream module that runs the fleet: 'multi-runner' (queues <prefix>-<key>-queued-builds, "
        "Lambdas <prefix>-<key>-scale-up) or 'single-runner' (<prefix>-queued-builds, <prefix>-scale-up)",
    )
    region: Region | None = Field(
        default=None, description="where its bus, queues, matcher config and Lambdas are; defaults.region if unset"
    )
    matcher_config: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="the webhook's PARAMETER_RUNNER_MATCHER_CONFIG_PATH, split at ':'; by default "
        "/github-action-runners/<prefix>/webhook/runner-matcher-config (or its -0, -1, ... chunks)",
    )

    @field_validator("prefix")
    @classmethod
    def _valid_prefix(cls, value: str) -> str:
        if not PREFIX.match(value):
            raise ValueError(f"found {value!r}, expected the module's prefix: 1 to 60 letters, digits, '-' or '_'")
        return value

    @field_validator("matcher_config", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        return [part for part in value.split(":") if part] if isinstance(value, str) else value

    @field_validator("matcher_config")
    @classmethod
    def _valid_parameters(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if not PARAMETER.match(name):
                raise ValueError(f"found {name!r}, expected an SSM parameter name such as {cls.default_path('ci')}")
        return value

    @staticmethod
    def default_path(prefix: str) -> str:
        return autoscaler.matcher_config_path(prefix)

    @property
    def bus_name(self) -> str:
        return autoscaler.bus_name(self.prefix)

    @property
    def discovery_pattern(self) -> tuple[str, list[str]]:
        """The build queues' name pattern and the runner type keys it selects (discovery's queue_name_pattern
        and match): every key under the multi-runner module, the prefix alone under the single-runner one."""
        if self.layout == "single-runner":
            return "{runner_type}-queued-builds", [self.prefix]
        return "{prefix}-{runner_type}-queued-builds", ["*"]

    def log_groups(self, key: str) -> autoscaler.LogGroups:
        return autoscaler.log_groups(self.prefix, key, self.layout)
