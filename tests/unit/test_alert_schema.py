"""The alert message: the shipped schema is the models' schema, and alerts validate against it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from jsonschema import Draft202012Validator, ValidationError

from queuewatch.alerting.alert import (
    Alert,
    RunnerTypeFigures,
    Silence,
    alert_json_schema,
    dedup_key,
    shipped_alert_schema,
)

VALIDATOR = Draft202012Validator(shipped_alert_schema())


def figures(name: str, size: float, age: float) -> RunnerTypeFigures:
    return RunnerTypeFigures(
        runner_type=name,
        region="us-east-1",
        queue=f"gh-ci-{name}-queued-builds",
        team="ci-infra",
        status="firing",
        since=datetime(2026, 11, 21, 18, 0, tzinfo=UTC),
        queue_size=size,
        queue_time_seconds=age,
        queue_size_threshold=0,
        queue_time_threshold_seconds=60,
        breached=["queue_size", "queue_time"],
    )


def alert(*members: RunnerTypeFigures, title: str = "Jobs are queueing (jobs-queueing)") -> Alert:
    at = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
    worst_time = max(members, key=lambda m: m.queue_time_seconds or 0)
    worst_size = max(members, key=lambda m: m.queue_size or 0)
    return Alert(
        status="firing",
        page="new",
        priority="P2",
        severity="warning",
        title=title,
        summary="jobs queue",
        rule="jobs-queueing",
        team="ci-infra",
        group_by="all",
        group="all",
        dedup_key="k",
        notification_id="k#1",
        sequence=1,
        started_at=at,
        evaluated_at=at,
        runner_types=list(members),
        runner_types_affected=len(members),
        max_queue_size=worst_size.queue_size,
        max_queue_size_runner_type=worst_size.runner_type,
        max_queue_time_seconds=worst_time.queue_time_seconds,
        max_queue_time_runner_type=worst_time.runner_type,
        runbook_url="https://runbooks.example.com/q",
        dashboard_url=None,
        silence=Silence(command="queuewatch silence add ...", match=[m.runner_type for m in members]),
        source={"stack": "s"},
    )


def test_the_shipped_schema_is_the_models_schema() -> None:
    assert shipped_alert_schema() == alert_json_schema(), (
        "regenerate it: queuewatch schema > layers/queuewatch/queuewatch/schemas/alert.v1.schema.json"
    )


def test_an_alert_validates_against_the_shipped_schema() -> None:
    VALIDATOR.validate(alert(figures("linux.2xlarge", 14, 6840)).model_dump(mode="json"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d.pop("dedup_key"),
        lambda d: d.update(status="exploded"),
        lambda d: d.update(runner_types=[]),
        lambda d: d["runner_types"][0].pop("queue_time_threshold_seconds"),
        lambda d: d.update(version="queuewatch.alert/v0"),
    ],
    ids=["no-dedup-key", "bad-status", "no-runner-types", "no-threshold", "wrong-version"],
)
def test_a_damaged_alert_fails_validation(damage: Any) -> None:
    document = alert(figures("linux.2xlarge", 14, 6840)).model_dump(mode="json")
    damage(document)
    with pytest.raises(ValidationError):
        VALIDATOR.validate(document)


def test_the_subject_keeps_the_title_whole_and_words_the_figures_shorter_to_fit() -> None:
    title = "Jobs are queueing (jobs-queueing) team ci-infra"
    subject = alert(figures("linux.2xlarge", 14, 6840), title=title).subject
    assert len(subject) < 100
    assert subject == f"ALARM: P2 linux.2xlarge, oldest 1h54m, 14 queued: {title}"
    short = alert(figures("linux.2xlarge", 14, 6840), title="Jobs are queueing").subject
    assert short == "ALARM: P2 linux.2xlarge queueing, max queue time 1h54m, max queue size 14: Jobs are queueing"


@pytest.mark.parametrize("words", [0, 3, 8, 30])
def test_the_subject_never_cuts_the_title_mid_word(words: int) -> None:
    members = (figures("linux.2xlarge", 14, 6840), figures("linux.g5.4xlarge.nvidia.gpu", 3, 95))
    title = " ".join(f"word{i}" for i in range(words)) or "T"
    subject = alert(*members, title=title).subject
    assert len(subject) < 100 and subject.startswith("ALARM: P2")
    shown = subject.split(": ", 2)[-1] if subject.count(": ") >= 2 else subject.split(": ", 1)[-1]
    if shown != title:
        assert shown.endswith("...") and (title + " ").startswith(shown.removesuffix("...") + " ")


def test_a_resolved_subject_says_recovered() -> None:
    resolved = alert(figures("linux.2xlarge", 0, 0)).model_copy(update={"status": "resolved", "page": "resolved"})
    assert resolved.subject.startswith("OK: P2 linux.2xlarge recovered")
    VALIDATOR.validate(resolved.model_dump(mode="json"))


def test_message_attributes_route_by_status_kind_priority_team_and_runner_type() -> None:
    one = alert(figures("linux.2xlarge", 14, 6840)).message_attributes()
    assert one == {
        "status": "firing",
        "kind": "page",
        "priority": "P2",
        "severity": "warning",
        "team": "ci-infra",
        "teams": ["ci-infra"],
        "rule": "jobs-queueing",
        "runner_type": "linux.2xlarge",
    }
    two = alert(figures("linux.2xlarge", 14, 6840), figures("linux.4xlarge", 2, 90)).message_attributes()
    assert two["runner_type"] == "multiple"
    ticket = alert(figures("linux.2xlarge", 14, 6840)).model_copy(update={"rule": "slo:builds:ticket"})
    monitor = alert(figures("linux.2xlarge", 14, 6840)).model_copy(update={"rule": "queuewatch-health"})
    assert (ticket.message_attributes()["kind"], monitor.message_attributes()["kind"]) == ("ticket", "monitor")


def test_dedup_keys_are_stable_and_distinct() -> None:
    assert dedup_key("stack", "jobs-queueing", "all") == dedup_key("stack", "jobs-queueing", "all")
    keys = {dedup_key("stack", r, g) for r in ("a", "b") for g in ("all", "rocm")} | {dedup_key("other", "a", "all")}
    assert len(keys) == 5


def test_dedup_keys_stay_distinct_for_long_names() -> None:
    stack, rule = "queuewatch-" + "x" * 117, "r" * 63  # a 128-character stack name is allowed
    first = dedup_key(stack, rule, "linux." + "y" * 60 + ".a")
    second = dedup_key(stack, rule, "linux." + "y" * 60 + ".b")
    assert len(first) <= 255 and len(second) <= 255
    assert first != second
