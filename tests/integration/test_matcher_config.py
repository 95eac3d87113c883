"""The autoscaler's matcher config read from SSM (moto) and applied in the track stage: one parameter or its
chunks, a change picked up within a minute without a deploy, and an unreadable one a degraded signal on the
monitor and in status, never a guess."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import boto3
import pytest
from faults import inject
from matcher_configs import chunks, pytorch_like, upstream_multi_runner, written
from support import T0, StackInMoto

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.jobs_table.heartbeats import read_beats
from queuewatch.adapters.matcher_config import read_default, read_named
from queuewatch.collect import collect
from queuewatch.config.load import parse_config
from queuewatch.model.autoscaler import matcher_config_path
from queuewatch.model.matcher import MatcherConfigError
from queuewatch.model.rules import HEALTH_RULE
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.heartbeat import Heartbeat
from queuewatch.track.matching import MAX_AGE, CachedMatcherConfig
from queuewatch.track.routing import Router
from queuewatch.track.stage import track
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.handlers import FakeContext, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_jobs_table

JOBS = "jobs"
PREFIX = "pt"
PATH = matcher_config_path(PREFIX)
CONFIG = f"""
version: 1
autoscaler: {{prefix: {PREFIX}}}
defaults: {{region: us-east-1, rule: {{team: ci-infra}}}}
rules:
  - {{name: jobs-queueing, thresholds: {{queue_time: 1m, queue_size: 0}}}}
