"""The EventBridge scheduled event that starts each tick.

The fields of Powertools' EventBridgeModel that a schedule sends, modelled here so
that the collector does not import Powertools' whole parser (every AWS event model)
at cold start.
"""

from __future__ import annotations

from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


class ScheduledEvent(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    version: str
    id: str = Field(min_length=1)
    detail_type: str = Field(alias="detail-type")
    source: str
    account: str
    time: AwareDatetime = Field(description="the scheduled time of the tick")
    region: str
    resources: list[str]
    detail: dict[str, Any] | str
