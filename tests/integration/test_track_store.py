"""The track stage against moto's DynamoDB: every action, duplicates and every order converge, the
sparse index holds exactly the queued jobs, failures raise so Lambda retries, and the signed webhook
refuses what it must before anything is stored."""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import itertools
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from aws_lambda_powertools.utilities import parameters
from botocore.exceptions import ClientError
from moto.dynamodb.responses import DynamoHandler
from support import race

from queuewatch.adapters import job_store
from queuewatch.adapters.job_store import create_table
from queuewatch.config.load import load_config
from queuewatch.track import schema
from queuewatch.track.payload import BusEvent
from queuewatch.track.routing import Router
from queuewatch.track.stage import parse_bus_event, track
from queuewatch.track.transitions import TrackInputError
from queuewatch_cli.localrun import REPO_ROOT, FakeContext, load_event, load_handler_module

TABLE = "jobs"
CONFIG = REPO_ROOT / "config" / "queuewatch.yaml"
NOW = datetime(2026, 11, 21, 18, 30, tzinfo=UTC)
ACTIONS = ["waiting", "queued", "in_progress", "completed"]
SECRET = "queuewatch-example-webhook-secret"  # what events/track_webhook_queued.json is signed with
ROUTER = Router.of(load_config(CONFIG))


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_table(client, TABLE)
    return client


def bus(action: str, **job: Any) -> dict[str, Any]:
    event = copy.deepcopy(load_event(f"track_{action}.json"))
    event["detail"]["workflow_job"] |= job
    return event


def apply(client: Any, event: dict[str, Any], now: datetime = NOW) -> str:
    return track(parse_bus_event(BusEvent.model_validate(event)), ROUTER, client, TABLE, now).outcome


def item(client: Any, job_id: int = 33700000001) -> dict[str, Any] | None:
    found: dict[str, Any] | None = client.get_item(TableName=TABLE, Key={"pk": {"S": schema.job_key(job_id)}}).get(
        "Item"
    )
    return found


def queued_index(client: Any) -> list[dict[str, Any]]:
    answer = client.query(
        TableName=TABLE,
        IndexName=schema.QUEUED_INDEX,
        KeyConditionExpression="#q = :q",
        ExpressionAttributeNames={"#q": schema.QUEUED_ATTRIBUTE},
        ExpressionAttributeValues={":q": {"S": schema.QUEUED_PARTITION}},
    )
    items: list[dict[str, Any]] = answer["Items"]
    return items


def test_a_queued_job_is_stored_as_the_contract_says_and_listed_in_the_queued_index(dynamodb: Any) -> None:
    assert apply(dynamodb, bus("queued")) == "applied"
    stored = item(dynamodb)
    assert stored is not None
    assert stored["job_id"] == {"N": "33700000001"} and stored["run_id"] == {"N": "11900000001"}
    assert stored["runner_type"] == {"S": "linux.2xlarge"}
    assert stored["label_set"] == {"S": "linux.2xlarge,self-hosted"}
    assert stored["labels"] == {"L": [{"S": "self-hosted"}, {"S": "linux.2xlarge"}]}
    assert stored["org"] == {"S": "example-org"} and stored["repo"] == {"S": "example-org/service"}
    assert stored["created_at"] == {"S": "2026-11-21T16:06:00+00:00"}
    assert stored["status"] == {"S": "queued"} and stored["queued"] == {"S": "queued"}
    assert stored["html_url"]["S"].endswith("/job/33700000001")
    assert int(stored["expires_at"]["N"]) == int((datetime(2026, 11, 21, 16, 6, tzinfo=UTC) + timedelta(1)).timestamp())
    assert "started_at" not in stored and "completed_at" not in stored
    assert [i["pk"]["S"] for i in queued_index(dynamodb)] == ["job#33700000001"]


