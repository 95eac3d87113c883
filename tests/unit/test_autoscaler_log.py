"""The autoscaler's log lines, in Powertools' JSON shape and both wordings (v5-v6, v7.x), classified."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from support import count, level, runner_type, with_signals

from queuewatch.alerting.triage import triage
from queuewatch.model.autoscaler_log import (
    DEFAULT_SCALE_ERRORS,
    INSIGHTS_QUERY,
    AutoscalerLog,
    LogCauseKind,
    LogRow,
    classify,
    function_base,
    insights_url,
    log_groups,
)
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot
from queuewatch_cli.devkit.insights_moto import powertools_line

T = datetime(2026, 11, 28, 4, 0, tzinfo=UTC)
SCALE_UP = "/aws/lambda/ghr-linux-x64-scale-up"
JOB_RETRY = "/aws/lambda/ghr-linux-x64-job-retry"


def line(level: str, message: str, function: str = "ghr-linux-x64-scale-up", **extra: Any) -> str:
    """A line as upstream's logger writes it, at `level` (the unit tests' order of arguments)."""
    return powertools_line(message, function, level, **extra)


def row(text: str, minute: int = 0, count: int = 1, group: str = SCALE_UP, last: int | None = None) -> LogRow:
    end = minute if last is None else last
    return LogRow(group, count, T + timedelta(minutes=minute), T + timedelta(minutes=end), text)


def test_maximum_reached_v7_carries_the_count_read_before_it() -> None:
    causes = classify(
        [
            row(line("INFO", "Current runners", currentRunners=50, maximumRunners=50), 1, count=3, last=9),
            row(
                line(
                    "INFO",
                    "Not all runners will be created for this group, maximum number of runners reached.",
                    desiredNewRunners=2,
                ),
                1,
                count=3,
                last=9,
            ),
        ]
    )
    assert len(causes) == 1
    cause = causes[0]
    assert cause.kind is LogCauseKind.MAX_REACHED
    assert (cause.current_runners, cause.maximum_runners, cause.count) == (50, 50, 3)
    assert (cause.first_at, cause.last_at) == (T + timedelta(minutes=1), T + timedelta(minutes=9))
    assert cause.headline == "maximum reached (50 of 50 runners)"
    assert "maximum number of runners reached" in cause.line and "desiredNewRunners" in cause.line


def test_maximum_reached_v6_reads_the_count_from_its_text_and_the_job_from_its_keys() -> None:
    causes = classify(
        [
            row(line("INFO", "Current runners: 10 of 12"), 1),
            row(line("INFO", "Current runners: 12 of 12"), 4),
            row(
                line(
                    "INFO",
                    "No runner will be created, maximum number of runners reached.",
                    github={"event": "workflow_job", "workflow_job_id": "4242"},
                ),
                4,
                count=2,
            ),
        ]
    )
    assert [c.headline for c in causes] == ["maximum reached (12 of 12 runners)"]


def test_a_thrown_create_fleet_names_the_ec2_code_and_whether_v7_11_retries_it() -> None:
    error = {"name": "UnauthorizedOperation", "message": "You are not authorized", "stack": "at ..." * 50}
    causes = classify(
        [
            row(line("WARN", "Create fleet request failed.", error=error, retryable=False), 2, count=4, last=6),
            row(line("WARN", "Create fleet request failed.", error={"name": "RequestLimitExceeded"}, retryable=True)),
        ]
    )
    assert [(c.error_code, c.retried, c.count) for c in causes] == [
        ("UnauthorizedOperation", False, 4),
        ("RequestLimitExceeded", True, 1),
    ]
    assert causes[0].headline == "launch failed: UnauthorizedOperation, not retried: the request is deleted"
    assert "stack" not in causes[0].line  # the quote keeps what says why, never the stack


def test_a_short_fleet_v7_11_splits_its_codes_by_retry() -> None:
    text = line(
        "WARN",
        "Create fleet did not create every requested instance.",
        fleetErrorsTriggeringRetry=[{"ErrorCode": "InsufficientInstanceCapacity"}],
        fleetErrorsNotTriggeringRetry=[{"ErrorCode": "VcpuLimitExceeded"}],
    )
    causes = classify([row(text)])
    assert {(c.error_code, c.retried) for c in causes} == {
        ("InsufficientInstanceCapacity", True),
        ("VcpuLimitExceeded", False),
    }


def test_a_short_fleet_v6_says_retried_or_not_in_its_message() -> None:
    not_retried = line(
        "WARN",
        "Create fleet failed, error not recognized as scaling error.",
        data=[{"ErrorCode": "VcpuLimitExceeded", "ErrorMessage": "vCPU limit"}],
    )
    retried = line("WARN", "Create fleet failed, ScaleError will be thrown to trigger retry for ephemeral runners.")
    causes = classify([row(not_retried), row(retried)])
    assert {(c.error_code, c.retried) for c in causes} == {("VcpuLimitExceeded", False), (None, True)}


def test_rate_limit_jit_and_dropped_retry_in_both_wordings() -> None:
    dropped = line(
        "WARN",
        "Error processing job retry: Server Error",
        function="ghr-linux-x64-job-retry",
        error={"name": "HttpError", "message": "Server Error"},
        github={"event": "workflow_job", "workflow_job_id": "777"},
    )
    flattened = json.dumps({"level": "WARN", "message": "Error processing job retry: x", "github.workflow_job_id": 778})
    causes = classify(
        [
            row(line("WARN", "GitHub rate limit: Request quota exhausted for request GET /app, retrying after 60s")),
            row(line("WARN", "GitHub rate limit: SecondaryRateLimit detected for request POST /x")),
            row(line("ERROR", "Failed to create JIT config for some instances", failedInstances=["i-1"])),
            row(dropped, group=JOB_RETRY),
            row(flattened, group=JOB_RETRY, minute=3),
        ]
    )
    by_kind = {c.kind: c for c in causes}
    assert by_kind[LogCauseKind.RATE_LIMITED].count == 2
    assert by_kind[LogCauseKind.JIT_FAILED].count == 1
    assert by_kind[LogCauseKind.RETRY_DROPPED].job_ids == [777, 778]
    assert by_kind[LogCauseKind.RETRY_DROPPED].log_group == JOB_RETRY
    assert [c.kind for c in causes] == [
        LogCauseKind.RATE_LIMITED,
        LogCauseKind.JIT_FAILED,
        LogCauseKind.RETRY_DROPPED,
    ]


def test_lines_that_say_nothing_of_why_are_not_causes() -> None:
    lines = [
        line("INFO", "Current runners", currentRunners=3, maximumRunners=50),
        line("INFO", "Job is still queued, message published to build queue and will be handled by scale-up."),
        "START RequestId: 5f0c Version: $LATEST",
    ]
    assert classify([row(text) for text in lines]) == []


@pytest.mark.parametrize(
    ("queue", "prefix", "base"),
    [
        ("ghr-linux-x64-queued-builds", None, "ghr-linux-x64"),  # multi-runner: <prefix>-<key>
        ("ghr-queued-builds.fifo", "ghr", "ghr"),  # single-runner: <prefix>
        ("my-own-queue", "ghr", "ghr-linux-x64"),  # a queue upstream did not name: from the prefix
        ("my-own-queue", None, None),
    ],
)
def test_log_groups_are_named_as_upstream_names_its_functions(queue: str, prefix: str | None, base: str) -> None:
    assert function_base(queue, prefix, "linux-x64") == base
    if base:
        assert log_groups(base) == [f"/aws/lambda/{base}-scale-up", f"/aws/lambda/{base}-job-retry"]


def test_the_console_link_opens_both_log_groups_over_the_window() -> None:
    url = insights_url("eu-west-1", [SCALE_UP, JOB_RETRY], T, T + timedelta(minutes=15))
    assert url.startswith("https://eu-west-1.console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logsV2:")
    assert "*2faws*2flambda*2fghr-linux-x64-scale-up" in url and "job-retry" in url
    assert "2026-11-28T04*3a15*3a00.000Z" in url and " " not in url


def test_the_query_groups_what_tells_lines_apart() -> None:
    assert "by @log, message, error.name" in INSIGHTS_QUERY and "github.workflow_job_id" in INSIGHTS_QUERY
    assert "InsufficientCapacityOnHost" in DEFAULT_SCALE_ERRORS


def _waiting(log: AutoscalerLog | None) -> RunnerTypeSnapshot:
    """Two jobs GitHub holds past a runner's boot, no request on any of the autoscaler's paths: a drop, seen."""
    base = runner_type("linux-x64", 2, 600)
    signals = {**base.signals, SignalName.JOBS_QUEUED: Reading.of(2), SignalName.SCALE_UP_REQUESTS: Reading.of(0)}
    return base.model_copy(update={"signals": signals, "autoscaler_log": log, "jobs_past_boot": 2})


def _stalled(log: AutoscalerLog | None) -> RunnerTypeSnapshot:
    """The queue grows while its consumer dequeues nothing: why is only inferred."""
    stalled = with_signals(
        runner_type("linux-x64", 14, 114 * 60),
        queue_size=level(14, first=3, last=14),
        jobs_dequeued=count(0, 21),
    )
    return stalled.model_copy(update={"autoscaler_log": log})


def test_a_guess_is_marked_and_says_whether_the_log_was_read() -> None:
    [unread_log] = triage(_stalled(None), window=900, baseline=10800).findings
    assert unread_log.cause == "scale_up_failing" and unread_log.guess
    assert unread_log.detail.endswith("(a guess)")
    quiet = AutoscalerLog(log_groups=[SCALE_UP], since=T, until=T + timedelta(minutes=15))
    [read] = triage(_stalled(quiet), window=900, baseline=10800).findings
    assert read.detail.endswith("(a guess: no line of the autoscaler's log says more)")


def test_a_drop_is_seen_never_a_guess_and_stays_beside_the_logs_cause() -> None:
    [dropped] = triage(_waiting(None), window=900, baseline=10800).findings
    assert dropped.cause == "no_scale_up_request" and not dropped.guess and "guess" not in dropped.detail


def test_where_the_log_says_why_it_leads_and_the_guess_goes() -> None:
    [cause] = classify(
        [
            row(line("INFO", "Current runners", currentRunners=8, maximumRunners=8)),
            row(line("INFO", "Not all runners will be created for this group, maximum number of runners reached.")),
        ]
    )
    said = AutoscalerLog(log_groups=[SCALE_UP], since=T, until=T, causes=[cause], query_url="https://console/x")
    findings = triage(_waiting(said), window=900, baseline=10800).findings
    # the log's cause leads; the drop it explains stays, naming what was dropped
    assert [f.cause for f in findings] == ["log_max_reached", "no_scale_up_request"]
    assert [f.cause for f in triage(_stalled(said), window=900, baseline=10800).findings] == ["log_max_reached"]
    assert findings[0].detail.startswith("maximum reached (8 of 8 runners) (1x, 04:00 UTC, /aws/lambda/")
    assert findings[0].next_step.endswith("the lines in Logs Insights: https://console/x")
