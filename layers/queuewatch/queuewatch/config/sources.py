"""Where each signal comes from: the queue itself (`sqs`), or any CloudWatch metric query."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator

from queuewatch.base.durations import Duration
from queuewatch.base.frozen import FrozenModel
from queuewatch.config.names import STAT, Region
from queuewatch.model.signals import PATH_SIGNAL_NAMES, SQS_METRICS, SQS_SOURCE, SignalName

EXCEPTION_PLACEHOLDER = "{exception}"
APP_PLACEHOLDER = "{app_id}"


class MetricQuery(FrozenModel):
    """One CloudWatch metric: any namespace, name, dimensions and statistic.

    Dimension values may say `{runner_type}`, filled in per runner type, so one
    query in `defaults.signals` serves a whole fleet.
    """

    namespace: str = Field(min_length=1, max_length=255)
    metric: str = Field(min_length=1, max_length=255)
    dimensions: dict[str, str] = Field(default_factory=dict, max_length=30)
    stat: str = "Maximum"
    period: Duration = 60
    unit: Literal["count", "seconds", "minutes", "hours", "percent"] = "count"
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

    apps: list[str] = Field(
        default_factory=list,
        max_length=50,
        description="github_app_rate_limit only: the GitHub App ids to read, each filled in for '{app_id}'",
    )

    @field_validator("apps")
    @classmethod
    def _app_ids(cls, value: list[str]) -> list[str]:
        for app in value:
            if not re.match(r"^\d{1,20}$", app):
                raise ValueError(f'found {app!r}, expected a GitHub App id, digits quoted as text: "123456"')
        return value

    @field_validator("stat")
    @classmethod
    def _known_stat(cls, value: str) -> str:
        if not STAT.match(value):
            raise ValueError(f"found {value!r}, expected a CloudWatch statistic such as Maximum, Sum, Average or p99")
        return value

    @field_validator("period")
    @classmethod
    def _valid_period(cls, value: int) -> int:
        if value <= 0 or (value % 60 and value not in (1, 5, 10, 30)) or value > 3600:
            # Over an hour, one datapoint averages over more than "now" can mean for a queue.
            raise ValueError(f"found {value}s, expected 1s, 5s, 10s, 30s or a multiple of 60s up to 1h")
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

    def for_app(self, app: str) -> MetricQuery:
        return self.model_copy(
            update={"dimensions": {k: v.replace(APP_PLACEHOLDER, app) for k, v in self.dimensions.items()}}
        )

    @property
    def names_app(self) -> bool:
        return any(APP_PLACEHOLDER in v for v in self.dimensions.values())

    @property
    def per_runner_type(self) -> bool:
        """False for a fleet-wide metric: one that names no runner type."""
        return any("{runner_type}" in v for v in self.dimensions.values())

    @property
    def names_exception(self) -> bool:
        return EXCEPTION_PLACEHOLDER in self.metric or any(EXCEPTION_PLACEHOLDER in v for v in self.dimensions.values())

    @property
    def seconds_per_unit(self) -> int:
        return {"count": 1, "seconds": 1, "minutes": 60, "hours": 3600, "percent": 1}[self.unit]


SignalSource = Literal["sqs"] | MetricQuery


def _check_signal_sources(signals: dict[SignalName, SignalSource]) -> dict[SignalName, SignalSource]:
    for name, source in signals.items():
        if name in PATH_SIGNAL_NAMES:
            raise ValueError(
                f"signal {name.value!r} is read from the autoscaler's job-retry or dead-letter queue found beside "
                "the build queue; expected no source for it (name the queue with job_retry_queue or dead_letter_queue)"
            )
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
        if name == SignalName.GITHUB_APP_RATE_LIMIT and not (source.apps and source.names_app):
            lacking = "no 'apps' list" if not source.apps else "no '{app_id}' placeholder in a dimension value"
            raise ValueError(
                f"signal 'github_app_rate_limit': found {lacking}; expected 'apps: [ids]' and "
                "dimensions: {AppId: '{app_id}'}, one query per GitHub App"
            )
        if name != SignalName.GITHUB_APP_RATE_LIMIT and (source.apps or source.names_app):
            raise ValueError(
                f"signal {name.value!r}: found 'apps' or '{{app_id}}', which only github_app_rate_limit takes"
            )
        if name != SignalName.EC2_EXCEPTIONS and (source.exceptions or source.names_exception):
            raise ValueError(
                f"signal {name.value!r}: found 'exceptions' or '{{exception}}', which only ec2_exceptions takes"
            )
    return signals


Signals = Annotated[dict[SignalName, SignalSource], AfterValidator(_check_signal_sources)]
