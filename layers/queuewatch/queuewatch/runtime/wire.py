"""How observations travel: the collector's return value inside a Lambda destination record.

The collector returns its Snapshot as plain JSON while small, gzip+base64 above
COMPRESS_ABOVE_BYTES. Lambda wraps that in a destination record, one envelope for
success and failure: `requestContext.condition` tells which, and `responsePayload`
holds the return value or the error. The evaluator turns the record back into an
observation: a Snapshot, or a CollectorFailure stamped with its tick's time.
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from queuewatch.base.errors import QueuewatchError
from queuewatch.base.frozen import FrozenModel
from queuewatch.model.snapshot import SNAPSHOT_VERSION, CollectorFailure, Observation, Snapshot, UtcDatetime
from queuewatch.runtime.schedule import scheduled_time

COMPRESSED: Literal["gzip+base64"] = "gzip+base64"
COMPRESS_ABOVE_BYTES = 64 * 1024
# Lambda takes 1 MB for an asynchronous invocation since October 2025 (256 KB before, and the
# destination record carries the scheduled event too): stay under the old limit, which holds anywhere.
MAX_PAYLOAD_BYTES = 240 * 1024
MAX_DECODED_BYTES = 64 * 1024 * 1024  # a compressed payload never expands past this


class SnapshotTooLarge(QueuewatchError):
    """The encoded snapshot would not fit in the destination record: the fleet needs another collector."""


class CompressedSnapshot(FrozenModel):
    """A snapshot as the collector returns it once its JSON exceeds COMPRESS_ABOVE_BYTES."""

    version: Literal[1] = SNAPSHOT_VERSION
    snapshot_id: str
    collected_at: UtcDatetime
    runner_type_count: int
    encoding: Literal["gzip+base64"]
    data: str = Field(description="the snapshot's JSON, gzip-compressed, base64-encoded")


def encode_snapshot(snapshot: Snapshot) -> dict[str, Any]:
    """The collector's return value: plain JSON while small, gzip+base64 above COMPRESS_ABOVE_BYTES.

    Raises SnapshotTooLarge when even the compressed form exceeds MAX_PAYLOAD_BYTES: the
    collection then fails loudly (and pages as queuewatch-health) instead of never arriving.
    """
    plain = snapshot.model_dump(mode="json", exclude_none=True)
    text = json.dumps(plain, separators=(",", ":"))
    if len(text) <= COMPRESS_ABOVE_BYTES:
        return plain
    compressor = zlib.compressobj(level=6, wbits=31)  # wbits 31: a gzip stream, readable with gunzip
    packed = compressor.compress(text.encode()) + compressor.flush()
    envelope = CompressedSnapshot(
        snapshot_id=snapshot.snapshot_id,
        collected_at=snapshot.collected_at,
        runner_type_count=len(snapshot.runner_types),
        encoding=COMPRESSED,
        data=base64.b64encode(packed).decode("ascii"),
    ).model_dump(mode="json")
    size = len(json.dumps(envelope))
    if size > MAX_PAYLOAD_BYTES:
        raise SnapshotTooLarge(
            f"the snapshot of {len(snapshot.runner_types)} runner types is {size:,} bytes compressed, over the "
            f"{MAX_PAYLOAD_BYTES:,}-byte limit of a Lambda destination record; split the fleet across "
            "collectors (docs/SCALE_OUT.md)"
        )
    return envelope


def decode_snapshot(payload: Any) -> Snapshot:
    """The Snapshot in a collector's return value, plain or compressed. Raises ValueError on anything else."""
    if not (isinstance(payload, dict) and "encoding" in payload):
        return Snapshot.model_validate(payload)
    envelope = CompressedSnapshot.model_validate(payload)
    try:
        packed = base64.b64decode(envelope.data, validate=True)
        inflater = zlib.decompressobj(wbits=31)
        text = inflater.decompress(packed, MAX_DECODED_BYTES)
    except (binascii.Error, zlib.error) as error:
        raise ValueError(f"its data is not gzip+base64: {error}") from error
    if inflater.unconsumed_tail or not inflater.eof:
        raise ValueError(f"its data is truncated or expands past {MAX_DECODED_BYTES:,} bytes")
    snapshot = Snapshot.model_validate_json(text)
    if (snapshot.snapshot_id, snapshot.collected_at, len(snapshot.runner_types)) != (
        envelope.snapshot_id,
        envelope.collected_at,
        envelope.runner_type_count,
    ):
        raise ValueError("its envelope (snapshot_id, collected_at, runner_type_count) does not match its data")
    return snapshot


# --- Lambda destination records ----------------------------------------------------------


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


def observation_from(record: DestinationRecord) -> Observation:
    """A success record carries the Snapshot; any other condition is a failed collection."""
    if record.succeeded:
        try:
            return decode_snapshot(record.response_payload)
        except ValueError as error:  # pydantic's ValidationError is one too
            raise ValueError(f"the Success record's responsePayload is not a queuewatch Snapshot: {error}") from error
    payload = record.response_payload if isinstance(record.response_payload, dict) else {}
    failure = FunctionError.model_validate(payload)
    return CollectorFailure(
        at=(_scheduled_time(record) or record.timestamp).astimezone(UTC),  # stored and compared in UTC
        error_type=failure.error_type,
        error_message=failure.error_message or record.request_context.condition,
        request_id=record.request_context.request_id,
    )


def _scheduled_time(record: DestinationRecord) -> datetime | None:
    """The failed tick's own time, so failures and snapshots order on one clock."""
    return scheduled_time(record.request_payload)
