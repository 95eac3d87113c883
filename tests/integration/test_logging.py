"""Nothing secret is logged: not the events (whatever the environment says), not the credentials, not on errors."""

from __future__ import annotations

import io
import logging

import boto3
import pytest
from faults import inject

from queuewatch_cli.devkit.handlers import REPO_ROOT, FakeContext, arrives_when_made, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_state_table

CANARY = "canary-5e1f"


@pytest.fixture
def stack(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    for name in ("gh-ci-linux-2xlarge-queued-builds", "gh-ci-linux-4xlarge-queued-builds"):
        sqs.create_queue(QueueName=name)
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    topic = boto3.client("sns", region_name="us-east-1").create_topic(Name="alerts")["TopicArn"]
    env = {
        "QUEUEWATCH_CONFIG": str(REPO_ROOT / "config" / "queuewatch.yaml"),
        "STATE_TABLE": "state",
        "ALERT_TOPIC_ARN": topic,
        "STACK_NAME": "test",
        # An operator turns on Powertools' event logging, and the credentials are real-looking.
        "POWERTOOLS_LOGGER_LOG_EVENT": "true",
        "AWS_SECRET_ACCESS_KEY": f"{CANARY}-secret-access-key",
        "AWS_SESSION_TOKEN": f"{CANARY}-session-token",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def test_the_handlers_log_what_happened_but_no_event_field_and_no_credential(
    stack: None, capsys: pytest.CaptureFixture[str]
) -> None:
    collect = load_handler_module("collect")  # decorators read the environment now, as at a cold start
    evaluate = load_handler_module("evaluate")
    inject(evaluate.aws.sns("us-east-1"), "Publish", "access-denied")  # the error path logs too
    # Both modules' Logger is the one "queuewatch" logger, made once per process: an earlier test may
    # have left it another stream (its captured stdout) or level (the demo's WARNING). Use INFO, as deployed.
    shared = logging.getLogger(collect.logger.name)
    logs, level = io.StringIO(), shared.level
    # Swapped by assignment: setStream flushes the old stream first, and an earlier test's capture is closed.
    handlers = [handler for handler in shared.handlers if isinstance(handler, logging.StreamHandler)]
    streams = [(handler, handler.stream) for handler in handlers]
    for handler in handlers:
        handler.stream = logs
    shared.setLevel(logging.INFO)
    try:
        event = load_event("collect_scheduled.json")
        event["detail"] = {"token": f"{CANARY}-in-the-event"}  # anything a forged or future event might carry
        collect.lambda_handler(event, FakeContext("collect"))
        record = load_event("evaluate_success.json")
        record["requestPayload"] = event
        record["requestContext"]["secret"] = f"{CANARY}-in-the-record"
        arrives_when_made(evaluate, record)
        result = evaluate.lambda_handler(record, FakeContext("evaluate"))
    finally:
        shared.setLevel(level)
        for handler, stream in streams:
            handler.stream = stream
    assert result["pages_failed"]

    printed = capsys.readouterr()
    output = logs.getvalue() + printed.out + printed.err  # the logs, and the EMF metrics on stdout
    assert '"message":"collected"' in output and '"message":"evaluated"' in output
    assert "AuthorizationError" in output  # the failed page is logged, with its reason
    assert CANARY not in output