def test_an_unmatched_job_has_no_runner_type(dynamodb: Any) -> None:
    apply(dynamodb, bus("queued", labels=["self-hosted", "no-such-runner"]))
    stored = item(dynamodb)
    assert stored is not None and "runner_type" not in stored
    assert stored["label_set"] == {"S": "no-such-runner,self-hosted"}


@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_stores_its_status_and_only_queued_is_in_the_index(dynamodb: Any, action: str) -> None:
    assert apply(dynamodb, bus(action)) == "applied"
    stored = item(dynamodb)
    assert stored is not None and stored["status"] == {"S": action}
    assert ("queued" in stored) == (action == "queued")
    assert len(queued_index(dynamodb)) == (1 if action == "queued" else 0)
    assert ("started_at" in stored) == (action in ("in_progress", "completed"))


def test_a_duplicate_changes_nothing(dynamodb: Any) -> None:
    assert apply(dynamodb, bus("queued")) == "applied"
    first = item(dynamodb)
    assert apply(dynamodb, bus("queued"), NOW + timedelta(minutes=5)) == "unchanged"
    assert item(dynamodb) == first


@pytest.mark.parametrize("order", list(itertools.permutations(ACTIONS)))
def test_any_order_converges_on_the_furthest_state(dynamodb: Any, order: tuple[str, ...]) -> None:
    for action in order:
        apply(dynamodb, bus(action))
    stored = item(dynamodb)
    assert stored is not None and stored["status"] == {"S": "completed"}
    assert "queued" not in stored and queued_index(dynamodb) == []
    assert stored["completed_at"] == {"S": "2026-11-21T18:12:40+00:00"}


@pytest.fixture
def atomic_return_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB returns ALL_OLD atomically with the conditional write; moto reads the old item before it
    writes, so two racing threads may both see none. One lock around moto's UpdateItem handler gives
    DynamoDB's guarantee back (the backend's own lock, in conftest, sits inside it)."""
    lock = threading.Lock()
    handler = DynamoHandler.update_item

    def under_lock(self: DynamoHandler) -> Any:
        with lock:
            return handler(self)

    monkeypatch.setattr(DynamoHandler, "update_item", under_lock)


@pytest.mark.usefixtures("atomic_return_values")
def test_concurrent_events_for_one_job_converge_and_count_the_arrival_once(dynamodb: Any) -> None:
    events = iter([bus(action) for action in ACTIONS] * 3)  # each action three times, all at once

    def prepare() -> Any:
        event = next(events)
        return lambda: track(parse_bus_event(BusEvent.model_validate(event)), ROUTER, dynamodb, TABLE, NOW)

    results = race(len(ACTIONS) * 3, prepare)
    stored = item(dynamodb)
    assert stored is not None and stored["status"] == {"S": "completed"} and queued_index(dynamodb) == []
    applied = [r for r in results if r.outcome == "applied"]
    assert sum(1 for r in applied if r.effects is not None and r.effects.arrived) == 1
    assert sum(1 for r in applied if r.effects is not None and r.effects.queue_time is not None) == 1
    assert sum(1 for r in applied if r.effects is not None and r.effects.run_time is not None) == 1


def test_in_progress_before_queued_leaves_the_job_not_queued(dynamodb: Any) -> None:
    apply(dynamodb, bus("in_progress"))
    assert apply(dynamodb, bus("queued")) == "unchanged"
    assert queued_index(dynamodb) == []


def test_waiting_is_not_in_the_queued_index_until_the_job_is_queued(dynamodb: Any) -> None:
    apply(dynamodb, bus("waiting"))
    assert queued_index(dynamodb) == []
    apply(dynamodb, bus("queued"))
    assert len(queued_index(dynamodb)) == 1
    assert apply(dynamodb, bus("waiting")) == "unchanged"  # a late waiting does not unqueue it
    assert len(queued_index(dynamodb)) == 1


def test_an_unknown_action_stores_nothing(dynamodb: Any) -> None:
    event = bus("queued")
    event["detail"]["action"] = "teleported"
    assert apply(dynamodb, event) == "ignored"
    assert item(dynamodb) is None


def test_not_a_workflow_job_is_a_clear_error_and_nothing_is_stored(dynamodb: Any) -> None:
    event = bus("queued")
    event["detail"] = {"action": "created", "check_run": {"id": 1}}
    with pytest.raises(TrackInputError, match="not a workflow_job event"):
        apply(dynamodb, event)
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


class ThrottledDynamoDB:
    """moto never throttles: this client answers update_item as DynamoDB does after botocore's retries."""

    def update_item(self, **_: Any) -> Any:
        raise ClientError(
            {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "Rate exceeded"}}, "UpdateItem"
        )


