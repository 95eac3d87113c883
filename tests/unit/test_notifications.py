"""Every body of a page, checked against the fields its consumer documents, at the limits that bite."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import timedelta
from typing import Any, Literal

import pytest
from consumers import (
    CHATBOT,
    check_pager_envelope,
    check_structured,
    check_subject,
    description_fields,
)
from jsonschema import Draft202012Validator
from support import T0, count, level, runner_type, with_signals

from queuewatch.adapters.aws.item_size import ITEM_LIMIT
from queuewatch.adapters.state_table.alerts import group_item_size
from queuewatch.alerting.alert import Alert, RunnerTypeFigures, Silence, shipped_alert_schema
from queuewatch.alerting.alert_state import GroupRecord, GroupStatus, PageKind
from queuewatch.alerting.triage import triage
from queuewatch.base.wording import plural
from queuewatch.config.routes import DEFAULT_ROUTING
from queuewatch.evaluate.delivery import outbox_for
from queuewatch.evaluate.stack import Stack
from queuewatch.model.rules import HEALTH_RULE
from queuewatch.model.snapshot import Reading
from queuewatch.notifications import (
    SNS_MESSAGE_LIMIT,
    Origin,
    cloudwatch_alarm,
    email_text,
    render,
    sns_message,
)
from queuewatch.notifications.cloudwatch import ALARM_DESCRIPTION_LIMIT

ORIGIN = Origin.of_topic("arn:aws:sns:us-east-1:123456789012:queuewatch-AlertTopic-1A2B3C")
ALERT_SCHEMA = Draft202012Validator(shipped_alert_schema())


def figures(
    name: str, size: float, age: float, *, status: Literal["firing", "resolved"] = "firing", **signals: Reading
) -> RunnerTypeFigures:
    rt = with_signals(runner_type(name, size, age), **signals)
    return RunnerTypeFigures(
        runner_type=name,
        region="us-east-1",
        queue=rt.queue_name,
        team="ci-infra",
        status=status,
        since=T0,
        queue_size=size,
        queue_time_seconds=age,
        queue_size_threshold=0,
        queue_time_threshold_seconds=60,
        breached=["queue_size", "queue_time"] if status == "firing" else [],
        console_url=f"https://us-east-1.console.aws.amazon.com/cloudwatch/home?region=us-east-1#q={rt.queue_name}",
        signals={k.value: v.value for k, v in rt.signals.items() if v.value is not None and k.value in signals},
        triage=triage(rt, window=900, baseline=10800) if status == "firing" else None,
    )


def make_alert(*listed: RunnerTypeFigures, status: Literal["firing", "resolved"] = "firing", **update: Any) -> Alert:
    listed = listed or (
        figures(
            "linux.2xlarge",
            14,
            6840,
            total_runners=level(40),
            busy_runners=level(40),
            max_hit=count(12, 0),
        ),
    )
    first = listed[0]
    cause = None
    if first.triage and first.triage.findings:
        cause = f"{first.runner_type}: {first.triage.findings[0].title}: {first.triage.findings[0].detail}"
    key = "queuewatch/prod/jobs-queueing/all/0123456789ab"
    alert = Alert(
        status=status,
        page="new" if status == "firing" else "resolved",
        priority="P2",
        severity="warning",
        title="Jobs are queueing (jobs-queueing)",
        summary=f"{plural(len(listed), 'runner type')} queueing (queue size > 0 and queue time > 1m): "
        + "; ".join(f"{f.runner_type}: {f.queue_size:g} queued" for f in listed[:5]),
        rule="jobs-queueing",
        team="ci-infra",
        group_by="all",
        group="all",
        dedup_key=key,
        notification_id=f"{key}#1",
        sequence=1,
        started_at=T0,
        evaluated_at=T0 + timedelta(minutes=3),
        resolved_at=T0 + timedelta(minutes=3) if status == "resolved" else None,
        runner_types=list(listed),
        runner_types_affected=len(listed),
        max_queue_size=max(f.queue_size or 0 for f in listed),
        max_queue_size_runner_type=first.runner_type,
        max_queue_time_seconds=max(f.queue_time_seconds or 0 for f in listed),
        max_queue_time_runner_type=first.runner_type,
        runbook_url="https://github.com/example-org/ci-runbooks/blob/main/jobs-queueing.md",
        dashboard_url="https://example-org.grafana.net/d/ci-queue",
        silence=Silence(
            command="queuewatch silence add --stack queuewatch@us-east-1 --rule jobs-queueing "
            "--match linux.2xlarge --for 2h --comment 'why this is silenced'",
            match=[f.runner_type for f in listed],
        ),
        source={"stack": "prod", "region": "us-east-1", "observation": "snap-1"},
        likely_cause=cause,
    )
    return alert.model_copy(update=update)


def bodies(alert: Alert) -> dict[str, str]:
    return check_structured(sns_message(alert, ORIGIN))


def test_the_structured_message_gives_each_protocol_its_body() -> None:
    alert = make_alert()
    structure = bodies(alert)
    assert set(structure) == {"default", "email", "http", "https", "sms"}
    ALERT_SCHEMA.validate(json.loads(structure["default"]))  # sqs, lambda, email-json get `default`
    assert json.loads(structure["https"]) == json.loads(structure["http"]) == cloudwatch_alarm(alert, ORIGIN)
    assert structure["sms"] == alert.subject


@pytest.mark.parametrize("status", ["firing", "resolved"])
def test_the_pager_body_is_a_cloudwatch_alarm_notification(status: Literal["firing", "resolved"]) -> None:
    alert = make_alert(status=status)
    body = json.loads(bodies(alert)["https"])
    check_pager_envelope(alert.subject, body)
    assert body["NewStateValue"] == ("ALARM" if status == "firing" else "OK")
    assert body["OldStateValue"] == ("OK" if status == "firing" else "ALARM")
    assert body["AlarmName"].startswith(f"{alert.source['stack']}: {alert.title} [")
    assert body["AlarmArn"] == f"arn:aws:cloudwatch:us-east-1:123456789012:alarm:{alert.dedup_key}"
    assert body["Region"] == "US East (N. Virginia)"
    assert body["StateChangeTime"] == "2026-11-21T18:03:00.000+0000"
    # The metric the evaluator publishes, under its whole dimension set: a consumer can query it as named.
    assert body["Trigger"]["Dimensions"] == [
        {"value": "linux.2xlarge", "name": "RunnerType"},
        {"value": "prod", "name": "Stack"},
        {"value": "queuewatch", "name": "service"},
    ]
    assert body["Trigger"]["Threshold"] == 60.0


def test_the_alarm_description_carries_team_priority_runbook_and_summary() -> None:
    alert = make_alert()
    fields = description_fields(cloudwatch_alarm(alert, ORIGIN)["AlarmDescription"])  # type: ignore[arg-type]
    assert fields["TEAM"] == "ci-infra" and fields["PRIORITY"] == "P2"
    assert fields["RUNBOOK"] == alert.runbook_url
    assert fields["SUMMARY"] == alert.summary
    assert fields["CAUSE"].startswith("linux.2xlarge: At the autoscaler's maximum: the autoscaler refused 12")
    assert fields["SILENCE"] == alert.silence.command
    assert fields["VIEW"] == alert.dashboard_url or fields["VIEW"] == alert.runner_types[0].console_url
    assert fields["RUNNER_TYPES"] == "linux.2xlarge"


def test_the_alarm_description_names_every_team_a_view_and_the_runner_types_within_1024_and_20_lines() -> None:
    many = [figures(f"linux.type{i:04d}", i + 1, 600 + i) for i in range(50)]
    teams = ["ci-infra", *(f"team-{i:03d}" for i in range(40))]
    alert = make_alert(*many, dashboard_url=None, teams=teams, runner_types_affected=5000)
    description = cloudwatch_alarm(alert, ORIGIN)["AlarmDescription"]
    assert isinstance(description, str)
    assert len(description) <= ALARM_DESCRIPTION_LIMIT <= 4096 and len(description.splitlines()) <= 20
    fields = description_fields(description)
    assert fields["VIEW"] == many[0].console_url  # no dashboard: the console
    assert fields["SILENCE"] == alert.silence.command
    assert fields["TEAMS"].startswith("ci-infra, team-000") and fields["TEAMS"].endswith(" more)")
    shown = fields["RUNNER_TYPES"].split(" (+")[0].split(", ")
    assert shown == [f.runner_type for f in many[: len(shown)]]
    assert fields["RUNNER_TYPES"].endswith(f"(+{5000 - len(shown)} more)")


def test_the_alarm_name_is_readable_unique_per_alert_and_within_255() -> None:
    one = make_alert()
    other = make_alert(dedup_key=one.dedup_key + "x")
    long = make_alert(title="t " * 300)
    names = [str(cloudwatch_alarm(a, ORIGIN)["AlarmName"]) for a in (one, other, long)]
    assert names[0] != names[1] and all(len(n) <= 255 for n in names)
    assert names[0].startswith(f"{one.source['stack']}: {one.title}")


def test_a_long_summary_is_cut_to_fit_cloudwatchs_limits_and_keeps_every_required_key() -> None:
    many = [figures(f"linux.type{i:03d}.with.a.rather.long.name", i + 1, 600 + i) for i in range(60)]
    alert = make_alert(*many, summary="x" * 5000, likely_cause="y" * 2000)
    body = cloudwatch_alarm(alert, ORIGIN)
    check_pager_envelope(alert.subject, body)
    assert len(body["AlarmDescription"]) <= ALARM_DESCRIPTION_LIMIT  # type: ignore[arg-type]
    fields = description_fields(body["AlarmDescription"])  # type: ignore[arg-type]
    assert {"TEAM", "PRIORITY", "RUNBOOK", "SUMMARY"} <= set(fields)
    assert fields["SUMMARY"].endswith("…")


def test_title_alarm_name_and_dedup_key_hold_no_figures() -> None:
    quiet = make_alert(figures("linux.2xlarge", 1, 90))
    loud = make_alert(figures("linux.2xlarge", 400, 86000), figures("linux.4xlarge", 3, 70))
    for part in ("title", "dedup_key"):
        assert getattr(quiet, part) == getattr(loud, part)
    assert cloudwatch_alarm(quiet, ORIGIN)["AlarmName"] == cloudwatch_alarm(loud, ORIGIN)["AlarmName"]
    assert not any(ch.isdigit() for ch in quiet.title)


def test_the_subject_is_ascii_under_100_characters_with_state_priority_count_and_worst_figures() -> None:
    alert = make_alert()
    check_subject(alert.subject)
    assert alert.subject == f"ALARM: P2 linux.2xlarge, max queue time 1h54m, max queue size 14: {alert.title}"
    long = make_alert(title="Jobs are queueing (a-rule-with-a-very-long-name-that-goes-on-and-on) team infrastructure")
    check_subject(long.subject)
    assert long.subject == f"ALARM: P2: {long.title}"  # the figures give way; the title stays whole
    check_subject(make_alert(status="resolved").subject)
    assert make_alert(status="resolved").subject.startswith("OK: P2 linux.2xlarge recovered")


ZURICH_TEAM = "Plateforme CI – Zürich"


def test_a_page_for_a_team_with_a_non_ascii_name_has_a_subject_sns_takes() -> None:
    alert = make_alert(
        title=f"Jobs are queueing (jobs-queueing) team {ZURICH_TEAM}", team=ZURICH_TEAM, teams=[ZURICH_TEAM]
    )
    check_subject(alert.subject)
    assert alert.subject.endswith("team Plateforme CI - Zurich")
    long = make_alert(title=f"Jobs are queueing (jobs-queueing) team {ZURICH_TEAM * 6}", team=ZURICH_TEAM)
    check_subject(long.subject)
    assert long.subject.startswith("ALARM: P2: Jobs are queueing (jobs-queueing) team Plateforme CI - Zurich")


def test_the_email_is_a_readable_page_with_table_triage_links_and_silence() -> None:
    second = figures("linux.4xlarge", 3, 300, total_runners=level(10), busy_runners=level(10))
    alert = make_alert(make_alert().runner_types[0], second)
    text = email_text(alert)
    lines = text.splitlines()
    assert lines[0] == "ALARM: Jobs are queueing (jobs-queueing)"
    header = next(i for i, line in enumerate(lines) if line.startswith("Runner type"))
    assert lines[header].split() == ["Runner", "type", "Region", "Queued", "Oldest", "Busy/total", "Likely", "cause"]
    assert lines[header + 2].split()[:5] == ["linux.2xlarge", "us-east-1", "14", "1h54m", "40/40"]
    assert "At the autoscaler's maximum" in lines[header + 2]
    assert lines[header + 3].split()[:5] == ["linux.4xlarge", "us-east-1", "3", "5m", "10/10"]
    # Each cause ends with what to do first and where to look.
    assert (
        "  1. At the autoscaler's maximum: the autoscaler refused 12 scale-ups at its maximum in 15m. First: raise "
        "the autoscaler's runners_maximum_count for this runner type, or free runners; look in the scale-up "
        "log group (/aws/lambda/<prefix>-<key>-scale-up) for the scale-ups it refused"
    ) in lines
    assert "  2. Saturated: 40 of 40 runners busy (100%). First: raise the autoscaler's runners_maximum_count" in text
    # What neither runner type has a signal for: one line, whatever the fleet cannot publish.
    [common] = [line for line in lines if line.startswith("Not checked, for want of a signal: ")]
    assert "Jobs running longer" in common and "needs job_duration" not in common
    assert "  Not checked: At the autoscaler's maximum: needs max_hit, or max_runners with total_runners" in lines
    assert f"  Runbook:    {alert.runbook_url}" in lines
    assert f"  {alert.silence.command}" in lines
    resolved = email_text(make_alert(status="resolved"))
    assert resolved.startswith("OK: Jobs are queueing") and "Silence it" not in resolved


def test_the_chat_body_is_a_chatbot_custom_notification_threaded_by_the_dedup_key() -> None:
    firing, resolved = make_alert(), make_alert(status="resolved", sequence=2)
    for alert in (firing, resolved):
        chat = json.loads(render(alert, ORIGIN).chat or "")
        CHATBOT.validate(chat)
        assert chat["metadata"]["threadId"] == alert.dedup_key
    chat = json.loads(render(firing, ORIGIN).chat or "")
    assert chat["content"]["title"] == ":rotating_light: ALARM P2: Jobs are queueing (jobs-queueing)"
    assert "refused 12 scale-ups" in chat["content"]["description"]
    assert any(step.startswith("Silence it: `queuewatch silence add") for step in chat["content"]["nextSteps"])
    done = json.loads(render(resolved, ORIGIN).chat or "")
    assert done["content"]["title"].startswith(":white_check_mark: OK P2")


def _crowded(listed: int) -> Alert:
    many = [
        figures(
            f"linux.t{i:03d}." + "n" * 117,  # the longest name a runner type may have (128)
            i + 1,
            600 + i,
            busy_runners=level(40),
            total_runners=level(40),
            max_hit=count(3, 0),
            job_arrivals=count(60, 10),
            creation_failures=count(4, 0),
        )
        for i in range(listed)
    ]
    return make_alert(*many, runner_types_affected=400)


def test_fifty_runner_types_with_every_finding_fit_sns_whole() -> None:
    rendered = render(_crowded(50), ORIGIN)
    assert rendered.listed == 50
    assert len(rendered.message.encode()) <= SNS_MESSAGE_LIMIT


def test_a_page_too_big_for_its_room_lists_fewer_runner_types_and_still_counts_all() -> None:
    rendered = render(_crowded(50), ORIGIN, room=40_000)
    assert rendered.stored_bytes <= 40_000
    assert 1 <= rendered.listed < 50
    default = json.loads(check_structured(rendered.message)["default"])
    ALERT_SCHEMA.validate(default)
    assert len(default["runner_types"]) == rendered.listed and default["runner_types_affected"] == 400
    assert f"and {400 - rendered.listed} more runner types" in check_structured(rendered.message)["email"]
    assert rendered.chat is not None
    CHATBOT.validate(json.loads(rendered.chat))


def test_the_monitor_page_says_the_collector_failed_not_that_runner_types_queue() -> None:
    failed = figures("collector", 0, 0).model_copy(update={"breached": ["collection_failed"]})
    alert = make_alert(failed, rule=HEALTH_RULE, title="queuewatch monitor degraded")
    check_subject(alert.subject)
    assert alert.subject == "ALARM: P2 collection failed: queuewatch monitor degraded"
    assert "queueing" not in alert.subject


def test_counts_agree_with_their_nouns() -> None:
    assert (plural(1, "runner type"), plural(3, "runner type")) == ("1 runner type", "3 runner types")
    assert (plural(1, "scale-up"), plural(12, "scale-up")) == ("1 scale-up", "12 scale-ups")


@pytest.mark.parametrize("chat", [True, False], ids=["with-chat", "without-chat"])
def test_the_outbox_budget_keeps_a_page_and_its_chat_body_within_the_items_400_kb(chat: bool) -> None:
    # 5,000 members whose names share nothing (generated ids): compressed they still fill three quarters of the
    # item, and bodies rendered without the budget (a whole SNS message beside the chat body) would not fit.
    # Without the chat topic the alert's body has the room alone, and SNS's limit is the one that binds.
    # (tests/integration/test_fleet_wide_page.py pages 5,000 names through moto, with the chat topic.)
    rng = random.Random(18)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
    members = tuple("r" + "".join(rng.choice(alphabet) for _ in range(79)) for _ in range(5000))
    alert = make_alert(*(figures(name, 3, 900) for name in members[:200]))
    arn = "arn:aws:sns:us-east-1:123456789012:"
    stack = Stack("prod", "state", arn + "alerts", "us-east-1", chat_topic_arn=arn + "chat" if chat else None)
    record = GroupRecord("jobs-queueing", "all", GroupStatus.FIRING, T0, members, None, 1)
    now = T0 + timedelta(minutes=3)
    outbox = outbox_for(alert, record, stack, now, DEFAULT_ROUTING, PageKind.NEW)
    assert group_item_size(replace(record, outbox=outbox), now) <= ITEM_LIMIT
    attributes = sum(len(k) + len(json.dumps(v)) for k, v in outbox.attributes.items())
    assert len(outbox.message.encode()) + len(outbox.subject) + attributes <= SNS_MESSAGE_LIMIT
    assert bool(outbox.chat_message) == chat and json.loads(outbox.message)["default"]  # the bodies kept
