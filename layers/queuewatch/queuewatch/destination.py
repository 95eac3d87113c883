"""Lambda destination records: how the collector's result reaches the evaluator.

AWS documents one envelope for success and failure; `requestContext.condition`
tells which, and `responsePayload` holds the return value or the error.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


class RequestContext(BaseModel):
    model_config = ConfigDict(extra="allow")

    request_id: str = Field(alias="requestId", min_length=1)
    function_arn: str = Field(alias="functionArn", pattern=r"^arn:aws[a-z-]*:lambda:")
    condition: Literal["Success", "RetriesExhausted", "EventAgeExceeded", "RecursiveInvocation"]
    approximate_invoke_count: int = Field(alias="approximateInvokeCount", ge=1)


class ResponseContext(BaseModel):
    model_config = ConfigDict(extra="allow")

    status_code: int | None = Field(alias="statusCode", default=None)
    executed_version: str | None = Field(alias="executedVersion", default=None)
    function_error: str | None = Field(alias="functionError", default=None)


class FunctionError(BaseModel):
    model_config = ConfigDict(extra="allow")

    error_message: str = Field(alias="errorMessage", default="")
    error_type: str = Field(alias="errorType", default="Unknown")


class DestinationRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: Literal["1.0"]
    timestamp: AwareDatetime
    request_context: RequestContext = Field(alias="requestContext")
    request_payload: Any = Field(alias="requestPayload", default=None)
    response_context: ResponseContext | None = Field(alias="responseContext", default=None)
    response_payload: Any = Field(alias="responsePayload", default=None)

    @property
    def succeeded(self) -> bool:
        return self.request_context.condition == "Success"
