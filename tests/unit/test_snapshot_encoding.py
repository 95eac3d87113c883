"""The collector's return value: plain while small, gzip+base64 when large, refused when too large to deliver."""

from __future__ import annotations

import base64
import gzip
import json
import random

import pytest
from support import T0, runner_type, snapshot

from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.snapshot import Snapshot
from queuewatch.runtime import wire as wire_module
from queuewatch.runtime.wire import (
    COMPRESS_ABOVE_BYTES,
    MAX_PAYLOAD_BYTES,
    SnapshotTooLarge,
    decode_snapshot,
    encode_snapshot,
)

FAMILIES = ["linux", "linux.arm64", "windows", "linux.g5.4xlarge.nvidia.gpu", "linux.rocm.gpu", "macos.m1"]


def fleet(size: int, seed: int = 7) -> Snapshot:
    """A fleet with realistic names and a mix of empty, queueing and unreadable runner types."""
    rng = random.Random(seed)
    types = []
    for i in range(size):
        name = f"{rng.choice(FAMILIES)}.{rng.choice(['2xlarge', '4xlarge', '12xlarge', 'metal'])}.v{i}"
        queued = rng.random() < 0.1
        types.append(
            runner_type(
                name,
                queue_size=rng.randint(1, 40) if queued else 0,
                queue_time=rng.randint(5, 7200) if queued else 0,
                region=rng.choice(["us-east-1", "us-east-2"]),
            )
            if rng.random() > 0.01
            else runner_type(name, queue_size=None, queue_time=None)
        )
    return snapshot(T0, *types)


def test_a_small_snapshot_stays_plain_json() -> None:
    small = fleet(10)
    payload = encode_snapshot(small)
    assert payload == small.model_dump(mode="json", exclude_none=True)
    assert decode_snapshot(json.loads(json.dumps(payload))) == small


def test_a_large_snapshot_is_compressed_and_reads_back_equal() -> None:
    large = fleet(5000)
    plain_size = len(json.dumps(large.model_dump(mode="json", exclude_none=True), separators=(",", ":")))
    payload = encode_snapshot(large)
    sent = len(json.dumps(payload))
    assert plain_size > MAX_PAYLOAD_BYTES > sent  # would not fit plain; fits compressed
    assert payload["encoding"] == "gzip+base64" and payload["runner_type_count"] == 5000
    assert decode_snapshot(json.loads(json.dumps(payload))) == large
    # Anyone can read it: base64, then gunzip.
    assert json.loads(gzip.decompress(base64.b64decode(payload["data"])))["snapshot_id"] == large.snapshot_id


def test_the_switch_is_at_the_threshold() -> None:
    sizes = {}
    for n in (250, 350):
        plain = fleet(n).model_dump(mode="json", exclude_none=True)
        sizes[n] = len(json.dumps(plain, separators=(",", ":")))
        assert ("encoding" in encode_snapshot(fleet(n))) == (sizes[n] > COMPRESS_ABOVE_BYTES)
    assert sizes[250] <= COMPRESS_ABOVE_BYTES < sizes[350]


def test_a_snapshot_too_large_to_deliver_is_refused_with_the_remedy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire_module, "MAX_PAYLOAD_BYTES", 20_000)
    with pytest.raises(SnapshotTooLarge, match=r"5000 runner types is [\d,]+ bytes compressed.*SCALE_OUT"):
        encode_snapshot(fleet(5000))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"data": "not base64!"}, "not gzip"),
        ({"data": base64.b64encode(b"plain text").decode()}, "not gzip"),
        ({"runner_type_count": 4999}, "does not match"),
        ({"snapshot_id": "another"}, "does not match"),
        ({"encoding": "zstd"}, "encoding"),
    ],
)
def test_a_damaged_compressed_snapshot_is_rejected(change: dict[str, object], reason: str) -> None:
    payload = {**encode_snapshot(fleet(5000)), **change}
    with pytest.raises(ValueError, match=reason):
        decode_snapshot(payload)


def test_a_payload_that_expands_without_bound_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    payload = encode_snapshot(fleet(5000))
    monkeypatch.setattr(wire_module, "MAX_DECODED_BYTES", 100_000)
    with pytest.raises(ValueError, match="expands past"):
        decode_snapshot(payload)


def with_forecast_inputs(fleet_snapshot: Snapshot, seed: int = 11) -> Snapshot:
    """Every runner type under a forecast rule, as the collector fills them (collect/forecast.py): most idle
    (no job in the window, no count read), a tenth busy, a hundredth at their maximum; figures as varied as
    production's, so compression gains nothing from repetition it would not meet."""
    rng = random.Random(seed)
    types = []
    for found in fleet_snapshot.runner_types:
        roll = rng.random()
        if roll < 0.89:
            ran = rng.random() < 0.3  # a job an idle pool ran in the history read: its run time is known
            inputs = ForecastInputs(
                window_seconds=900, arrived=0, run_seconds=round(rng.uniform(60, 3600), 1) if ran else None
            )
        else:
            maximum = rng.randint(10, 400)
            inputs = ForecastInputs(
                window_seconds=900,
                arrived=rng.randint(1, 120),
                run_seconds=round(rng.uniform(60, 7200), 1),
                startup_seconds=round(rng.uniform(20, 300), 1),
                running=rng.randint(1, maximum),
                running_seconds=round(rng.uniform(10, 3600), 1),
                runners=maximum if roll > 0.99 else rng.randint(0, maximum),
                maximum=maximum,
                runners_from="log",
                runners_age_seconds=round(rng.uniform(0, 400), 1),
            )
        types.append(found.model_copy(update={"forecast": inputs}))
    return fleet_snapshot.model_copy(update={"runner_types": types})


def test_5000_runner_types_all_under_forecast_rules_fit_the_payload_bound() -> None:
    plain = fleet(5000)
    forecast = with_forecast_inputs(plain)
    before = len(json.dumps(encode_snapshot(plain)))
    after = len(json.dumps(encode_snapshot(forecast)))
    # measured: 80 KB before, 120 KB after (docs/performance.md): a quarter of the bound at most for the inputs
    assert after - before < MAX_PAYLOAD_BYTES // 4 and after < MAX_PAYLOAD_BYTES * 0.6, (before, after)
    assert decode_snapshot(json.loads(json.dumps(encode_snapshot(forecast)))) == forecast
