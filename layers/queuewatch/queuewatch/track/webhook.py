"""GitHub's workflow_job webhook through a Lambda Function URL, for fleets whose autoscaler has no bus.

The order matters: the size, then the signature over the raw bytes, and only then anything parsed.
The body is never logged. Answers: 401 unsigned or badly signed, 413 over GitHub's payload cap,
400 malformed, 2xx for any other event type (nothing stored) and for a redelivery (dropped).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from queuewatch.track.signature import is_signed_by
from queuewatch.track.stage import WORKFLOW_JOB, TrackResult, parse_body
from queuewatch.track.transitions import TrackInputError

# GitHub caps webhook payloads at 25 MB (Lambda refuses a Function URL request over 6 MB before this runs).
MAX_BODY_BYTES = 25 * 1024 * 1024
SIGNATURE_HEADER = "x-hub-signature-256"
EVENT_HEADER = "x-github-event"
DELIVERY_HEADER = "x-github-delivery"


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    message: str

    def as_function_url(self) -> dict[str, Any]:
        return {
            "statusCode": self.status,
            "headers": {"content-type": "application/json"},
            "body": json.dumps({"message": self.message}),
        }


class WebhookRequest:
    """The parts of a Function URL request the webhook reads; header names are case-insensitive."""

    def __init__(self, headers: Mapping[str, str], body: str | None, is_base64: bool) -> None:
        self.headers = {name.lower(): value for name, value in headers.items()}
        self._body = body or ""
        self._is_base64 = is_base64

    @classmethod
    def of(cls, event: Mapping[str, Any]) -> WebhookRequest:
        return cls(event.get("headers") or {}, event.get("body"), bool(event.get("isBase64Encoded")))

    def raw_body(self) -> bytes:
        if not self._is_base64:
            return self._body.encode("utf-8")
        try:
            return base64.b64decode(self._body, validate=True)
        except (binascii.Error, ValueError):
            raise TrackInputError("webhook: the body is flagged base64 but is not base64") from None


def handle(
    request: WebhookRequest,
    secret: Callable[[], str],
    claim: Callable[[str], bool],
    release: Callable[[str], None],
    apply: Callable[[Any], TrackResult],
) -> tuple[Response, TrackResult | None]:
    """Check, then apply one delivery. `claim` returns False for a delivery seen before; `release`
    forgets a claim when applying fails, so GitHub's redelivery of it is applied, not dropped."""
    try:
        body = request.raw_body()
    except TrackInputError as error:
        return Response(400, str(error)), None
    if len(body) > MAX_BODY_BYTES:
        return Response(413, f"body of {len(body)} bytes, over GitHub's {MAX_BODY_BYTES}-byte cap"), None
    signature = request.headers.get(SIGNATURE_HEADER)
    if not signature:
        return Response(401, f"missing {SIGNATURE_HEADER} header"), None
    if not is_signed_by(secret(), body, signature):
        return Response(401, f"{SIGNATURE_HEADER} does not match the body under the configured secret"), None
    event_type = request.headers.get(EVENT_HEADER, "")
    if event_type != WORKFLOW_JOB:
        return Response(202, f"event {event_type or '(none)'!r} is not tracked; nothing stored"), None
    delivery = request.headers.get(DELIVERY_HEADER, "").strip()
    if not delivery or len(delivery) > 128:
        return Response(400, f"missing or malformed {DELIVERY_HEADER} header"), None
    try:
        document = json.loads(body)
        if not isinstance(document, dict):
            raise TrackInputError(f"webhook delivery {delivery}: the body is not a JSON object")
        event = parse_body(document, f"webhook delivery {delivery}")
    except (ValueError, TrackInputError) as error:
        # json's errors name a position in the body, never its text.
        reason = str(error) if isinstance(error, TrackInputError) else f"not JSON ({type(error).__name__})"
        return Response(400, reason), None
    if not claim(delivery):
        return Response(200, f"delivery {delivery} was applied before; dropped as a duplicate"), None
    try:
        result = apply(event)
    except TrackInputError as error:
        release(delivery)
        return Response(400, str(error)), None
    except BaseException:
        release(delivery)
        raise
    return Response(200, f"job {result.job_id}: {result.outcome}"), result
