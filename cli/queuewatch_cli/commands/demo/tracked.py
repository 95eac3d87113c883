"""The demo's part 2, with job tracking on: GitHub's workflow_job events reach the track stage's handler, and the
incident only tracking sees pages: 14 jobs queued for 114 minutes while the autoscaler's queue is empty. The
jobs then start, and the resolve arrives.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from typing import Any
from unittest.mock import patch

import boto3

from queuewatch_cli.commands.demo.harness import JOBS_TABLE, REGION, Demo
from queuewatch_cli.devkit.moto_tables import create_jobs_table


def tracked_ticks(demo: Demo, at: datetime) -> tuple[list[dict[str, Any]], ...]:
    """Part 2's ticks: the jobs queue, then start; what each tick paged."""
    created = at - timedelta(minutes=114)
    jobs = range(9_100_000, 9_100_014)
    for job_id in jobs:
        demo.track("queued", job_id, created)
    demo.put_ages(at, 0)
    fifth = demo.show(f"tick 5 at {at:%H:%M} (jobs queued, no scale-up request)", demo.tick(at), ("email",))
    started = at + timedelta(seconds=30)
    demo.out(f"\nAt {started:%H:%M:%S} runners take the 14 jobs: their in_progress events arrive.")
    for job_id in jobs:
        demo.track("in_progress", job_id, created, started)
    at += timedelta(minutes=1)
    demo.put_ages(at, 0)
    sixth = demo.show(f"tick 6 at {at:%H:%M} (jobs started; keep_firing_for 5m starts)", demo.tick(at))
    at += timedelta(minutes=5)
    demo.put_ages(at, 0)
    seventh = demo.show(f"tick 7 at {at:%H:%M} (clear for 5m)", demo.tick(at))
    return fifth, sixth, seventh


def show_tracked(demo: Demo, at: datetime) -> bool:
    """The second incident, which only tracking sees: GitHub holds 14 jobs queued for 114 minutes while
    the autoscaler's queue is empty (its runners never took the jobs, or the requests were dropped)."""
    demo.out(
        "\n\nPart 2, with job tracking on (AutoscalerEventBusName set): GitHub's workflow_job events reach "
        "TrackFunction. 14 jobs have waited 114 minutes on linux.2xlarge, and the autoscaler's queue is empty: "
        "the scale-up Lambda took their requests, and no runner took the jobs."
    )
    create_jobs_table(boto3.client("dynamodb", region_name=REGION), JOBS_TABLE)
    # What the template gives the functions when tracking is on, for this part only.
    with patch.dict(os.environ, {"JOBS_TABLE": JOBS_TABLE}):
        fifth, sixth, seventh = tracked_ticks(demo, at)
    paged = [json.loads(envelope["Message"]) for envelope in fifth]
    ok = (
        len(paged) == 1
        and paged[0]["runner_types"][0]["triage"]["findings"][0]["cause"] == "no_scale_up_request"
        and paged[0]["max_queue_time_seconds"] == 114 * 60
        and not sixth
        and len(seventh) == 1
        and json.loads(seventh[0]["Message"])["status"] == "resolved"
    )
    verdict = "tracked jobs paged, dropped requests named first, one resolve"
    demo.out("\n" + (f"demo OK: {verdict}" if ok else "demo FAILED: see the ticks above"))
    return ok
