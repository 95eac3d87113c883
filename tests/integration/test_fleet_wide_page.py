"""A fleet-wide incident, 5,000 runner types in one group, pages and resolves through the evaluate handler, then
pages ahead on forecasts and falls back, with the chat topic, and every part of it fits its AWS limit: DynamoDB's
item, SNS's message and subject, CloudWatch's description and alarm name, the chat notification.

One moto pass, at the worst size (names of 128 characters, both topics' bodies in the group's item), shared by
the tests; without the chat topic the page is sized without moto (tests/unit/test_notifications.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from hashlib import sha256
from typing import Any

import boto3
import pytest
from consumers import CHATBOT, check_pager_envelope, check_subject, description_fields
from forecast_pools import FILLING
from moto import mock_aws
from support import T0, fake_aws_environment, runner_type, snapshot

from queuewatch.adapters.aws.item_size import ITEM_LIMIT, item_size
from queuewatch.adapters.state_table.keys import PARTITION
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.notifications import SNS_MESSAGE_LIMIT
from queuewatch.notifications.cloudwatch import ALARM_DESCRIPTION_LIMIT
from queuewatch.runtime.wire import encode_snapshot
from queuewatch_cli.devkit.handlers import FakeContext, destination_record, load_event, load_handler_module
from queuewatch_cli.devkit.moto_tables import create_state_table

LONG_RUNNING = True  # one moto pass at 5,000 runner types: some 4 minutes: started first (conftest.py)
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
    return max((item_size(item) for item in items), default=0)


@dataclass
class FleetRun:
    """One moto pass at the worst size, with the chat topic: a plain page and its resolve, then a forecast
    page and its fall-back, each tick's handler result, the largest group item stored, and every Publish."""

    results: list[dict[str, Any]] = field(default_factory=list)
    stored: list[int] = field(default_factory=list)  # the largest group item after each tick
    publishes: list[dict[str, Any]] = field(default_factory=list)
    published: list[int] = field(default_factory=list)  # how many Publishes there were after each tick

    def alerts(self) -> list[dict[str, Any]]:
        return [p for p in self.publishes if p.get("MessageStructure") == "json"]

    def chats(self) -> list[dict[str, Any]]:
        return [json.loads(p["Message"]) for p in self.publishes if p.get("MessageStructure") != "json"]


CALM = ForecastInputs(window_seconds=600, arrived=0, run_seconds=600, maximum=50)  # 5,000 quiet pools, none asking


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetRun]:
    config = tmp_path_factory.mktemp("fleet") / "fleet.yaml"
    config.write_text(config_text(LONGEST, forecast=True), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch, mock_aws():
        fake_aws_environment(patch)
        for key, value in {"QUEUEWATCH_CONFIG": str(config), "STATE_TABLE": "state", "STACK_NAME": "fleet"}.items():
            patch.setenv(key, value)
        create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")
        sns = boto3.client("sns", region_name="us-east-1")
        patch.setenv("ALERT_TOPIC_ARN", sns.create_topic(Name="alerts")["TopicArn"])
        patch.setenv("CHAT_TOPIC_ARN", sns.create_topic(Name="chat")["TopicArn"])
        module = load_handler_module("evaluate")
        run = FleetRun()
        module.aws.sns("us-east-1").meta.events.register(
            "before-parameter-build.sns.Publish", lambda params, **_: run.publishes.append(params)
        )
        ticks = [(True, None), (False, None), (False, FILLING), (False, CALM)]
        for minute, (queueing, forecast) in enumerate(ticks):
            run.results.append(tick(module, T0 + timedelta(minutes=minute), queueing, LONGEST, forecast))
            run.stored.append(group_item_bytes())
            run.published.append(len(run.publishes))
        yield run


def test_five_thousand_runner_types_page_and_resolve_within_every_limit(
    fleet: FleetRun, capsys: pytest.CaptureFixture[str]
) -> None:
    fired, resolved = fleet.results[:2]
    assert len(fired["firing"]) == FLEET and fired["pages_sent"] and not fired["pages_failed"]
    assert fleet.stored[0] <= ITEM_LIMIT
    assert resolved["firing"] == [] and resolved["pages_sent"] and not resolved["pages_failed"]

    for publish in fleet.publishes:
        check_subject(publish["Subject"])
        attributes = sum(len(k) + len(json.dumps(v)) for k, v in publish.get("MessageAttributes", {}).items())
        assert len(publish["Message"].encode()) + len(publish["Subject"]) + attributes <= SNS_MESSAGE_LIMIT
    alerts = fleet.alerts()
    assert [json.loads(json.loads(p["Message"])["default"])["status"] for p in alerts[:2]] == ["firing", "resolved"]
    first = json.loads(alerts[0]["Message"])
    alert = json.loads(first["default"])
    assert alert["runner_types_affected"] == FLEET and alert["silence"]["match"] == ["*"]
    assert len(alert["silence"]["command"]) < 300
    assert alert["teams"] == [alert["team"], *(f"team-{i:02d}" for i in range(40))]  # every team, the rule's first
    alarm = json.loads(first["https"])
    check_pager_envelope(alerts[0]["Subject"], alarm)
    assert len(alarm["AlarmDescription"]) <= ALARM_DESCRIPTION_LIMIT and len(alarm["AlarmName"]) <= 255
    assert description_fields(alarm["AlarmDescription"])["RUNNER_TYPES"].endswith(" more)")
    chats = fleet.chats()
    assert len(chats) == 4  # the page's and the resolve's, then the forecast's two
    for body in chats:
        CHATBOT.validate(body)
    assert fleet.published[0] == 2  # the first tick's page, on both topics
    with capsys.disabled():
        print(
            f"\n{FLEET} runner types of {len(LONGEST[0])} characters: group item {fleet.stored[0]:,} of {ITEM_LIMIT:,}"
        )


def test_five_thousand_runner_types_forecast_in_one_page_and_its_fall_back_fit_every_limit(fleet: FleetRun) -> None:
    """The predictive page at its largest: every row carries its forecast and evidence; with the chat topic."""
    fired, resolved = fleet.results[2:]
    assert len(fired["firing"]) == FLEET and fired["pages_sent"] and not fired["pages_failed"]
    assert fleet.stored[2] <= ITEM_LIMIT
    assert resolved["firing"] == [] and resolved["pages_sent"] and not resolved["pages_failed"]

    alerts = [json.loads(json.loads(p["Message"])["default"]) for p in fleet.alerts()]
    assert [(a["status"], a["forecast"], a["did_not_happen"]) for a in alerts] == [
        ("firing", False, False),
        ("resolved", False, False),
        ("firing", True, False),
        ("resolved", False, True),
    ]
    assert all(row["forecast"]["evidence"].startswith("42 jobs arrived") for row in alerts[2]["runner_types"])
    assert "will queue past 1m" in fleet.chats()[2]["content"]["description"]
