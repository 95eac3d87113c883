"""A fleet-wide incident, 5,000 runner types in one group, pages and resolves through the evaluate handler,
with and without a chat topic, and every part of it fits its AWS limit: DynamoDB's item, SNS's message
and subject, CloudWatch's description and alarm name, the chat notification."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from hashlib import sha256
from pathlib import Path
from typing import Any

import boto3
import pytest
from consumers import CHATBOT, check_pager_envelope, check_subject, description_fields
from forecast_pools import FILLING
from support import T0, runner_type, snapshot

from queuewatch.adapters.aws.item_size import ITEM_LIMIT, item_size
from queuewatch.adapters.state_table.keys import PARTITION
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.notifications import SNS_MESSAGE_LIMIT
from queuewatch.notifications.cloudwatch import ALARM_DESCRIPTION_LIMIT
from queuewatch.runtime.wire import encode_snapshot
from queuewatch_cli.devkit.handlers import FakeContext, destination_record, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_state_table

FLEET = 5000
# Names at the 128-character limit, each ending in a digest as generated pool names do: as a list the members
# alone would be 640 KB, past the group item's 400 KB, and the page could never be stored; stored compressed
# (adapters/state_table/alerts.py) they leave the bodies their budget (delivery.outbox_for), chat body included.
LONGEST = [
    ("linux-arm64-m7g-8xlarge-ephemeral-ubuntu-2404-" * 3)[:111] + "." + sha256(f"pool-{i}".encode()).hexdigest()[:16]
    for i in range(FLEET)
]


def config_text(names: list[str], forecast: bool = False) -> str:
    rule = "{for: 0s, keep_firing_for: 0s, team: ci-infra" + (", forecast: 10m}" if forecast else "}")
    lines = ["version: 1", f"defaults: {{rule: {rule}}}", "runner_types:"]
    for i, name in enumerate(names):
        lines.append(f"  - {{name: {name}, queue: {{name: q-{i:04d}}}, team: team-{i % 40:02d}}}")
    lines += ["rules:", "  - {name: jobs-queueing, group_by: all, thresholds: {queue_time: 1m, queue_size: 0}}"]
    return "\n".join(lines) + "\n"


class PatientContext(FakeContext):
    """In-process moto writes far slower than DynamoDB; what is tested here is size, not the tick's deadline
    (bench/ measures that), so the handler gets the time it needs to write 5,000 instances in one tick."""

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


class Captured:
    """Every Publish the handler makes, as SNS was asked (sizes measured on the request)."""

    def __init__(self) -> None:
        self.publishes: list[dict[str, Any]] = []

    def __call__(self, params: dict[str, Any], **_: Any) -> None:
        self.publishes.append(params)


@pytest.fixture
def names() -> list[str]:
    # Only the worst size goes through moto: 45-character names take the same path with a smaller group item.
    return LONGEST


@pytest.fixture
def environment(
    aws: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, names: list[str], request: pytest.FixtureRequest
) -> Path:
    config = tmp_path / "fleet.yaml"
    config.write_text(config_text(names, forecast="forecast" in request.node.name), encoding="utf-8")
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
    topic = boto3.client("sns", region_name="us-east-1").create_topic(Name="alerts")["TopicArn"]
    for key, value in {"QUEUEWATCH_CONFIG": str(config), "STATE_TABLE": "state", "ALERT_TOPIC_ARN": topic}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("STACK_NAME", "fleet")
    return config


def tick(
    module: Any, at: datetime, queueing: bool, names: list[str], forecast: ForecastInputs | None = None
) -> dict[str, Any]:
    teams = [f"team-{i % 40:02d}" for i in range(FLEET)]
    obs = snapshot(
        at,
        *[
            runner_type(n, 3 * queueing, 900 * queueing, team=t).model_copy(update={"forecast": forecast})
            for n, t in zip(names, teams, strict=True)
        ],
    )
    record = destination_record(load_event("collect_scheduled.json"), encode_snapshot(obs), at=at)
    module.clock = lambda: at + timedelta(seconds=5)
    return module.lambda_handler(record, PatientContext("evaluate"))  # type: ignore[no-any-return]


def group_item_bytes() -> int:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    items = dynamodb.query(
        TableName="state",
        KeyConditionExpression="pk = :pk AND begins_with(sk, :g)",
        ExpressionAttributeValues={":pk": {"S": PARTITION}, ":g": {"S": "group#"}},
    )["Items"]
    return max(item_size(item) for item in items)


@pytest.mark.parametrize("chat", [False, True], ids=["without-chat", "with-chat"])
def test_five_thousand_runner_types_page_and_resolve_within_every_limit(
    environment: Path, monkeypatch: pytest.MonkeyPatch, chat: bool, capsys: pytest.CaptureFixture[str], names: list[str]
) -> None:
    sns = boto3.client("sns", region_name="us-east-1")
    if chat:
        monkeypatch.setenv("CHAT_TOPIC_ARN", sns.create_topic(Name="chat")["TopicArn"])
    module = load_handler_module("evaluate")
    captured = Captured()
    module.aws.sns("us-east-1").meta.events.register("before-parameter-build.sns.Publish", captured)

    fired = tick(module, T0, queueing=True, names=names)
    assert len(fired["firing"]) == FLEET and fired["pages_sent"] and not fired["pages_failed"]
    stored = group_item_bytes()
    assert stored <= ITEM_LIMIT
    page_publishes = list(captured.publishes)

    resolved = tick(module, T0 + timedelta(minutes=1), queueing=False, names=names)
    assert resolved["firing"] == [] and resolved["pages_sent"] and not resolved["pages_failed"]

    alerts = [p for p in captured.publishes if p.get("MessageStructure") == "json"]
    assert [json.loads(json.loads(p["Message"])["default"])["status"] for p in alerts] == ["firing", "resolved"]
    for publish in captured.publishes:
        check_subject(publish["Subject"])
        attributes = sum(len(k) + len(json.dumps(v)) for k, v in publish.get("MessageAttributes", {}).items())
        assert len(publish["Message"].encode()) + len(publish["Subject"]) + attributes <= SNS_MESSAGE_LIMIT
    first = json.loads(alerts[0]["Message"])
    alert = json.loads(first["default"])
    assert alert["runner_types_affected"] == FLEET and alert["silence"]["match"] == ["*"]
    assert len(alert["silence"]["command"]) < 300
    assert alert["teams"] == [alert["team"], *(f"team-{i:02d}" for i in range(40))]  # every team, the rule's first
    alarm = json.loads(first["https"])
    check_pager_envelope(alerts[0]["Subject"], alarm)
    assert len(alarm["AlarmDescription"]) <= ALARM_DESCRIPTION_LIMIT and len(alarm["AlarmName"]) <= 255
    assert description_fields(alarm["AlarmDescription"])["RUNNER_TYPES"].endswith(" more)")
    chats = [json.loads(p["Message"]) for p in captured.publishes if p.get("MessageStructure") != "json"]
    assert len(chats) == (2 if chat else 0)
    for body in chats:
        CHATBOT.validate(body)
    assert len(page_publishes) == (2 if chat else 1)
    with capsys.disabled():
        print(
            f"\n{FLEET} runner types of {len(names[0])} characters, chat={chat}: "
            f"group item {stored:,} bytes of {ITEM_LIMIT:,}"
        )


CALM = ForecastInputs(window_seconds=600, arrived=0, run_seconds=600, maximum=50)  # 5,000 quiet pools, none asking


@pytest.mark.parametrize("names", ["names-of-128"], indirect=True)
def test_five_thousand_runner_types_forecast_in_one_page_and_its_fall_back_fit_every_limit(
    environment: Path, monkeypatch: pytest.MonkeyPatch, names: list[str]
) -> None:
    """The predictive page at its largest: every row carries its forecast and evidence; with the chat topic."""
    sns = boto3.client("sns", region_name="us-east-1")
    monkeypatch.setenv("CHAT_TOPIC_ARN", sns.create_topic(Name="chat")["TopicArn"])
    module = load_handler_module("evaluate")
    captured = Captured()
    module.aws.sns("us-east-1").meta.events.register("before-parameter-build.sns.Publish", captured)

    fired = tick(module, T0, queueing=False, names=names, forecast=FILLING)
    assert len(fired["firing"]) == FLEET and fired["pages_sent"] and not fired["pages_failed"]
    assert group_item_bytes() <= ITEM_LIMIT
    resolved = tick(module, T0 + timedelta(minutes=1), queueing=False, names=names, forecast=CALM)
    assert resolved["firing"] == [] and resolved["pages_sent"] and not resolved["pages_failed"]

    alerts = [json.loads(json.loads(p["Message"])["default"]) for p in captured.publishes if p.get("MessageStructure")]
    assert [(a["status"], a["forecast"], a["did_not_happen"]) for a in alerts] == [
        ("firing", True, False),
        ("resolved", False, True),
    ]
    assert all(row["forecast"]["evidence"].startswith("42 jobs arrived") for row in alerts[0]["runner_types"])
    for publish in captured.publishes:
        check_subject(publish["Subject"])
        attributes = sum(len(k) + len(json.dumps(v)) for k, v in publish.get("MessageAttributes", {}).items())
        assert len(publish["Message"].encode()) + len(publish["Subject"]) + attributes <= SNS_MESSAGE_LIMIT
    chats = [json.loads(p["Message"]) for p in captured.publishes if not p.get("MessageStructure")]
    assert len(chats) == 2
    for body in chats:
        CHATBOT.validate(body)
    assert "will queue past 1m" in chats[0]["content"]["description"]