def test_a_throttled_write_raises_so_lambda_retries_the_event() -> None:
    with pytest.raises(ClientError, match="ProvisionedThroughputExceededException"):
        apply(ThrottledDynamoDB(), bus("queued"))


# The handler: both ways in.


@pytest.fixture
def handler(dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    secrets = boto3.client("secretsmanager", region_name="us-east-1")
    arn = secrets.create_secret(Name="github-webhook", SecretString=SECRET)["ARN"]
    parameters.clear_caches()  # type: ignore[no-untyped-call]
    for key, value in {
        "QUEUEWATCH_CONFIG": str(CONFIG),
        "JOBS_TABLE": TABLE,
        "STACK_NAME": "test",
        "METRICS_NAMESPACE": "Queuewatch",
        "WEBHOOK_SECRET_ARN": arn,
    }.items():
        monkeypatch.setenv(key, value)
    module = load_handler_module("track")
    module.clock = lambda: NOW  # type: ignore[attr-defined]
    return module.lambda_handler


def invoke(handler: Any, event: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = handler(event, FakeContext("track"))
    return answer


@pytest.mark.parametrize("action", ACTIONS)
def test_the_handler_takes_each_bus_event_file(handler: Any, dynamodb: Any, action: str) -> None:
    invoke(handler, load_event(f"track_{action}.json"))
    stored = item(dynamodb)
    assert stored is not None and stored["status"] == {"S": action}


def test_the_handler_emits_the_contracts_metrics(handler: Any, capsys: pytest.CaptureFixture[str]) -> None:
    invoke(handler, load_event("track_queued.json"))
    invoke(handler, load_event("track_in_progress.json"))
    invoke(handler, load_event("track_completed.json"))
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    names = [m["Name"] for e in emitted for m in e["_aws"]["CloudWatchMetrics"][0]["Metrics"]]
    assert names == ["JobsQueued", "JobQueueTime", "JobRunTime"]
    assert all(e["Stack"] == "test" and e["RunnerType"] == "linux.2xlarge" for e in emitted)
    assert all(e["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Stack", "RunnerType"]] for e in emitted)
    assert {e["_aws"]["CloudWatchMetrics"][0]["Namespace"] for e in emitted} == {"Queuewatch"}
    assert emitted[1]["JobQueueTime"] == [114 * 60 + 2]


def test_the_handler_refuses_an_event_of_neither_shape_with_a_clear_error(handler: Any, dynamodb: Any) -> None:
    with pytest.raises(TrackInputError, match=r"not an EventBridge event .*detail-type: Field required"):
        invoke(handler, {"id": "x", "source": "github", "detail": {}})
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_an_unmatched_job_counts_per_label_set(handler: Any, capsys: pytest.CaptureFixture[str]) -> None:
    event = bus("queued", labels=["self-hosted", "linux.nosuch"])
    invoke(handler, event)
    invoke(handler, event)  # a duplicate counts nothing
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    assert [e["JobsUnmatched"] for e in emitted] == [[1.0]]
    assert emitted[0]["LabelSet"] == "linux.nosuch,self-hosted"
    assert emitted[0]["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["Stack", "LabelSet"]]


def webhook_event(body: str | None = None, **headers: str | None) -> dict[str, Any]:
    event = copy.deepcopy(load_event("track_webhook_queued.json"))
    if body is not None:
        event["body"] = body
    for name, value in headers.items():
        key = name.replace("_", "-")
        if value is None:
            event["headers"].pop(key, None)
        else:
            event["headers"][key] = value
    return event


def signed(body: str, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()


def test_a_signed_webhook_is_stored_and_its_redelivery_dropped(handler: Any, dynamodb: Any) -> None:
    answer = invoke(handler, webhook_event())
    assert answer["statusCode"] == 200
    assert item(dynamodb) is not None
    again = invoke(handler, webhook_event())
    assert again["statusCode"] == 200 and "duplicate" in again["body"]


def test_a_tampered_body_is_refused(handler: Any, dynamodb: Any) -> None:
    original = load_event("track_webhook_queued.json")["body"]
    tampered = original.replace('"linux.2xlarge"', '"linux.4xlarge"')
    assert tampered != original
    assert invoke(handler, webhook_event(body=tampered))["statusCode"] == 401
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_a_wrong_secret_is_refused(handler: Any, dynamodb: Any) -> None:
    body = load_event("track_webhook_queued.json")["body"]
    answer = invoke(handler, webhook_event(x_hub_signature_256=signed(body, "not-the-secret")))
    assert answer["statusCode"] == 401
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_a_missing_signature_is_refused(handler: Any, dynamodb: Any) -> None:
    answer = invoke(handler, webhook_event(x_hub_signature_256=None))
    assert answer["statusCode"] == 401 and "missing" in answer["body"]
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_another_event_type_is_answered_2xx_and_stores_nothing(handler: Any, dynamodb: Any) -> None:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1})
    answer = invoke(handler, webhook_event(body=body, x_github_event="ping", x_hub_signature_256=signed(body)))
    assert answer["statusCode"] == 202
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_a_malformed_body_is_400_and_stores_nothing(handler: Any, dynamodb: Any) -> None:
    for body in ("{not json", "[1, 2]", json.dumps({"action": "queued", "workflow_job": {"id": "x"}})):
        answer = invoke(handler, webhook_event(body=body, x_hub_signature_256=signed(body)))
        assert answer["statusCode"] == 400, body
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_a_body_over_githubs_cap_is_413(handler: Any, dynamodb: Any) -> None:
    body = " " * (25 * 1024 * 1024 + 1)
    assert invoke(handler, webhook_event(body=body, x_hub_signature_256=signed(body)))["statusCode"] == 413
    assert dynamodb.scan(TableName=TABLE)["Items"] == []


def test_a_failed_apply_releases_the_delivery_so_a_redelivery_is_applied(
    handler: Any, dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = job_store.apply

    def throttled(*_: Any, **__: Any) -> Any:
        raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "slow down"}}, "UpdateItem")

    monkeypatch.setattr(job_store, "apply", throttled)
    with pytest.raises(ClientError):
        invoke(handler, webhook_event())
    monkeypatch.setattr(job_store, "apply", real)
    assert invoke(handler, webhook_event())["statusCode"] == 200
    assert item(dynamodb) is not None


def test_the_body_is_never_logged(handler: Any, capsys: pytest.CaptureFixture[str]) -> None:
    invoke(handler, webhook_event())
    body = load_event("track_webhook_queued.json")["body"]
    out = capsys.readouterr()
    assert "example-org/service" not in out.out + out.err and body[:40] not in out.out + out.err


def test_a_base64_body_is_checked_on_its_decoded_bytes(handler: Any, dynamodb: Any) -> None:
    raw = load_event("track_webhook_queued.json")["body"]
    event = webhook_event(body=base64.b64encode(raw.encode()).decode())
    event["isBase64Encoded"] = True
    assert invoke(handler, event)["statusCode"] == 200
    assert item(dynamodb) is not None
    event["body"] = "%%% not base64"
    event["headers"]["x-github-delivery"] = "another-delivery"
    assert invoke(handler, event)["statusCode"] == 400
