"""The alert's JSON Schema: the shipped file is what the models generate, and v1 only ever grows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from queuewatch.alerting.alert import alert_json_schema, shipped_alert_schema
from queuewatch_cli.main import main

V1_BEFORE_TRIAGE: dict[str, Any] = {
    "version": "queuewatch.alert/v1",
    "status": "firing",
    "page": "new",
    "priority": "P2",
    "severity": "warning",
    "title": "Jobs are queueing (jobs-queueing)",
    "summary": "1 runner type(s) queueing (queue size > 0 and queue time > 1m): linux.2xlarge: 14 queued, oldest 1h54m",
    "rule": "jobs-queueing",
    "team": "ci-infra",
    "group_by": "all",
    "group": "all",
    "dedup_key": "queuewatch/prod/jobs-queueing/all/0123456789ab",
    "notification_id": "queuewatch/prod/jobs-queueing/all/0123456789ab#1",
    "sequence": 1,
    "started_at": "2026-11-21T18:00:00Z",
    "evaluated_at": "2026-11-21T18:00:00Z",
    "resolved_at": None,
    "runner_types": [
        {
            "runner_type": "linux.2xlarge",
            "region": "us-east-1",
            "queue": "gh-ci-linux-2xlarge-queued-builds",
            "team": "ci-infra",
            "status": "firing",
            "since": "2026-11-21T18:00:00Z",
            "queue_size": 14.0,
            "queue_time_seconds": 6840.0,
            "queue_size_threshold": 0,
            "queue_time_threshold_seconds": 60,
            "breached": ["queue_size", "queue_time"],
            "missing": {},
            "console_url": None,
        }
    ],
    "runner_types_affected": 1,
    "max_queue_size": 14.0,
    "max_queue_size_runner_type": "linux.2xlarge",
    "max_queue_time_seconds": 6840.0,
    "max_queue_time_runner_type": "linux.2xlarge",
    "runbook_url": None,
    "dashboard_url": None,
    "silence": {"command": "queuewatch silence add ...", "match": ["linux.2xlarge"]},
    "source": {"stack": "prod", "region": "us-east-1", "observation": "s1"},
}


def test_the_shipped_schema_is_what_queuewatch_schema_prints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out) == alert_json_schema() == shipped_alert_schema()


def test_an_alert_from_before_the_triage_is_still_a_valid_v1_alert() -> None:
    Draft202012Validator(shipped_alert_schema()).validate(V1_BEFORE_TRIAGE)


def test_the_triage_fields_are_optional_additions() -> None:
    schema = shipped_alert_schema()
    assert not {"likely_cause"} & set(schema["required"])
    assert not {"triage", "signals"} & set(schema["$defs"]["RunnerTypeFigures"]["required"])
