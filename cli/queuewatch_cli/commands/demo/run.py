"""`queuewatch demo`: the incident that motivated queuewatch, end to end, on an in-process moto.

14 jobs queue on linux.2xlarge, the oldest 114 minutes old, while the other
runner types are healthy. Jobs kept arriving as usual, but the scale-up Lambda
stopped consuming them 15 minutes ago: the triage names that from the queue's
AWS/SQS history. The real handlers run on real-shaped events; the page is
shown as the pager, the chat channel and an e-mail subscriber get it (--json: also
the raw SNS notification and the JSON alert). The next tick pages nothing; the
autoscaler then drains the queue and the resolve arrives; status, history and a
backtest show the operator's side; part 3 escalates a queue from P2 to P1 as one incident; part 4 pages on a
queue-time SLO's burn rate and shows `queuewatch slo`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest.mock import patch

import boto3

from queuewatch_cli.commands.demo.decisions import show_decisions
from queuewatch_cli.commands.demo.escalation import show_escalation
from queuewatch_cli.commands.demo.harness import DEMO_ENV, JOBS_TABLE, REGION, Demo
from queuewatch_cli.commands.demo.incident import show_incident
from queuewatch_cli.commands.demo.slo import show_slo
from queuewatch_cli.commands.demo.tracked import show_tracked


def play(demo: Demo) -> int:
    """The demo's parts in order, on one harness: 0 when each says OK."""
    demo.setup()
    start = demo.start
    first = show_incident(demo)
    tracked_ok = show_tracked(demo, start + timedelta(minutes=10))
    escalated = show_escalation(demo, start + timedelta(minutes=20), Path(os.environ["QUEUEWATCH_CONFIG"]))
    decided = show_decisions(demo.out, Path(os.environ["QUEUEWATCH_CONFIG"]), JOBS_TABLE, REGION, start)
    slo_ok = show_slo(demo, JOBS_TABLE, Path(os.environ["QUEUEWATCH_CONFIG"]))
    demo.out(
        "\nThe demo's state ends with it. To try status, history, silences and backtest on a local stack: "
        "queuewatch local up (and queuewatch local down to stop it)."
    )
    return 0 if first and tracked_ok and escalated and decided and slo_ok else 1


def run_demo(
    out: Callable[[str], None] = print,
    *,
    raw: bool = False,
    endpoint_url: str | None = None,
    after: Callable[[Callable[[str], Any]], None] | None = None,
    start: datetime | None = None,
) -> int:
    """The demo on an in-process moto, or on the moto server at `endpoint_url` (`queuewatch local up`: then
    its timeline starts at `start`, in the past, and an incident is left firing now), then `after` with a
    client maker, while the demo's environment still holds."""
    with ExitStack() as stack:
        # The demo turns EMF output off to keep the page readable; Powertools warns about that.
        stack.enter_context(warnings.catch_warnings())
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        # The demo's environment ends with the demo.
        env = {**DEMO_ENV, "AWS_ENDPOINT_URL": endpoint_url} if endpoint_url else DEMO_ENV
        stack.enter_context(patch.dict(os.environ, env))
        if endpoint_url is None:
            from moto import mock_aws  # a development dependency: only the demo needs it

            stack.enter_context(mock_aws())
        demo = Demo(out, raw, start)
        code = play(demo)
        if endpoint_url is not None:
            demo.leave_incident(datetime.now(UTC).replace(second=0, microsecond=0))
        if after is not None:
            after(lambda service: boto3.client(service, region_name=REGION))  # type: ignore[call-overload]
        return code
    return 1  # pragma: no cover - ExitStack does not swallow exceptions
