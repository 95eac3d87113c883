"""`make demo`: the seed incident pages once, stays quiet on the next tick, then resolves."""

from __future__ import annotations

import json
import os

import pytest

from queuewatch_cli.demo import DEMO_ENV, run_demo


def test_the_demo_pages_once_then_resolves(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in DEMO_ENV:
        monkeypatch.setenv(key, os.environ.get(key, ""))  # restored after the test
    lines: list[str] = []
    assert run_demo(lines.append) == 0
    text = "\n".join(lines)
    alerts = [json.loads(line) for line in lines if line.startswith('{\n  "version": "queuewatch.alert/v1"')]
    assert [a["status"] for a in alerts] == ["firing", "resolved", "firing", "resolved"]
    assert alerts[0]["runner_types"][0]["queue_size"] == 14
    assert alerts[0]["runner_types"][0]["queue_time_seconds"] == 114 * 60
    assert "tick 2" in text and text.count("nothing paged") == 3
    status = text.split("=== queuewatch status --table queuewatch-demo-state")[1].split("The autoscaler's queue")[0]
    assert "alerts pending or firing: 1" in status
    assert "jobs-queueing / all: firing since" in status and "sequence 1; outbox: empty" in status
    assert "    linux.2xlarge: firing since" in status
    assert "; queue size 14, queue time 1h55m (Queuewatch metrics at " in status
    assert "active silences: none" in status and "last applied tick (the last that changed state): " in status
    replay = text.split("=== queuewatch backtest --config config/queuewatch.yaml --compare ")[1]
    first_tick = text.split("=== tick 1 at ")[1][:5]
    only_a = replay.split("pages only A sends: ")[1]
    assert only_a.startswith("1\n") and only_a.split("\n")[1].split(" -> ")[0].endswith(f" {first_tick}")
    assert "pages only B sends: 0" in replay and "queue-size-150.yaml: 0 page(s)" in replay
    png = replay.split("timeline written to ")[1].split("\n")[0]
    with open(png, "rb") as drawn:
        assert drawn.read(8) == b"\x89PNG\r\n\x1a\n"
    # The second incident, which only tracking sees: the jobs' own figures, the missing requests first.
    [tracked] = alerts[2]["runner_types"]
    assert (tracked["queue_size"], tracked["queue_time_seconds"], tracked["signals"]["scale_up_requests"]) == (
        14,
        114 * 60,
        0,
    )
    assert tracked["triage"]["findings"][0]["cause"] == "no_scale_up_request"
    assert len(tracked["oldest_jobs"]) == 5 and tracked["oldest_jobs"][0]["url"].startswith("https://github.com/")
    assert "JOBS_TABLE" not in os.environ  # the demo's environment ends with it
    [finding, *_] = alerts[0]["runner_types"][0]["triage"]["findings"]
    assert finding["cause"] == "scale_up_failing"
    assert (
        "the queue grew from 3 to 14 jobs in 15m while the scale-up consumer dequeued 0 (usually 15"
        in (finding["detail"])
    )
    assert "Subject: ALARM: P2 1 runner type queueing, max queue time 1h54m, max queue size 14" in text
    assert "  1. Scale-up stalled or failing: the queue grew from 3 to 14 jobs" in text
