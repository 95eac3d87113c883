"""The Snapshot: what the collector saw on one tick, and what the evaluator judges.

It travels as the collector's return value inside a Lambda destination record,
so it is kept compact: a reading omits what it does not have, and a snapshot
too big to read comfortably in a log goes gzip-compressed (see encode_snapshot).
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from queuewatch.config import SignalName

SNAPSHOT_VERSION = 1
COMPRESSED: Literal["gzip+base64"] = "gzip+base64"
COMPRESS_ABOVE_BYTES = 64 * 1024
# Lambda takes 1 MB for an asynchronous invocation since October 2025 (256 KB before, and the
# destination record carries the scheduled event too): stay under the old limit, which holds anywhere.
MAX_PAYLOAD_BYTES = 240 * 1024
MAX_DECODED_BYTES = 64 * 1024 * 1024  # a compressed payload never expands past this


class SnapshotTooLarge(Exception):
    """The encoded snapshot would not fit in the destination record: the fleet needs another collector."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Reading(_Model):
    """One signal's latest value, or why there is none, and the history the triage compares it with.

    The history comes from the same GetMetricData call as the value: count signals
    carry their sum over the triage window and their usual sum per window before
    it; level signals carry where they stood when the window began.
    """

    value: float | None = None
    age_seconds: float | None = None  # how old the value was when collected
    error: str | None = None  # set exactly when value is None
    window_sum: float | None = None  # count signals: the total over the triage window
    baseline_sum: float | None = None  # count signals: the usual total per window, over the baseline before it
    window_first: float | None = None  # level signals: the first datapoint of the triage window
    window_last: float | None = None  # level signals: the last datapoint of the triage window
    baseline_mean: float | None = None  # level signals: the mean over the baseline before the window
    by_name: dict[str, float] | None = None  # ec2_exceptions: the window's total per exception name, non-zero only
    fleet_wide: bool | None = None  # set when the metric names no runner type: it counts the whole fleet

    @classmethod
    def of(cls, value: float, age_seconds: float = 0.0) -> Reading:
        return cls(value=value, age_seconds=round(age_seconds, 1))

    @classmethod
    def missing(cls, reason: str) -> Reading:
        return cls(error=reason)


class RunnerTypeSnapshot(_Model):
    name: str
    region: str
    queue_name: str
    team: str | None = None
    signals: dict[SignalName, Reading] = Field(default_factory=dict)

    @property
    def degraded(self) -> dict[SignalName, str]:
        """The signals that could not be read, with the reason."""
        return {name: r.error for name, r in self.signals.items() if r.error is not None}

    def value(self, name: SignalName) -> float | None:
        reading = self.signals.get(name)
        return reading.value if reading else None


class DiscoveryResult(_Model):
    region: str
    pattern: str
    found: int = 0
    error: str | None = None


class Snapshot(_Model):
    version: int = SNAPSHOT_VERSION
    snapshot_id: str
    collected_at: AwareDatetime
    runner_types: list[RunnerTypeSnapshot]
    discovery: list[DiscoveryResult] = Field(default_factory=list)
    triage_window_seconds: int = 900  # the span window_sum and window_first cover
    baseline_seconds: int = 10800  # the span before the window that baseline_sum and baseline_mean cover

    @property
    def failed_discovery_regions(self) -> set[str]:
        return {d.region for d in self.discovery if d.error is not None}


class CompressedSnapshot(_Model):
    """A snapshot as the collector returns it once its JSON exceeds COMPRESS_ABOVE_BYTES."""

    version: int = SNAPSHOT_VERSION
    snapshot_id: str
    collected_at: AwareDatetime
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
