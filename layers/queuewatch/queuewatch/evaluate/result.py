"""What one evaluation did: the evaluator's return value, logged and turned into metrics."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, Field, PlainSerializer

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.model.forecast.board import ForecastBoard

Instance = Annotated[InstanceKey, PlainSerializer(str, return_type=str)]  # "rule#runner_type" in JSON


class EvaluationResult(BaseModel):
    outcome: Literal["applied", "unchanged", "stale", "conflict"]
    evaluated_at: AwareDatetime
    observation: str
    firing: list[Instance] = Field(default_factory=list, description="rule#runner_type now firing")
    pending: list[Instance] = Field(default_factory=list)
    degraded: list[str] = Field(default_factory=list, description="runner types with signals missing")
    pages_sent: list[str] = Field(default_factory=list)
    pages_failed: list[str] = Field(default_factory=list)
    pages_retried: list[str] = Field(default_factory=list)
    log_failed: list[str] = Field(default_factory=list, description="sent-log items not written (the pages went)")
    deferred: list[str] = Field(default_factory=list, description="groups left to the next tick: out of time")
    writes: int = 0
    read_units: float = 0.0
    # The tick's forecasts (evaluate/forecast_board.py), for its metrics; not part of the returned document.
    forecast_board: ForecastBoard | None = Field(default=None, exclude=True)
