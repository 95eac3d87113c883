"""How a predictive page reads, in every body: that it is a forecast, when the queue is predicted to pass the
threshold and how sure, what the forecast stands on; and a forecast that fell back, "did not happen"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from queuewatch.alerting.alert import Alert, ForecastFigures, RunnerTypeFigures, Silence
from queuewatch.base.subjects import SUBJECT_LIMIT
from queuewatch.notifications import Origin, chat_notification, cloudwatch_alarm, email_text

AT = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
EVIDENCE = "42 jobs arrived in 10m, 3 runners left of 50, jobs run about 40m, start-up about 1m"
AHEAD = ForecastFigures(
    queue_time_threshold_seconds=1800,
    horizon_seconds=600,
    crosses_in_seconds=8 * 60 + 10,
    earliest_in_seconds=5 * 60,
    latest_in_seconds=14 * 60 + 20,
    likely=True,
    wait_seconds=1900,
    full_in_seconds=64,
    runners_left=3,
    maximum=50,
    evidence=EVIDENCE,
)
SUMMARY = (
    "Forecast, not yet queueing: 1 runner type where a job queued in the next 10m is predicted to wait past 30m "
    f"(queue time > 30m): linux.2xlarge (us-east-1) will queue past 30m in about 8m (likely; 5m-14m): {EVIDENCE}"
)


def alert(*, status: str = "firing", forecast: bool = True, did_not_happen: bool = False, title: str = "") -> Alert:
    row = RunnerTypeFigures(
        runner_type="linux.2xlarge",
        region="us-east-1",
        queue="gh-ci-linux-2xlarge-queued-builds",
        team="ci-infra",
        status="firing" if status == "firing" else "resolved",
        since=AT,
        queue_size=0,
        queue_time_seconds=0,
        queue_size_threshold=None,
        queue_time_threshold_seconds=1800,
        breached=[],
        forecast=AHEAD if status == "firing" else None,
    )
    return Alert(
        status="firing" if status == "firing" else "resolved",
        page="new" if status == "firing" else "resolved",
        priority="P2",
        severity="warning",
        title=title or "Jobs are queueing (jobs-queueing)",
        summary=SUMMARY if forecast else "Did not happen: the forecast fell back",
        rule="jobs-queueing",
        team="ci-infra",
        group_by="all",
        group="all",
        dedup_key="queuewatch/prod/jobs-queueing/all/0123456789ab",
        notification_id="queuewatch/prod/jobs-queueing/all/0123456789ab@20261121T180000Z#1",
        sequence=1,
        started_at=AT,
        evaluated_at=AT,
        runner_types=[row],
        runner_types_affected=1,
        max_queue_size=0,
        max_queue_size_runner_type="linux.2xlarge",
        max_queue_time_seconds=0,
        max_queue_time_runner_type="linux.2xlarge",
        runbook_url=None,
        dashboard_url=None,
        silence=Silence(command="queuewatch silence add ...", match=["linux.2xlarge"]),
        source={"stack": "prod"},
        forecast=forecast,
        did_not_happen=did_not_happen,
    )


@pytest.mark.parametrize(
    ("figures", "said"),
    [
        (AHEAD, "in about 8m (likely; 5m-14m)"),
        (AHEAD.model_copy(update={"latest_in_seconds": None, "likely": False}), "in about 8m (possible; from 5m, "),
        (AHEAD.model_copy(update={"crosses_in_seconds": 30.0, "earliest_in_seconds": 0.0}), "within a minute"),
        (AHEAD.model_copy(update={"latest_in_seconds": 5 * 60.0, "crosses_in_seconds": 300.0}), "in about 5m (likely)"),
    ],
)
def test_a_forecast_says_when_and_how_sure(figures: ForecastFigures, said: str) -> None:
    assert figures.text().startswith(f"will queue past 30m {said}")
    assert figures.text().endswith(f": {EVIDENCE}")


def test_a_row_on_a_forecast_says_what_it_stands_on_beside_its_queue() -> None:
    row = alert().runner_types[0]
    assert row.queue_text() == f"0 queued, oldest 0s; forecast: {AHEAD.text()}"


def test_the_subject_says_it_is_a_forecast_and_when_within_snss_limit() -> None:
    assert alert().subject == (
        "ALARM: P2 linux.2xlarge forecast to queue past 30m in about 8m: Jobs are queueing (jobs-queueing)"
    )
    longer = alert(title="Jobs stuck in the queue on the large pool").subject  # the figure goes before the words
    assert longer == "ALARM: P2 linux.2xlarge forecast to queue past 30m: Jobs stuck in the queue on the large pool"
    longest = alert(title="Jobs are queueing on the largest pool we run, " * 4).subject
    assert len(longest) < SUBJECT_LIMIT and longest.startswith("ALARM: P2: Jobs are queueing")


def test_a_forecast_that_fell_back_says_it_did_not_happen_in_every_body() -> None:
    resolved = alert(status="resolved", forecast=False, did_not_happen=True)
    assert resolved.subject == "OK: P2 linux.2xlarge did not happen: Jobs are queueing (jobs-queueing)"
    chat = chat_notification(resolved)
    assert chat["content"]["title"] == (  # type: ignore[index]
        ":white_check_mark: OK P2 (did not happen): Jobs are queueing (jobs-queueing)"
    )
    assert email_text(resolved).startswith("OK (did not happen): Jobs are queueing (jobs-queueing)")
    origin = Origin(account_id="123456789012", region="us-east-1", topic_arn="arn:aws:sns:us-east-1:1:t")
    assert cloudwatch_alarm(resolved, origin)["NewStateReason"] == "Did not happen: the forecast fell back"


def test_a_predictive_page_says_it_is_a_forecast_in_every_body() -> None:
    page = alert()
    chat = chat_notification(page)
    content = chat["content"]
    assert content["title"] == ":crystal_ball: ALARM P2 (forecast): Jobs are queueing (jobs-queueing)"  # type: ignore[index]
    assert content["description"].startswith(SUMMARY)  # type: ignore[index]
    assert f"forecast: {AHEAD.text()}" in content["description"]  # type: ignore[index]
    assert email_text(page).startswith("ALARM (forecast): Jobs are queueing (jobs-queueing)")
    origin = Origin(account_id="123456789012", region="us-east-1", topic_arn="arn:aws:sns:us-east-1:1:t")
    assert cloudwatch_alarm(page, origin)["NewStateReason"] == SUMMARY  # no "Threshold crossed": none was
