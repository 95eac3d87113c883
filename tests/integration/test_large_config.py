"""A config of 5,000 runner types loads and evaluates. Times are printed (pytest -s), never asserted."""

from __future__ import annotations

import time

import pytest
from support import Inbox, StackInMoto, arriving_now, minutes, runner_type, session, snapshot

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.config.load import parse_config
from queuewatch.evaluate.stage import evaluate

COUNT = 5000


def config_text(count: int) -> str:
    lines = ["version: 1", "defaults: {rule: {keep_firing_for: 5m}}", "runner_types:"]
    for i in range(count):
        name = f"linux.t{i:04d}" if i % 10 else f"gpu.t{i:04d}"
        lines.append(f"  - {{name: {name}, queue: {{name: gh-ci-{name.replace('.', '-')}-queued-builds}}}}")
    lines += [
        "rules:",
        "  - {name: jobs-queueing, team: ci-infra, exclude: ['gpu.*'], thresholds: {queue_time: 1m, queue_size: 0}}",
        "  - {name: gpu-queueing, match: ['gpu.*'], thresholds: {queue_time: 5m}, priority: P1, team: gpu-infra}",
    ]
    return "\n".join(lines) + "\n"


def test_five_thousand_runner_types_load_and_evaluate(aws: None, capsys: pytest.CaptureFixture[str]) -> None:
    text = config_text(COUNT)
    started = time.perf_counter()
    config = parse_config(text, source="large.yaml")
    loaded = time.perf_counter() - started
    assert len(config.runner_types) == COUNT
    assert sum(1 for spec in config.runner_types if config.rules_for(spec.name)) == COUNT

    moto = StackInMoto.create(name="big", clients=AwsClients(session()))
    dynamodb, sns, stack = moto.dynamodb, moto.sns, moto.stack
    inbox = Inbox(sns)
    names = [spec.name for spec in config.runner_types]

    quiet = snapshot(minutes(0), *[runner_type(name) for name in names])
    started = time.perf_counter()
    steady = evaluate(quiet, config, dynamodb, sns, stack, clock=arriving_now(quiet))
    quiet_seconds = time.perf_counter() - started
    assert (steady.outcome, steady.writes, steady.firing) == ("unchanged", 0, [])

    # A tenth of the fleet queues at once: 500 alerts written, one page per rule.
    queueing = set(names[::20]) | set(names[1::20])
    incident = snapshot(minutes(1), *[runner_type(n, 7, 900) if n in queueing else runner_type(n) for n in names])
    started = time.perf_counter()
    result = evaluate(incident, config, dynamodb, sns, stack, clock=arriving_now(incident))
    incident_seconds = time.perf_counter() - started
    assert len(result.firing) == len(queueing) == COUNT // 10
    pages = {page["rule"]: page for page in inbox.drain()}
    assert pages["jobs-queueing"]["runner_types_affected"] == COUNT // 20
    assert pages["gpu-queueing"]["runner_types_affected"] == COUNT // 20
    assert len(pages["jobs-queueing"]["runner_types"]) == 50  # listed, worst first; all counted
    assert len(load_state(dynamodb, "state").instances) == COUNT // 10

    size = len(quiet.model_dump_json(exclude_none=True))
    with capsys.disabled():
        print(
            f"\n{COUNT} runner types: config parsed and checked in {loaded:.2f}s; a quiet tick evaluated in "
            f"{quiet_seconds:.2f}s; a tick where {len(queueing)} start queueing in {incident_seconds:.2f}s "
            f"(moto); the quiet snapshot is {size / 1024:.0f} KiB of JSON"
        )
