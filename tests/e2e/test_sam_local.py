"""The functions through `sam local invoke` in the Lambda image, against a moto server container.

The collector reads the seeded incident; its real output, wrapped as the Lambda destination record
Lambda would send, goes to the evaluator; the page is read from an SQS queue subscribed to the topic.
"""

from __future__ import annotations

import importlib.util
import json
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest

from e2e.conftest import ColdStart, LocalAws
from e2e.sam_local import (
    BUILD_DIR,
    EVENTS_DIR,
    FUNCTIONS,
    INCIDENT_AGE_SECONDS,
    REPO_ROOT,
    copy_without_bytecode,
    event_time,
    function_for,
    import_times,
    load_json,
)
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.devkit.handlers import destination_record

pytestmark = pytest.mark.e2e

SCHEMA = load_json(REPO_ROOT / "layers" / "queuewatch" / "queuewatch" / "schemas" / "alert.v1.schema.json")
EVENT_FILES = sorted(EVENTS_DIR.glob("*.json"))


def test_collect_then_evaluate_pages_the_subscriber(
    local_aws: LocalAws, tmp_path: Path, cold_start: dict[str, ColdStart]
) -> None:
    event_file = EVENTS_DIR / "collect_scheduled.json"
    event = local_aws.restamp(load_json(event_file))  # as invoke() sends it

    collected = local_aws.invoke("CollectFunction", event_file)
    snapshot = Snapshot.model_validate(collected.payload)
    by_name = {rt.name: rt for rt in snapshot.runner_types}
    incident = by_name["linux.2xlarge"]
    assert incident.signals[SignalName.QUEUE_SIZE].value == 14
    assert incident.signals[SignalName.QUEUE_TIME].value == INCIDENT_AGE_SECONDS
    assert {rt.name for rt in snapshot.runner_types if not rt.degraded} == set(by_name), "a signal went missing"
    assert len(by_name) == 4
    assert snapshot.discovery[0].found == 1, "discovery finds the seeded queue the config does not name"

    record = destination_record(event, collected.payload, at=event_time(event) + timedelta(seconds=3))
    record_file = tmp_path / "evaluate_destination.json"
    record_file.write_text(json.dumps(record), encoding="utf-8")
    evaluated = local_aws.invoke("EvaluateFunction", record_file, restamp=False)  # made from this minute's tick
    assert evaluated.payload["outcome"] == "applied"
    assert evaluated.payload["firing"] == ["jobs-queueing#linux.2xlarge"]
    assert len(evaluated.payload["pages_sent"]) == 1
    assert evaluated.payload["pages_failed"] == []

    pages = local_aws.received()
    assert len(pages) == 1, pages
    attributes = {name: value["Value"] for name, value in pages[0]["MessageAttributes"].items()}
    assert attributes["status"] == "firing"
    assert attributes["priority"] == "P2"
    assert attributes["runner_type"] == "linux.2xlarge"
    alert = json.loads(pages[0]["Message"])
    jsonschema.validate(alert, SCHEMA)
    assert (alert["status"], alert["page"], alert["rule"]) == ("firing", "new", "jobs-queueing")
    assert [rt["runner_type"] for rt in alert["runner_types"]] == ["linux.2xlarge"]
    assert (alert["max_queue_size"], alert["max_queue_time_seconds"]) == (14, INCIDENT_AGE_SECONDS)
    assert alert["runner_types"][0]["breached"] == ["queue_size", "queue_time"]
    chat = [json.loads(envelope["Message"]) for envelope in local_aws.received_in_chat()]
    assert [(message["source"], message["id"]) for message in chat] == [("custom", alert["notification_id"])]

    for invocation in (collected, evaluated):
        cold_start.setdefault(invocation.function, ColdStart()).report = invocation.report


