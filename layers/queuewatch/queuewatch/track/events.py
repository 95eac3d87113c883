"""GitHub's `workflow_job` webhook payload, as far as queuewatch reads it.

Every field GitHub may leave null (the runner's, `started_at` before a runner takes the job, the
organization of a user-owned repository) is optional, unknown fields are kept out of the way, and an
unknown action parses, so that a new action GitHub adds is ignored rather than refused.
"""

from __future__ import annotations

from datetime import UTC, datetime

from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

TRACKED_ACTIONS: frozenset[str] = frozenset({"waiting", "queued", "in_progress", "completed"})


class _Payload(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class WorkflowJob(_Payload):
    id: int = Field(ge=1)
    run_id: int = Field(ge=1)
    html_url: str | None = None
    status: str
    created_at: AwareDatetime
    started_at: AwareDatetime | None = None
    completed_at: AwareDatetime | None = None
    labels: list[str] = Field(default_factory=list, max_length=100)
    name: str | None = None
    runner_name: str | None = None

    @field_validator("created_at", "started_at", "completed_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else value.astimezone(UTC)


class Account(_Payload):
    login: str


class Repository(_Payload):
    full_name: str
    owner: Account | None = None


class WorkflowJobEvent(_Payload):
    """The webhook body: the same whether it came through the autoscaler's bus (as `detail`) or directly."""

    action: str
    workflow_job: WorkflowJob
    repository: Repository
    organization: Account | None = None

    @property
    def tracked(self) -> bool:
        return self.action in TRACKED_ACTIONS

    @property
    def org(self) -> str:
        if self.organization is not None:
            return self.organization.login
        return self.repository.full_name.split("/", 1)[0]


class WorkflowJobBusEvent(EventBridgeModel):
    """The autoscaler's bus: `source` github, `detail-type` workflow_job, GitHub's body as `detail`."""

    detail: WorkflowJobEvent