monitor: {{for: 0s}}
"""
GPU = ["self-hosted", "linux", "x64", "gpu-a100"]


@pytest.fixture
def ssm(aws: None) -> Any:
    return boto3.client("ssm", region_name="us-east-1")


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(client, JOBS)
    return client


def put(ssm: Any, name: str, value: str) -> None:
    ssm.put_parameter(Name=name, Value=value, Type="String", Overwrite=True)


def queued_event(job_id: int, labels: list[str]) -> WorkflowJobEvent:
    body = load_event("track_queued.json")["detail"]
    body["workflow_job"] |= {"id": job_id, "labels": labels}
    return WorkflowJobEvent.model_validate(body)


def stored_runner_type(dynamodb: Any, job_id: int) -> str | None:
    item = dynamodb.get_item(TableName=JOBS, Key={"pk": {"S": f"job#{job_id}"}})["Item"]
    stored: str | None = item.get("runner_type", {}).get("S")
    return stored


def test_one_parameter_its_chunks_or_named_parameters_read_alike(ssm: Any) -> None:
    text = written(pytorch_like())
    put(ssm, PATH, text)
    assert len(read_default(ssm, PATH).entries) == 6
    other = matcher_config_path("split")
    parts = chunks(written(pytorch_like() + upstream_multi_runner()), 12)  # past one GetParameters call of 10
    for index, part in enumerate(parts):
        put(ssm, f"{other}-{index}", part)
    assert len(read_default(ssm, other).entries) == 11
    names = [f"{other}-{index}" for index in range(12)]
    assert len(read_named(ssm, names).entries) == 11


def test_a_missing_or_unreadable_matcher_config_is_an_error_naming_the_parameter(ssm: Any) -> None:
    with pytest.raises(MatcherConfigError, match=f"{PATH}: parameter not found"):
        read_default(ssm, PATH)
    put(ssm, "/a", "[]")
    with pytest.raises(MatcherConfigError, match="/b: parameter not found"):
        read_named(ssm, ["/a", "/b"])
    put(ssm, PATH, written(pytorch_like()))
    inject(ssm, "GetParameters", "access-denied")
    with pytest.raises(MatcherConfigError, match=f"{PATH}.*not read: AccessDenied"):
        read_default(ssm, PATH)


def test_jobs_map_by_the_autoscalers_matcher_config_to_the_runner_types_discovery_names(
    ssm: Any, dynamodb: Any
) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    put(ssm, PATH, written(pytorch_like()))
    router = Router(config, read_default(ssm, PATH))
    result = track(queued_event(1, GPU), router, dynamodb, JOBS, T0)
    # The key chosen apart from the labels: found by the queue the webhook sends the job to, which the
    # prefix's implied discovery names linux-x64-gpu-a100.
    assert (result.runner_type, stored_runner_type(dynamodb, 1)) == ("linux-x64-gpu-a100", "linux-x64-gpu-a100")
    refused = track(queued_event(2, ["self-hosted", "linux", "x64", "gpu-b200"]), router, dynamodb, JOBS, T0)
    assert refused.runner_type is None and refused.matcher_error is None


def test_a_configs_label_sets_stay_an_override(ssm: Any, dynamodb: Any) -> None:
    config = parse_config(
        CONFIG.replace(
            "rules:",
            "runner_types:\n"
            "  - {name: a100-pool, queue: {name: pt-linux-x64-gpu-a100-queued-builds}, labels: [gpu-a100]}\n"
            "rules:",
        ),
        source="t.yaml",
    )
    put(ssm, PATH, written(pytorch_like()))
    router = Router(config, read_default(ssm, PATH))
    # labels: [gpu-a100] does not hold all four labels, so the webhook's routing decides; its queue is the
    # configured runner type's, which keeps its own name.
    assert track(queued_event(3, GPU), router, dynamodb, JOBS, T0).runner_type == "a100-pool"
    assert track(queued_event(4, ["gpu-a100"]), router, dynamodb, JOBS, T0).runner_type == "a100-pool"


def test_a_changed_matcher_config_is_picked_up_within_max_age_without_a_deploy(ssm: Any) -> None:
    put(ssm, PATH, written(pytorch_like()))
    reads = []

    def read() -> Any:
        reads.append(1)
        return read_default(ssm, PATH)

    cache = CachedMatcherConfig(read)
    first = cache.current(T0)
    renamed = [e | {"key": "renamed"} if e["key"] == "linux-x64-gpu-a100" else e for e in pytorch_like()]
    put(ssm, PATH, written(renamed))
    assert cache.current(T0 + MAX_AGE - timedelta(seconds=1)) is first  # one read per container per minute
    later = cache.current(T0 + MAX_AGE)
    assert len(reads) == 2
    assert not isinstance(later, MatcherConfigError)
    assert [e.key for e in later.dispatch(GPU)] == ["renamed"]


def test_an_unreadable_matcher_config_routes_nothing_and_pages_the_monitor_and_status_says_it(
    ssm: Any, dynamodb: Any
) -> None:
    config = parse_config(CONFIG, source="t.yaml")
    put(ssm, PATH, "[{not json")
    matcher: Any = CachedMatcherConfig(lambda: read_default(ssm, PATH)).current(T0)
    router = Router(config, matcher)
    result = track(queued_event(5, ["self-hosted", "linux.2xlarge"]), router, dynamodb, JOBS, T0)
    # Never a guess from the labels (which would name linux.2xlarge): unrouted, and said.
    assert result.runner_type is None
    assert result.matcher_error is not None and result.matcher_error.startswith(f"{PATH}: not JSON")
    heartbeat = Heartbeat()
    heartbeat.event_from("bus", dynamodb, JOBS, T0, result.matcher_error)
    [beat] = read_beats(dynamodb, JOBS, T0)
    assert beat.matcher_error == result.matcher_error

    stack = StackInMoto.create()
    snap = collect(config, AwsClients(), now=T0 + timedelta(minutes=1), account_id="123456789012",
                   snapshot_id="s1", jobs_table=JOBS)  # fmt: skip
    outcome = stack.evaluate(snap, config)
    [firing] = [i for i in outcome.firing if i.runner_type == "source:matcher-config"]
    assert firing.rule == HEALTH_RULE
    text = show_status(dynamodb, "state", T0 + timedelta(minutes=1), as_json=False)
    assert "the autoscaler's matcher config could not be read" in text

    # Read again: the next heartbeat clears it at once (a change is written within the minute), and the
    # monitor resolves.
    heartbeat.event_from("bus", dynamodb, JOBS, T0 + timedelta(seconds=30), None)
    assert read_beats(dynamodb, JOBS, T0 + timedelta(seconds=30))[0].matcher_error is None
    snap = collect(config, AwsClients(), now=T0 + timedelta(minutes=2), account_id="123456789012",
                   snapshot_id="s2", jobs_table=JOBS)  # fmt: skip
    outcome = stack.evaluate(snap, config)
    assert not [i for i in outcome.firing if i.runner_type == "source:matcher-config"]


def test_the_handler_routes_by_the_prefixs_matcher_config(
    ssm: Any, dynamodb: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    config_file = tmp_path / "queuewatch.yaml"
    config_file.write_text(CONFIG)
    put(ssm, PATH, written(pytorch_like()))
    for key, value in {
        "QUEUEWATCH_CONFIG": str(config_file),
        "JOBS_TABLE": JOBS,
        "AUTOSCALER_PREFIX": PREFIX,
    }.items():
        monkeypatch.setenv(key, value)
    module = load_handler_module("track")
    event = load_event("track_queued.json")
    event["detail"]["workflow_job"]["labels"] = GPU
    answer = module.lambda_handler(event, FakeContext("track"))
    assert answer["runner_type"] == "linux-x64-gpu-a100", json.dumps(answer)
