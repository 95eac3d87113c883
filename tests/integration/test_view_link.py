"""Every page's "view" link: the stack's dashboard over the time around the page, in the JSON alert, the
e-mail and the chat notification; none when the evaluator is told no dashboard."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from consumers import CHATBOT
from jsonschema import Draft202012Validator
from support import StackInMoto, minutes, runner_type, snapshot

from queuewatch.alerting.alert import dashboard_view_url, shipped_alert_schema
from queuewatch.config.load import parse_config
from queuewatch.evaluate.page import VIEW_AFTER, VIEW_BEFORE

CONFIG = parse_config(
    """
version: 1
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 1m, queue_size: 0}
    keep_firing_for: 0s
    team: ci-infra
""",
    source="test.yaml",
)
ALERT = Draft202012Validator(shipped_alert_schema())


def range_of(url: str) -> tuple[datetime, datetime]:
    query = parse_qs(urlsplit(urlsplit(url).fragment).query)
    [start], [end] = query["start"], query["end"]
    return datetime.fromisoformat(start), datetime.fromisoformat(end)


def test_the_url_opens_the_named_dashboard_in_its_region_over_the_range() -> None:
    start = datetime(2026, 11, 21, 17, 0, 42, tzinfo=UTC)
    end = datetime(2026, 11, 21, 20, 15, tzinfo=timezone(timedelta(hours=1)))
    url = dashboard_view_url("eu-west-1", "prod-queuewatch", start, end)
    parts = urlsplit(url)
    assert parts.netloc == "eu-west-1.console.aws.amazon.com" and parts.path == "/cloudwatch/home"
    assert parse_qs(parts.query) == {"region": ["eu-west-1"]}
    assert urlsplit(parts.fragment).path == "dashboards/dashboard/prod-queuewatch"
    # UTC, to the minute: 20:15 at +01:00 is 19:15Z.
    assert range_of(url) == (datetime(2026, 11, 21, 17, 0, tzinfo=UTC), datetime(2026, 11, 21, 19, 15, tzinfo=UTC))


@pytest.mark.parametrize(
    ("region", "host"),
    [("cn-north-1", "cn-north-1.console.amazonaws.cn"), ("us-gov-west-1", "console.amazonaws-us-gov.com")],
)
def test_the_console_of_other_partitions(region: str, host: str) -> None:
    url = dashboard_view_url(region, "d", minutes(0), minutes(1))
    assert urlsplit(url).netloc == host and f"region={region}" in url


class Published:
    def __init__(self, moto: StackInMoto) -> None:
        self.moto = moto
        self.sqs = boto3.client("sqs", region_name=moto.stack.region)
        self.inbox = moto.subscribe_queue("inbox")
        assert moto.stack.chat_topic_arn is not None
        self.chat = moto.subscribe_queue("chat", moto.stack.chat_topic_arn, {"RawMessageDelivery": "true"})
        self.emails: list[str] = []
        moto.sns.meta.events.register("provide-client-params.sns.Publish", self._record)

    def _record(self, params: dict[str, Any], **_: Any) -> None:
        if params.get("MessageStructure") == "json":
            self.emails.append(json.loads(params["Message"])["email"])

    def drain(self, url: str) -> list[dict[str, Any]]:
        out = []
        while batch := self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
            for message in batch:
                self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                out.append(json.loads(message["Body"]))
        return out


def stack_with(dashboard: str | None) -> Published:
    moto = StackInMoto.create(name="prod", chat=True)
    moto.stack = dataclasses.replace(moto.stack, dashboard_name=dashboard)
    return Published(moto)


def test_every_page_links_to_the_dashboard_around_it(aws: None) -> None:
    published = stack_with("prod-queuewatch")
    published.moto.evaluate(snapshot(minutes(0), runner_type("linux.2xlarge", 14, 6840)), CONFIG)
    published.moto.evaluate(snapshot(minutes(30), runner_type("linux.2xlarge", 0, 0)), CONFIG)
    alerts = [json.loads(envelope["Message"]) for envelope in published.drain(published.inbox)]
    assert [a["page"] for a in alerts] == ["new", "resolved"]
    for alert, email, chat in zip(alerts, published.emails, published.drain(published.chat), strict=True):
        ALERT.validate(alert)
        CHATBOT.validate(chat)
        url = alert["view_url"]
        assert "#dashboards/dashboard/prod-queuewatch?" in url
        start, end = range_of(url)
        # From before the alert started to after this page: the build-up and the page both in view.
        assert start == datetime.fromisoformat(alert["started_at"]) - VIEW_BEFORE
        assert end == datetime.fromisoformat(alert["evaluated_at"]) + VIEW_AFTER
        assert f"View:       {url}" in email
        assert f"[View]({url})" in chat["content"]["description"]
    # The resolve's range covers the whole episode.
    assert range_of(alerts[1]["view_url"])[1] - range_of(alerts[0]["view_url"])[1] == timedelta(minutes=30)


def test_without_a_dashboard_pages_carry_no_view_link(aws: None) -> None:
    published = stack_with(None)
    published.moto.evaluate(snapshot(minutes(0), runner_type("linux.2xlarge", 14, 6840)), CONFIG)
    [envelope] = published.drain(published.inbox)
    alert = json.loads(envelope["Message"])
    ALERT.validate(alert)
    assert alert["view_url"] is None
    assert "View:" not in published.emails[0]
    [chat] = published.drain(published.chat)
    assert "[View]" not in chat["content"]["description"]


def test_an_alert_from_before_the_view_link_is_still_a_valid_v1_alert() -> None:
    """Consumers validating with the shipped schema take alerts of senders that predate the field."""
    properties = shipped_alert_schema()["properties"]
    assert "view_url" in properties and "view_url" not in shipped_alert_schema().get("required", [])