def test_the_tracker_applies_bus_events_and_the_signed_webhook_in_its_container(local_aws: LocalAws) -> None:
    queued = local_aws.invoke("TrackFunction", EVENTS_DIR / "track_queued.json")
    assert (queued.payload["outcome"], queued.payload["runner_type"]) == ("applied", "linux.2xlarge")
    started = local_aws.invoke("TrackFunction", EVENTS_DIR / "track_in_progress.json")
    assert started.payload["queue_seconds"] == INCIDENT_AGE_SECONDS
    # The same job by the webhook: signed, so queued; applied from the queue, already further along, so a duplicate.
    hook = local_aws.invoke("WebhookFunction", EVENTS_DIR / "webhook_workflow_job.json")
    assert hook.payload["statusCode"] == 202 and json.loads(hook.payload["body"])["job_id"] == 29679449
    applied = local_aws.invoke("WebhookDeliveriesFunction", EVENTS_DIR / "deliveries_workflow_job.json")
    assert applied.payload == {"batchItemFailures": []}


@pytest.mark.parametrize("event_file", EVENT_FILES, ids=[path.name for path in EVENT_FILES])
def test_every_event_file_invokes_without_error(local_aws: LocalAws, event_file: Path) -> None:
    invocation = local_aws.invoke(function_for(event_file), event_file)  # raises on any function error
    expected_key = {
        "CollectFunction": "runner_types",
        "EvaluateFunction": "outcome",
        "TrackFunction": "outcome",
        "WebhookFunction": "statusCode",
        "WebhookDeliveriesFunction": "batchItemFailures",
        "DigestFunction": "teams_sent",
    }[invocation.function]
    assert expected_key in invocation.payload


def test_build_output_ships_bytecode_python_uses_unchecked(e2e_ready: None) -> None:
    """`make build` compiles every module: Lambda's code is read-only, so Python would otherwise compile
    all of them again on every cold start. Unchecked hash-based .pyc files are used without a stat of
    the source, whatever timestamps the deployment package keeps."""
    sources = [
        path
        for top in (BUILD_DIR / "QueuewatchLayer" / "python", *(BUILD_DIR / name for name in FUNCTIONS.values()))
        for path in top.rglob("*.py")
    ]
    assert sources
    missing, checked = [], []
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists():
            missing.append(source)
            continue
        flags = int.from_bytes(cached.read_bytes()[4:8], "little")
        if flags != 0b01:  # PEP 552: hash-based, check_source off
            checked.append(cached)
    assert not missing, f"{len(missing)} modules without bytecode, e.g. {missing[:3]}"
    assert not checked, f"{len(checked)} .pyc files are checked against their source, e.g. {checked[:3]}"


def test_the_built_layer_ships_the_runtime_alone(e2e_ready: None) -> None:
    """What `sam build` put in the layer: queuewatch and its runtime dependencies, no command line, demo,
    local runner, moto or test tool, and nothing that names this checkout."""
    layer = BUILD_DIR / "QueuewatchLayer" / "python"
    modules = {path.stem for path in (layer / "queuewatch").rglob("*.py")}
    assert {"stage", "plan", "wire"} <= modules  # the runtime is there
    assert not modules & {"cli", "main", "demo", "localrun", "seed"}
    shipped = {path.name.split("-")[0].lower() for path in layer.iterdir()}
    assert not shipped & {"moto", "queuewatch_cli", "pytest", "hypothesis", "matplotlib"}
    checkout = str(BUILD_DIR.parents[1])
    named = [p for p in (layer / "queuewatch").rglob("*.py") if checkout in p.read_text(encoding="utf-8")]
    assert not named, f"modules that name the checkout {checkout}: {named}"


@pytest.mark.parametrize("function", sorted(FUNCTIONS.values()))
def test_import_time_in_the_lambda_image(
    e2e_ready: None, function: str, tmp_path: Path, cold_start: dict[str, ColdStart]
) -> None:
    """A benchmark: prints its figures at the end of the run, asserts only that they were measured."""
    compiled = import_times(function)
    uncompiled = import_times(function, copy_without_bytecode(function, tmp_path))
    assert compiled["app"] > 0
    assert uncompiled["app"] > 0
    cold_start.setdefault(function, ColdStart()).import_ms = {
        "app": compiled["app"],
        "app without bytecode": uncompiled["app"],
        "boto3": compiled["boto3"],
    }
