"""The track stage's pure parts: GitHub's payload shapes, label routing, the forward-only transitions,
queue and run times, and the webhook signature."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from queuewatch.config import Config, RunnerTypeSpec
from queuewatch.track import schema
from queuewatch.track.payload import BusEvent, WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.signature import is_signed_by, signature_of
from queuewatch.track.stage import parse_body, parse_bus_event
from queuewatch.track.transitions import Previous, TrackInputError, effects, plan_write

EVENTS = Path(__file__).resolve().parents[2] / "events"
CREATED = datetime(2026, 11, 21, 16, 6, tzinfo=UTC)
NOW = datetime(2026, 11, 21, 18, 0, 30, tzinfo=UTC)


def bus_file(action: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EVENTS / f"track_{action}.json").read_text(encoding="utf-8"))
    return document


def body(action: str) -> dict[str, Any]:
    detail: dict[str, Any] = bus_file(action)["detail"]
    return detail


def spec(name: str, labels: list[str] | None = None, exact_match: bool = False) -> RunnerTypeSpec:
    return RunnerTypeSpec.model_validate(
        {"name": name, "queue": {"name": f"q-{name.replace('.', '-')}"}, "labels": labels, "exact_match": exact_match}
    )


@pytest.mark.parametrize("action", ["waiting", "queued", "in_progress", "completed"])
def test_every_bus_event_file_parses_to_its_action(action: str) -> None:
    event = parse_bus_event(BusEvent.model_validate(bus_file(action)))
    assert event.action == action == event.status
    assert event.workflow_job.id == 33700000001
    assert event.workflow_job.created_at == CREATED
    assert event.org == "example-org" and event.repository.full_name == "example-org/service"


def test_null_runner_fields_extra_fields_and_no_organization_are_accepted() -> None:
    document = body("queued")
    document["workflow_job"] |= {"runner_id": None, "runner_name": None, "completed_at": None, "brand_new": {"x": 1}}
    document["something_github_adds_later"] = [1, 2]
    del document["organization"]  # a repository owned by a user
    event = parse_body(document, "test")
    assert event.org == "example-org"  # the repository's owner
    assert not event.workflow_job.has_runner


def test_an_unknown_action_is_accepted_and_writes_nothing() -> None:
    document = body("queued") | {"action": "requeued_by_a_future_github"}
    event = parse_body(document, "test")
    assert event.status is None
    assert plan_write(event, "linux.2xlarge", NOW) is None


def test_a_body_that_is_not_a_workflow_job_is_a_clear_error() -> None:
    with pytest.raises(TrackInputError, match="not a workflow_job event"):
        parse_body({"action": "completed", "check_run": {"id": 1}}, "delivery x")
    broken = body("queued")
    broken["workflow_job"]["created_at"] = "yesterday"
    with pytest.raises(TrackInputError, match=r"workflow_job\.created_at"):
        parse_body(broken, "delivery x")


def test_a_bus_event_of_another_detail_type_is_refused() -> None:
    event = bus_file("queued") | {"detail-type": "check_run"}
    with pytest.raises(TrackInputError, match="detail-type 'check_run'"):
        parse_bus_event(BusEvent.model_validate(event))


def test_times_without_an_offset_are_utc() -> None:
    document = body("queued")
    document["workflow_job"]["created_at"] = "2026-11-21T16:06:00"
    assert parse_body(document, "t").workflow_job.created_at == CREATED


# Routing


def test_by_default_a_job_belongs_to_the_runner_type_named_among_its_labels() -> None:
    router = Router([spec("linux.2xlarge"), spec("linux.4xlarge")])
    assert router.route(["self-hosted", "linux.4xlarge"]) == "linux.4xlarge"
    assert router.route(["Linux.2XLarge"]) == "linux.2xlarge"  # GitHub's labels are case-insensitive
    assert router.route(["self-hosted", "linux.8xlarge"]) is None
    assert router.route([]) is None


def test_labels_with_exact_match_need_every_job_label_among_the_runner_types() -> None:
    router = Router([spec("x64", ["self-hosted", "linux", "x64"], exact_match=True)])
    assert router.route(["self-hosted", "linux", "x64"]) == "x64"
    assert router.route(["self-hosted", "x64"]) == "x64"  # a subset
    assert router.route(["self-hosted", "linux", "x64", "gpu"]) is None


def test_labels_without_exact_match_take_any_shared_label_and_the_first_runner_type_wins() -> None:
    router = Router([spec("arm", ["arm64"]), spec("any-linux", ["linux", "x64"]), spec("linux")])
    assert router.route(["self-hosted", "arm64", "linux"]) == "arm"
    assert router.route(["self-hosted", "linux"]) == "any-linux"  # listed before the runner type named "linux"


def test_exact_match_without_labels_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match="'exact_match' goes with 'labels'"):
        spec("x", None, exact_match=True)


def test_the_config_takes_labels_and_exact_match() -> None:
    config = Config.model_validate(
        {
            "version": 1,
            "runner_types": [
                {"name": "gpu", "queue": {"name": "q"}, "labels": ["self-hosted", "gpu"], "exact_match": True}
            ],
            "rules": [{"name": "r"}],
        }
    )
    assert Router.of(config).route(["gpu"]) == "gpu"


# Transitions


def event(action: str, **job: Any) -> WorkflowJobEvent:
    document = copy.deepcopy(body(action))
    document["workflow_job"] |= job
    return WorkflowJobEvent.model_validate(document)


def test_a_queued_event_asks_for_a_queued_item_expiring_at_githubs_limit() -> None:
    write = plan_write(event("queued"), "linux.2xlarge", NOW)
    assert write is not None
    assert write.status == "queued" and write.started_at is None
    assert write.expires_at == CREATED + schema.QUEUED_EXPIRY == CREATED + timedelta(hours=24)
    assert write.label_set == "linux.2xlarge,self-hosted"


def test_an_old_queued_event_replayed_after_githubs_limit_writes_nothing() -> None:
    assert plan_write(event("queued"), "linux.2xlarge", CREATED + timedelta(hours=24, seconds=1)) is None


def test_a_completed_item_outlives_the_queued_limit_as_a_tombstone() -> None:
    write = plan_write(event("completed"), "linux.2xlarge", NOW)
    assert write is not None
    assert write.expires_at >= CREATED + schema.QUEUED_EXPIRY
    late = plan_write(event("completed"), "linux.2xlarge", CREATED + timedelta(days=3))
    assert late is not None and late.expires_at > CREATED + timedelta(days=3)  # a completion always lands


def test_a_job_created_far_in_the_future_is_refused() -> None:
    with pytest.raises(TrackInputError, match="ahead of this function's clock"):
        plan_write(event("queued", created_at="2026-11-22T18:00:00Z"), "linux.2xlarge", NOW)


def test_first_queued_counts_an_arrival_and_nothing_else() -> None:
    write = plan_write(event("queued"), "linux.2xlarge", NOW)
    assert write is not None
    assert effects(write, Previous(rank=None, started_at=None)).arrived
    assert effects(write, Previous(rank=schema.STATUS_RANK["waiting"], started_at=None)).arrived
    found = effects(write, Previous(rank=None, started_at=None))
    assert found.queue_time is None and found.run_time is None


def test_queue_time_is_started_minus_created_and_counted_once() -> None:
    write = plan_write(event("in_progress"), "linux.2xlarge", NOW)
    assert write is not None
    found = effects(write, Previous(rank=schema.STATUS_RANK["queued"], started_at=None))
    assert found.queue_time == (datetime(2026, 11, 21, 18, 0, 2, tzinfo=UTC) - CREATED).total_seconds()
    assert not found.arrived  # the queued event counted it
    # in_progress first: the job arrives with it, and its queued event, later, changes nothing.
    assert effects(write, Previous(rank=None, started_at=None)).arrived


def test_queue_time_is_clamped_at_zero_when_github_starts_before_it_creates() -> None:
    write = plan_write(event("in_progress", started_at="2026-11-21T16:05:58Z"), "linux.2xlarge", NOW)
    assert write is not None
    assert effects(write, Previous(rank=1, started_at=None)).queue_time == 0.0


def test_a_completion_gives_run_time_and_the_queue_time_an_in_progress_never_gave() -> None:
    write = plan_write(event("completed"), "linux.2xlarge", NOW)
    assert write is not None
    started = datetime(2026, 11, 21, 18, 0, 2, tzinfo=UTC)
    after_queued = effects(write, Previous(rank=1, started_at=None))
    assert after_queued.queue_time == (started - CREATED).total_seconds()
    assert after_queued.run_time == (datetime(2026, 11, 21, 18, 12, 40, tzinfo=UTC) - started).total_seconds()
    after_started = effects(write, Previous(rank=2, started_at=started))
    assert after_started.queue_time is None and after_started.run_time == after_queued.run_time


def test_a_job_cancelled_while_queued_has_neither_queue_nor_run_time() -> None:
    cancelled = event("completed", conclusion="cancelled", runner_id=None, runner_name=None)
    write = plan_write(cancelled, "linux.2xlarge", NOW)
    assert write is not None
    found = effects(write, Previous(rank=1, started_at=None))
    assert found.queue_time is None and found.run_time is None


def test_waiting_is_not_queued() -> None:
    write = plan_write(event("waiting"), "linux.2xlarge", NOW)
    assert write is not None and write.rank < schema.STATUS_RANK["queued"]
    assert not effects(write, Previous(rank=None, started_at=None)).arrived


# Signature

SECRET = "s3cret"


def test_the_signature_is_the_bodys_hmac_sha256_under_the_secret() -> None:
    raw = b'{"action":"queued"}'
    header = signature_of(SECRET, raw)
    assert header.startswith("sha256=") and len(header) == 7 + 64
    assert is_signed_by(SECRET, raw, header)


@pytest.mark.parametrize(
    ("secret", "raw", "header"),
    [
        ("wrong", b"{}", signature_of(SECRET, b"{}")),  # wrong secret
        (SECRET, b'{"tampered":1}', signature_of(SECRET, b"{}")),  # tampered body
        (SECRET, b"{}", None),  # missing header
        (SECRET, b"{}", ""),
        (SECRET, b"{}", signature_of(SECRET, b"{}").replace("sha256=", "sha1=")),
        ("", b"{}", signature_of("", b"{}")),  # no secret configured signs nothing
    ],
)
def test_a_bad_or_missing_signature_is_refused(secret: str, raw: bytes, header: str | None) -> None:
    assert not is_signed_by(secret, raw, header)
