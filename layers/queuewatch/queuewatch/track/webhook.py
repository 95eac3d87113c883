"""GitHub's workflow_job webhook, taken directly (for autoscalers without an event bus): check the
signature before reading anything, answer other events without storing, and hand each workflow_job on
to a queue that retries and dead-letters. GitHub never retries a delivery itself, so the webhook answers
2xx only once SQS holds the event: what it acknowledges is durable. It reads no table and no config."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Literal
from urllib.parse import unquote_to_bytes

from pydantic import ValidationError

from queuewatch.adapters.deliveries import MAX_MESSAGE_BYTES, send_delivery
from queuewatch.base.frozen import FrozenModel
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.signature import signature_valid

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB and does not send larger ones
TRACKED_EVENT = "workflow_job"
MAX_DELIVERY_ID = 128  # a GUID from GitHub; anything longer is not one
# The two content types a GitHub webhook can be set to send; the form (`payload=<JSON, form-encoded>`) is
# GitHub's default when a hook is made in its settings page.
JSON_TYPE = "application/json"
FORM_TYPE = "application/x-www-form-urlencoded"
FORM_FIELD = b"payload"

# Why a delivery was refused: each is counted (WebhookDeliveriesRefused, by Reason) and a rate of them alarms.
Refusal = Literal["signature", "content-type", "size", "parse"]


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
        return cls(headers=headers, body=text.encode("utf-8", errors="surrogatepass"))  # anyone's text: never raises


class WebhookResponse(FrozenModel):
    status: int
    message: str
    job_id: int | None = None
    refused: Refusal | None = None  # set on every refusal: what the refusal metric counts

    def for_function_url(self) -> dict[str, object]:
        body: dict[str, object] = {"message": self.message}
        if self.job_id is not None:
            body["job_id"] = self.job_id
        return {"statusCode": self.status, "headers": {"content-type": "application/json"}, "body": json.dumps(body)}


def receive(request: WebhookRequest, secret: str, sqs: SQSClient, queue_url: str, now: datetime) -> WebhookResponse:
    """Refuse what is unsigned, too large or malformed; queue a workflow_job event, then answer 202.

    The signature is checked over the raw body exactly as it arrived (GitHub signs the bytes it sends: the JSON,
    or the whole form `payload=...`), before anything parses it. The event is parsed here, after the signature,
    so that GitHub's delivery log shows a payload queuewatch cannot read (400) rather than a 2xx for an event the
    consumer would refuse. What is queued is the event as queuewatch reads it (events.py), small whatever GitHub
    sent, with its receipt time `now`: GitHub's body carries no time of the event, and the consumer, applying it
    later, takes the receipt as when it happened (when a job that waited for approval was queued). A failed send
    raises: the delivery fails (GitHub shows it, to be redelivered), and WebhookErrorsAlarm pages the monitor
    topic."""
    if len(request.body) > MAX_BODY_BYTES:
        return refuse(413, "size", f"body of {len(request.body)} bytes, over GitHub's 25 MB")
    if not signature_valid(secret, request.body, request.headers.get("x-hub-signature-256")):
        return refuse(401, "signature", "X-Hub-Signature-256 missing or not this webhook's secret (WebhookSecretArn)")
    content_type = request.headers.get("content-type", JSON_TYPE).split(";", 1)[0].strip().lower()
    if content_type not in (JSON_TYPE, FORM_TYPE):
        return refuse(415, "content-type", f"content type {content_type[:64]!r}: expected {JSON_TYPE} or {FORM_TYPE}")
    kind = request.headers.get("x-github-event", "")
    if kind != TRACKED_EVENT:
        return WebhookResponse(status=202, message=f"{kind[:64] or 'an event with no X-GitHub-Event'}: not tracked")
    delivery = request.headers.get("x-github-delivery", "")
    if not delivery or len(delivery) > MAX_DELIVERY_ID or not delivery.isascii():
        return refuse(400, "parse", "X-GitHub-Delivery missing or not a delivery id")
    payload = request.body if content_type == JSON_TYPE else form_payload(request.body)
    if payload is None:
        return refuse(400, "parse", "not a workflow_job payload: a form body is one field, payload=<the JSON>")
    try:
        # pydantic's own JSON parser: bounded nesting, and every failure (syntax, encoding, depth, shape)
        # is a ValidationError, so no body anyone signs can make this raise anything else.
        event = WorkflowJobEvent.model_validate_json(payload)
    except ValidationError as error:
        return refuse(400, "parse", f"not a workflow_job payload: {_first_problem(error)}")
    queued = event.model_dump_json(exclude_none=True)
    if len(queued.encode()) + len(delivery) > MAX_MESSAGE_BYTES - 1024:
        return refuse(413, "size", f"the workflow_job event of job {event.workflow_job.id} is too large")
    send_delivery(sqs, queue_url, delivery, queued, received_at=now)
    return WebhookResponse(status=202, message=f"delivery {delivery} queued", job_id=event.workflow_job.id)


def refuse(status: int, reason: Refusal, message: str) -> WebhookResponse:
    return WebhookResponse(status=status, message=message, refused=reason)


def form_payload(body: bytes) -> bytes | None:
    """The JSON of a form delivery: GitHub sends exactly one field, `payload`, form-encoded (a space as `+`).
    None when the body is anything else; the bytes are returned undecoded, so that the JSON parser says what is
    wrong with them."""
    name, equals, value = body.partition(b"=")
    if name != FORM_FIELD or not equals or b"&" in value:
        return None
    return unquote_to_bytes(value.replace(b"+", b" "))


def _first_problem(error: ValidationError) -> str:
    """Where the body is wrong, without echoing the body."""
    first = error.errors(include_input=False, include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "the body"
    return f"{where}: {first['msg']}"
