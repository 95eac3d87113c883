"""The track stage's pure parts: GitHub's payloads, routing by labels, a job's state, the signature."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from queuewatch.config.load import ConfigError, parse_config
from queuewatch.model.jobs import PROGRESS, QUEUED_LIMIT, StoredJob, bucket_of
from queuewatch.track import Router, WorkflowJobEvent, label_set, record_of
from queuewatch.track.jobs import rebased
from queuewatch.track.signature import sign, signature_valid
from queuewatch_cli.devkit.handlers import REPO_ROOT

NOW = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
CONFIG = """
version: 1
runner_types:
  - {name: linux.2xlarge, queue: {name: q1}}
  - {name: gpu-a100, queue: {name: q2}, labels: [self-hosted, linux, gpu, a100]}
  - {name: special, queue: {name: q3}, labels: [self-hosted, special], exact_match: true}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", match: ["linux.*"], exclude: ["linux.ephemeral.*"]}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_size: 0}}
"""


def bus_detail(name: str) -> dict[str, Any]:
    return json.loads((REPO_ROOT / "events" / name).read_text())["detail"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(parse_config(CONFIG, source="test.yaml"))


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["linux.2xlarge"], "linux.2xlarge"),  # the name among the labels
        (["self-hosted", "LINUX.2XLARGE"], "linux.2xlarge"),  # without case, as GitHub compares
        (["gpu", "a100"], "gpu-a100"),  # a subset of the runner's labels
        (["self-hosted", "linux", "gpu", "a100"], "gpu-a100"),
        (["gpu", "h100"], None),  # a label the runner lacks
        (["self-hosted", "special"], "special"),  # exact_match: the same set
        (["special"], None),  # exact_match: a subset is not enough
        (["self-hosted", "linux", "linux.12xlarge"], "linux.12xlarge"),  # discovered: its one specific label
        (["linux.ephemeral.large"], None),  # discovery excludes it
        (["ubuntu-latest"], None),  # GitHub-hosted: no runner type here
        ([], None),
    ],
)
def test_a_job_belongs_to_the_runner_type_its_labels_name(
    router: Router, labels: list[str], expected: str | None
) -> None:
    assert router.runner_type(labels) == expected


def test_labels_and_exact_match_are_checked_in_the_config() -> None:
    with pytest.raises(ConfigError, match="exact_match: true needs the runner type's labels"):
        parse_config(CONFIG.replace("{name: q1}}", "{name: q1}, exact_match: true}"), source="t.yaml")
    with pytest.raises(ConfigError, match="expected a runner label"):
        parse_config(CONFIG.replace("[self-hosted, special]", "['self hosted']"), source="t.yaml")


def test_every_shape_github_documents_parses_nulls_and_extra_fields_included() -> None:
    for name in ("track_queued.json", "track_waiting.json", "track_in_progress.json", "track_completed.json"):
        event = WorkflowJobEvent.model_validate(bus_detail(name))
        assert event.tracked and event.org == "pytorch"
    personal = WorkflowJobEvent.model_validate(bus_detail("track_queued_user_repository.json"))
    assert personal.organization is None and personal.org == "someone"  # a user's repository: no organization


def test_an_unknown_action_parses_and_is_not_tracked(router: Router) -> None:
    detail = bus_detail("track_queued.json") | {"action": "escalated"}
    event = WorkflowJobEvent.model_validate(detail)
    assert not event.tracked and record_of(event, router, NOW) is None


@pytest.mark.parametrize("missing", ["workflow_job", "repository", "action"])
def test_a_body_that_is_not_a_workflow_job_is_refused_by_name(missing: str) -> None:
    detail = bus_detail("track_queued.json")
    del detail[missing]
    with pytest.raises(ValidationError, match=missing):
        WorkflowJobEvent.model_validate(detail)


def test_queue_time_is_started_minus_created_and_never_negative(router: Router) -> None:
    started = WorkflowJobEvent.model_validate(bus_detail("track_in_progress.json"))
    record = record_of(started, router, NOW)
    assert record is not None and record.queue_seconds == 114 * 60 and not record.queued
    early = bus_detail("track_in_progress.json")
    early["workflow_job"]["started_at"] = "2026-11-21T16:05:58Z"  # GitHub sometimes stamps it 2 s early
    record = record_of(WorkflowJobEvent.model_validate(early), router, NOW)
    assert record is not None and record.queue_seconds == 0


def test_a_queued_event_keeps_no_start_and_expires_past_githubs_limit(router: Router) -> None:
    record = record_of(WorkflowJobEvent.model_validate(bus_detail("track_queued.json")), router, NOW)
    assert record is not None and record.queued and record.started_at is None and record.queue_seconds is None
    assert record.expires_at >= record.created_at + QUEUED_LIMIT
    completed = record_of(WorkflowJobEvent.model_validate(bus_detail("track_completed.json")), router, NOW)
    assert completed is not None and completed.run_seconds == 41 * 60 + 12
    # Kept as history for the days after it was queued (14 by default), and never less than a day after it
    # finished, so a late or repeated event is still recognised.
    assert completed.expires_at == completed.queued_since + timedelta(days=14)
    short = record_of(
        WorkflowJobEvent.model_validate(bus_detail("track_completed.json")), router, NOW, history=timedelta(days=1)
    )
    assert short is not None and short.expires_at == NOW + timedelta(days=1)


def test_a_job_cancelled_before_any_runner_took_it_has_no_run_or_queue_time(router: Router) -> None:
    cancelled = bus_detail("track_completed.json")
    cancelled["workflow_job"] |= {"conclusion": "cancelled", "runner_id": None, "runner_name": None}
    record = record_of(WorkflowJobEvent.model_validate(cancelled), router, NOW)
    assert record is not None and record.status == "completed" and not record.queued
    assert record.started_at is None and record.run_seconds is None and record.queue_seconds is None


def test_waiting_for_approval_is_not_waiting_for_a_runner(router: Router) -> None:
    record = record_of(WorkflowJobEvent.model_validate(bus_detail("track_waiting.json")), router, NOW)
    assert record is not None and record.status == "waiting" and not record.queued


def test_label_sets_are_one_text_whatever_the_order_and_case() -> None:
    assert label_set(["Linux", "self-hosted", "gpu"]) == label_set(["gpu", "linux", "SELF-HOSTED"])


def test_the_signature_is_githubs_hmac_of_the_raw_body() -> None:
    body = b'{"action":"queued"}'
    header = sign("s3cret", body)
    assert signature_valid("s3cret", body, header)
    assert not signature_valid("s3cret", body + b" ", header)  # a tampered body
    assert not signature_valid("other", body, header)  # a wrong secret
    assert not signature_valid("s3cret", body, None)  # no header
    assert not signature_valid("s3cret", body, header.replace("sha256=", "sha1="))
    assert not signature_valid("", body, sign("", body))  # no secret configured verifies nothing


def queued_event(action: str = "queued", **job: Any) -> WorkflowJobEvent:
    detail = bus_detail("track_queued.json")
    detail["action"] = action
    detail["workflow_job"].update(job)
    return WorkflowJobEvent.model_validate(detail)


def test_a_job_approved_after_waiting_was_queued_when_its_event_happened_within_what_is_certain(
    router: Router,
) -> None:
    record = record_of(queued_event(), router, NOW)
    assert record is not None and record.queued_at == record.created_at  # first seen queued: since created
    waiting = StoredJob(progress=PROGRESS["waiting"], status="waiting", queued_at=None)
    approved = record.created_at + timedelta(minutes=30)
    rebase = rebased(record, waiting, approved, NOW)
    assert rebase is not None and rebase.queued_at == approved
    # Queued, it is kept past GitHub's limit only: the collector reads every queued job at each tick.
    assert rebase.expires_at == max(record.created_at + QUEUED_LIMIT, NOW) + timedelta(days=1)
    # Another clock's time is kept between the job's creation and now: never in the future, never before it.
    future = rebased(record, waiting, NOW + timedelta(hours=2), NOW)
    early = rebased(record, waiting, record.created_at - timedelta(hours=1), NOW)
    assert future is not None and future.queued_at == NOW
    assert early is not None and early.queued_at == record.created_at


def test_a_stored_queued_at_is_kept_and_a_job_as_far_along_is_a_duplicate(router: Router) -> None:
    started = queued_event("in_progress", status="in_progress", started_at="2026-11-21T17:00:00Z", runner_name="i")
    record = record_of(started, router, NOW)
    assert record is not None
    kept = datetime(2026, 11, 21, 16, 40, tzinfo=UTC)
    stored = StoredJob(progress=PROGRESS["queued"], status="queued", queued_at=kept)
    rebase = rebased(record, stored, NOW, NOW)
    assert rebase is not None and rebase.queued_at == kept and rebase.queue_seconds == 20 * 60
    assert rebase.expires_at == kept + timedelta(days=14)  # a runner took it: kept the history's days
    assert (
        rebased(record, StoredJob(progress=PROGRESS["completed"], status="completed", queued_at=kept), NOW, NOW) is None
    )
    # A deployment rejected while it waited for approval was never queued for a runner.
    rejected = record_of(
        queued_event("completed", status="completed", completed_at="2026-11-21T17:00:00Z"), router, NOW
    )
    assert rejected is not None
    never = rebased(rejected, StoredJob(progress=PROGRESS["waiting"], status="waiting", queued_at=None), NOW, NOW)
    assert never is not None and never.queued_at is None and bucket_of(never) is None
