"""GitHub's workflow_job webhook, taken directly (for autoscalers without an event bus): check the
signature before reading anything, answer other events without storing, drop redeliveries."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pydantic import ValidationError

from queuewatch.adapters.job_store import delivery_seen, remember_delivery
from queuewatch.frozen import FrozenModel
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.jobs import DEFAULT_HISTORY
from queuewatch.track.routing import Router
from queuewatch.track.signature import signature_valid
from queuewatch.track.stage import TrackResult, track

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB and does not send larger ones
TRACKED_EVENT = "workflow_job"


class WebhookRequest(FrozenModel):
    headers: dict[str, str]  # names in lower case
    body: bytes

    @classmethod
    def from_function_url(cls, event: Mapping[str, object]) -> WebhookRequest:
        """A Lambda Function URL event: headers arrive in lower case, a binary body base64-encoded."""
        raw_headers = event.get("headers") or {}
        headers = {str(k).lower(): str(v) for k, v in raw_headers.items()} if isinstance(raw_headers, dict) else {}
        text = event.get("body") or ""
        if not isinstance(text, str):
            raise ValueError("the Function URL event's body is not text")
        if event.get("isBase64Encoded"):
            try:
                return cls(headers=headers, body=base64.b64decode(text, validate=True))
            except binascii.Error as error:
                raise ValueError(f"the Function URL event's base64 body does not decode: {error}") from error
        return cls(headers=headers, body=text.encode())


class WebhookResponse(FrozenModel):
    status: int
    message: str
    result: TrackResult | None = None

    def for_function_url(self) -> dict[str, object]:
        body: dict[str, object] = {"message": self.message}
        if self.result is not None:
            body["result"] = self.result.model_dump(mode="json", exclude_none=True)
        return {"statusCode": self.status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def receive(
    request: WebhookRequest,
    secret: str,
    router: Router,
    dynamodb: DynamoDBClient,
    table: str,
    now: datetime,
    *,
    history: timedelta = DEFAULT_HISTORY,
) -> WebhookResponse:
    """Refuse what is unsigned, too large or malformed; store a workflow_job event once per delivery.
    The event's time is its receipt, `now`: GitHub's body carries none."""
    if len(request.body) > MAX_BODY_BYTES:
        return WebhookResponse(status=413, message=f"body of {len(request.body)} bytes, over GitHub's 25 MB")
    if not signature_valid(secret, request.body, request.headers.get("x-hub-signature-256")):
        return WebhookResponse(status=401, message="X-Hub-Signature-256 missing or not this webhook's secret")
    kind = request.headers.get("x-github-event", "")
    if kind != TRACKED_EVENT:
        return WebhookResponse(status=202, message=f"{kind or 'an event with no X-GitHub-Event'}: not tracked")
    delivery = request.headers.get("x-github-delivery")
    if not delivery:
        return WebhookResponse(status=400, message="X-GitHub-Delivery missing")
    if delivery_seen(dynamodb, table, delivery):
        return WebhookResponse(status=200, message=f"delivery {delivery} already applied")
    try:
        event = WorkflowJobEvent.model_validate(json.loads(request.body))
    except (ValueError, ValidationError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return WebhookResponse(status=400, message=f"not a workflow_job payload: {_first_problem(error)}")
    result = track(event, router, dynamodb, table, now, occurred_at=now, history=history)
    remember_delivery(dynamodb, table, delivery, now)
    return WebhookResponse(status=200, message=result.outcome, result=result)


def _first_problem(error: Exception) -> str:
    """Where the body is wrong, without echoing the body."""
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        return f"{'.'.join(str(part) for part in first['loc'])}: {first['msg']}"
    return type(error).__name__
