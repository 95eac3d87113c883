"""GitHub's workflow_job webhook body, as GitHub documents it, and the two envelopes it arrives in.

Lenient where GitHub is: unknown fields are ignored, runner fields are null until a runner is
assigned, and an action this version does not know is kept (the stage ignores it) rather than refused.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from queuewatch.track.schema import STATUS_RANK, JobStatus


class _GitHubModel(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


def _as_utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    # GitHub sends "Z" (UTC); a time without an offset is read as UTC rather than the host's zone.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class WorkflowJob(_GitHubModel):
    id: int = Field(gt=0)
    run_id: int = Field(gt=0)
    html_url: str = ""
    status: str | None = None
    conclusion: str | None = None
    created_at: datetime
    started_at: datetime | None = None
    completed_at: datetime | None = None
    name: str | None = None
    labels: list[str] = Field(default_factory=list)
    runner_id: int | None = None
    runner_name: str | None = None
    runner_group_id: int | None = None
    runner_group_name: str | None = None

    @field_validator("created_at", "started_at", "completed_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return _as_utc(value)

    @property
    def has_runner(self) -> bool:
        """A job cancelled while queued completes without ever getting a runner: it never ran."""
        return self.runner_id is not None or bool(self.runner_name)


class Owner(_GitHubModel):
    login: str


class Repository(_GitHubModel):
    full_name: str = Field(min_length=3)
    owner: Owner


class Organization(_GitHubModel):
    login: str


class WorkflowJobEvent(_GitHubModel):
    """The body of a `workflow_job` webhook delivery: what the autoscaler's bus carries as `detail`."""

    action: str
    workflow_job: WorkflowJob
    repository: Repository
    organization: Organization | None = None

    @property
    def status(self) -> JobStatus | None:
        """The status this action moves the job to; None for an action GitHub may add later."""
        return self.action if self.action in STATUS_RANK else None  # type: ignore[return-value]

    @property
    def org(self) -> str:
        return self.organization.login if self.organization else self.repository.owner.login


class BusEvent(_GitHubModel):
    """What an EventBridge rule delivers: the envelope, GitHub's body as `detail`, left raw here so a body
    that is not a workflow_job gets its own error (stage.parse_detail)."""

    id: str
    source: str
    detail_type: str = Field(alias="detail-type")
    time: datetime | None = None
    detail: dict[str, Any]
