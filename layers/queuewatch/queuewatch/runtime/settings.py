"""Settings each function reads from its environment, validated on each invocation (microseconds);
the config file they name is parsed once per container."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from queuewatch.alerting.alert import QueueBody
from queuewatch.base.errors import QueuewatchError
from queuewatch.config import Config
from queuewatch.config.load import load_config
from queuewatch.model.jobs import HISTORY_DAYS

# Which runner types get their own QueueSize and QueueTime metrics: those whose queue holds jobs, those
# in a pending or firing alert, or none. They are the largest line of the bill at scale (docs/COST.md),
# and no page depends on them.
RunnerTypeMetrics = Literal["queued", "alerting", "off"]


class SettingsError(QueuewatchError):
    """An environment variable is missing or malformed; names the variable."""


class _Settings(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    config_file: Path = Field(alias="QUEUEWATCH_CONFIG")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Self:
        env = os.environ if environ is None else environ
        try:
            return cls.model_validate(dict(env))
        except ValidationError as error:
            problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in error.errors())
            raise SettingsError(f"{cls.__name__} from the environment: {problems}") from error


class CollectSettings(_Settings):
    jobs_table: str | None = Field(alias="JOBS_TABLE", default=None, min_length=3)
    slo_table: str | None = Field(alias="SLO_TABLE", default=None, min_length=3)  # the SLOs' counters

    @field_validator("jobs_table", "slo_table", mode="before")
    @classmethod
    def _empty_is_off(cls, value: object) -> object:
        return None if value == "" else value  # the template passes "" when tracking is off


class EvaluateSettings(_Settings):
    state_table: str = Field(alias="STATE_TABLE", min_length=3)
    alert_topic_arn: str = Field(alias="ALERT_TOPIC_ARN", pattern=r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$")
    stack_name: str = Field(alias="STACK_NAME", default="queuewatch")
    region: str = Field(alias="AWS_REGION", default="us-east-1")
    outbox_lease_seconds: int = Field(alias="OUTBOX_LEASE_SECONDS", default=60, ge=1)
    chat_topic_arn: str | None = Field(
        alias="CHAT_TOPIC_ARN", default=None, pattern=r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$"
    )
    metrics_namespace: str = Field(alias="POWERTOOLS_METRICS_NAMESPACE", default="Queuewatch")
    runner_type_metrics: RunnerTypeMetrics = Field(alias="RUNNER_TYPE_METRICS", default="queued")
    queue_body: QueueBody = Field(alias="QUEUE_BODY", default="alert")
    # The stack's CloudWatch dashboard, every page's "view" link; none: pages carry no view link.
    dashboard_name: str | None = Field(alias="DASHBOARD_NAME", default=None, pattern=r"^[A-Za-z0-9_-]{1,255}$")
    # GitHub's status page (the GitHubStatus parameter); none: not read, for functions with no way out.
    github_status_url: str | None = Field(alias="GITHUB_STATUS_URL", default=None, pattern=r"^https?://\S+$")

    @field_validator("chat_topic_arn", "dashboard_name", "github_status_url", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        return None if value == "" else value  # the template passes "" when the stack has no chat topic

    @property
    def topic_region(self) -> str:
        """The region of the alert topic, which is not always the function's own."""
        return self.alert_topic_arn.split(":")[3]


class TrackSettings(_Settings):
    jobs_table: str = Field(alias="JOBS_TABLE", min_length=3)
    stack_name: str = Field(alias="STACK_NAME", default="queuewatch")
    metrics_namespace: str = Field(alias="POWERTOOLS_METRICS_NAMESPACE", default="Queuewatch")
    # JobsQueued, JobQueueTime, JobRunTime per runner type: an option, billed per metric; the triage reads the
    # jobs' history instead (collect/history.py).
    job_metrics: Literal["on", "off"] = Field(alias="JOB_METRICS", default="off")
    history_days: int = Field(alias="JOB_HISTORY_DAYS", default=HISTORY_DAYS, ge=1, le=365)
    slo_table: str = Field(alias="SLO_TABLE", default="")  # the SLOs' counters (adapters/slo_table/); "": none
    # The autoscaler's prefix (template AutoscalerPrefix) and its matcher config's parameters, ':'-joined
    # (AutoscalerMatcherConfigPath): where the track stage reads the autoscaler's routing (track/matching.py).
    autoscaler_prefix: str = Field(alias="AUTOSCALER_PREFIX", default="")
    matcher_config_path: str = Field(alias="MATCHER_CONFIG_PATH", default="")

    @property
    def history(self) -> timedelta:
        return timedelta(days=self.history_days)

    @property
    def per_runner_type_metrics(self) -> RunnerTypeMetrics:
        return "queued" if self.job_metrics == "on" else "off"


class DigestSettings(_Settings):
    """DigestFunction's: the tables `queuewatch slo` reads, the state table's sent log, the chat topic."""

    slo_table: str = Field(alias="SLO_TABLE", min_length=3)
    jobs_table: str = Field(alias="JOBS_TABLE", min_length=3)
    state_table: str = Field(alias="STATE_TABLE", min_length=3)
    chat_topic_arn: str = Field(alias="CHAT_TOPIC_ARN", pattern=r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$")
    stack_name: str = Field(alias="STACK_NAME", default="queuewatch")
    region: str = Field(alias="AWS_REGION", default="us-east-1")

    @property
    def topic_region(self) -> str:
        return self.chat_topic_arn.split(":")[3]


class WebhookSettings(_Settings):
    """WebhookFunction's: it checks signatures and queues events; it reads no table."""

    webhook_secret_arn: str = Field(
        alias="WEBHOOK_SECRET_ARN", pattern=r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$"
    )
    webhook_queue_url: str = Field(alias="WEBHOOK_QUEUE_URL", pattern=r"^https?://\S+/\d{12}/[\w-]{1,80}$")
    region: str = Field(alias="AWS_REGION", default="us-east-1")
    stack_name: str = Field(alias="STACK_NAME", default="queuewatch")
    metrics_namespace: str = Field(alias="POWERTOOLS_METRICS_NAMESPACE", default="Queuewatch")


@lru_cache(maxsize=4)
def cached_config(path: Path) -> Config:
    """The config, parsed once per container; a bad file fails every invocation with the same clear error."""
    return load_config(path)
