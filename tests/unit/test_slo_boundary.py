"""The SLO's boundary: `queue_time_under: 2m` means under 2m. A start at exactly 2m00s is late, as a job still
waiting at 2m00s is; a start a microsecond sooner is good. check-config's --explain and the `slo` report say so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from queuewatch.alerting.slo_summary import lines, summarize
from queuewatch.config.load import parse_config
from queuewatch.model.slo import Tally, outcome_of, waiting_outcome
from queuewatch_cli.commands.check_config.explain import explain

QUEUED = datetime(2026, 11, 21, 18, 0, tzinfo=UTC)
THRESHOLD = 120
AT_TWO_MINUTES = QUEUED + timedelta(seconds=THRESHOLD)
JUST_BEFORE = AT_TWO_MINUTES - timedelta(microseconds=1)
CONFIG = """
version: 1
defaults: {rule: {team: ci-infra}}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 30m}}
slos:
  - {name: linux-fast, objective: 99%, queue_time_under: 2m}
"""
SAID = "a job that starts under 2m after it was queued is good; one that starts at 2m exactly or later, or still waits"


def test_a_start_at_exactly_the_threshold_is_late_and_a_moment_sooner_is_good() -> None:
    assert outcome_of(QUEUED, AT_TWO_MINUTES, None, THRESHOLD) == ("bad", AT_TWO_MINUTES)
    assert outcome_of(QUEUED, JUST_BEFORE, None, THRESHOLD) == ("good", JUST_BEFORE)


def test_a_job_still_waiting_turns_late_at_exactly_the_threshold() -> None:
    assert waiting_outcome(QUEUED, AT_TWO_MINUTES, THRESHOLD) == ("bad", AT_TWO_MINUTES)
    assert waiting_outcome(QUEUED, JUST_BEFORE, THRESHOLD) is None


def test_a_job_cancelled_at_exactly_the_threshold_had_turned_late() -> None:
    assert outcome_of(QUEUED, None, AT_TWO_MINUTES, THRESHOLD) == ("bad", AT_TWO_MINUTES)
    assert outcome_of(QUEUED, None, JUST_BEFORE, THRESHOLD) is None


def test_check_configs_explain_and_the_slo_report_say_the_boundary() -> None:
    config = parse_config(CONFIG, source="t.yaml")
    assert f"slo linux-fast: {SAID} at 2m, is late" in explain(config)
    [slo] = config.resolved_slos
    report = lines(summarize(slo, config, Tally(), [], QUEUED))
    assert report[1] == f"  {SAID} at 2m, is late"
