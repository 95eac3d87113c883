"""The autoscaler's other queues and the per-app rate limit, as the config names them: upstream's names, the
rules that judge them, and the mistakes a config can make with them."""

from __future__ import annotations

import pytest

from queuewatch.config.load import ConfigError, parse_config
from queuewatch.model.demand_paths import DEAD_LETTER_RULE, JOB_RETRY_RULE, beside
from queuewatch.model.rules import judge
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

BASE = """
version: 1
defaults: {rule: {team: ci-infra}EXTRA}
discovery:
  - {queue_name_pattern: "{prefix}-{runner_type}-queued-builds", prefix: gh-ci}
rules:
  - {name: RULE, thresholds: {queue_size: 0}}
"""


def config_text(extra: str = "", rule: str = "jobs-queueing") -> str:
    return BASE.replace("EXTRA", extra).replace("RULE", rule)


def test_upstreams_names_beside_a_build_queue() -> None:
    plain = beside("gh-ci-linux-x64-queued-builds")
    assert (plain.job_retry, plain.dead_letter) == (
        "gh-ci-linux-x64-job-retry",
        "gh-ci-linux-x64-queued-builds_dead_letter",
    )
    fifo = beside("gh-ci-linux-arm64-queued-builds.fifo")
    assert fifo.dead_letter == "gh-ci-linux-arm64-queued-builds_dead_letter.fifo"
    assert beside("my-own-queue") == beside("gh-ci-x-queued-builds_dead_letter")  # no upstream build queue name


def test_the_path_rules_judge_their_own_queue_with_the_defaults_a_user_expects() -> None:
    rules = {rule.name: rule for rule in parse_config(config_text(), source="t.yaml").path_rules}
    retry, dead = rules[JOB_RETRY_RULE], rules[DEAD_LETTER_RULE]
    assert (retry.queue_time_threshold, retry.queue_size_threshold, retry.team) == (1800, None, "ci-infra")
    assert (dead.queue_size_threshold, dead.queue_time_threshold) == (0, None)
    assert dead.condition() == "dead-lettered requests > 0"
    assert retry.condition() == "oldest job-retry check > 30m"

    def rt(**signals: Reading) -> RunnerTypeSnapshot:
        base = {SignalName.QUEUE_SIZE: Reading.of(99), SignalName.QUEUE_TIME: Reading.of(9999)}
        return RunnerTypeSnapshot(name="x", region="us-east-1", queue_name="q", signals={**base, **signals})

    # The build queue's figures never page the path rules; a path not deployed is not judged (no "no data")
    assert judge(dead, rt()).breached is False and not judge(dead, rt()).missing
    assert judge(dead, rt(dead_lettered=Reading.of(1))).breached is True
    unread = judge(dead, rt(dead_lettered=Reading.missing("GetQueueAttributes of q failed: AccessDenied")))
    assert unread.breached is None and "AccessDenied" in unread.missing["dead_lettered"]
    assert judge(retry, rt(job_retry_checks=Reading.of(1), job_retry_age=Reading.of(1801))).breached is True
    assert judge(retry, rt(job_retry_checks=Reading.of(1), job_retry_age=Reading.of(600))).breached is False
    off = parse_config(config_text(", job_retry: {max_age: null}, dead_letter: {max_messages: null}"), source="t")
    assert off.path_rules == ()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (config_text(rule="dead-letter"), "which queuewatch reserves for the autoscaler's dead-letter queues"),
        (config_text(", signals: {dead_lettered: sqs}"), "is read from the autoscaler's job-retry or dead-letter"),
        (
            config_text(", signals: {github_app_rate_limit: {namespace: N, metric: M, apps: ['1']}}"),
            "no '{app_id}' placeholder",
        ),
        (
            config_text(
                ", signals: {github_app_rate_limit: {namespace: N, metric: M, dimensions: {AppId: '{app_id}'}}}"
            ),
            "no 'apps' list",
        ),
        (
            config_text(", signals: {busy_runners: {namespace: N, metric: M, apps: ['1']}}"),
            "only github_app_rate_limit takes",
        ),
        (
            config_text(", signals: {github_app_rate_limit: {namespace: N, metric: M, apps: [app-one]}}"),
            "expected a GitHub App id",
        ),
        (config_text(", job_retry: {max_age: 0.5h}"), "job_retry"),
    ],
)
def test_mistakes_with_the_paths_and_the_apps_are_named(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config(text, source="t.yaml")
    assert expected in str(error.value)
