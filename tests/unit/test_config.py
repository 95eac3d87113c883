"""The config file: what loads, and a clear message for each kind of mistake, naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from queuewatch.config import ConfigError, MetricQuery, SignalName, load_config, parse_config
from queuewatch.localrun import REPO_ROOT

VALID = """\
version: 1
defaults:
  rule:
    team: ci-infra
    keep_firing_for: 5m
runner_types:
  - name: linux.2xlarge
    queue: {name: gh-ci-linux-2xlarge-queued-builds}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 1m, queue_size: 0}
"""


def problems(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="qw.yaml")
    return str(caught.value)


@pytest.mark.parametrize("path", sorted((REPO_ROOT / "config").rglob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_loads(path: Path) -> None:
    assert load_config(path).resolved_rules


def test_defaults_fill_what_a_rule_leaves_out_and_a_rules_own_values_win() -> None:
    config = parse_config(VALID.replace("thresholds:", "keep_firing_for: 1m\n    thresholds:"))
    [rule] = config.resolved_rules
    assert (rule.team, rule.keep_firing_for, rule.queue_time_threshold, rule.queue_size_threshold) == (
        "ci-infra",
        60,
        60,
        0,
    )
    assert (rule.priority.value, rule.group_by, rule.breach_when, rule.pending_for) == ("P2", "all", "all", 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (VALID.replace("version: 1\n", "version: 1\nrules: [\n"), "qw.yaml:4: (top level): YAML syntax error"),
        (VALID.replace("    thresholds", "    breach_wen: any\n    thresholds"), "qw.yaml:11: rules[0].breach_wen: unknown key 'breach_wen'; did you mean 'breach_when'?"),
        (VALID.replace("queue_time: 1m", "queue_tme: 1m"), "qw.yaml:11: rules[0].thresholds.queue_tme: unknown key 'queue_tme'; did you mean 'queue_time'?"),
        (VALID.replace("queue_size: 0}", "queue_size: many}"), "qw.yaml:11: rules[0].thresholds.queue_size: found 'many'"),
        (VALID.replace("queue_time: 1m", "queue_time: 5 minutes"), "qw.yaml:11: rules[0].thresholds.queue_time: found '5 minutes', expected a duration such as 90s, 5m or 1h30m"),
        (VALID.replace("gh-ci-linux-2xlarge-queued-builds", "gh-ci/linux"), "qw.yaml:8: runner_types[0].queue.name: found 'gh-ci/linux', expected an SQS queue name"),
        (VALID.replace("{name: gh-ci-linux-2xlarge-queued-builds}", "{url: 'https://sqs.us-east-1.amazonaws.com/12/q'}"), "runner_types[0].queue.url: found 'https://sqs.us-east-1.amazonaws.com/12/q', expected a queue URL"),
        (VALID.replace("{name: gh-ci-linux-2xlarge-queued-builds}", "{name: q, region: europe}"), "runner_types[0].queue.region: found 'europe', expected an AWS region such as us-east-1"),
        (VALID.replace("version: 1", "version: 2"), "qw.yaml:1: version: found 2, expected version 1"),
        (VALID.replace("version: 1\n", ""), "version: required key is missing"),
        (VALID.replace("name: jobs-queueing", "name: queuewatch-health"), "is reserved for queuewatch's own health page"),
        (VALID.replace("    thresholds: {queue_time: 1m, queue_size: 0}\n", ""), "rules[0].thresholds: expected queue_time, queue_size or both"),
        (VALID + "    priority: P5\n", "qw.yaml:12: rules[0].priority: found 'P5'"),
        (VALID.replace("team: ci-infra", "team: ci-infra\n    team: other"), "qw.yaml:5: defaults.rule.team: duplicate key"),
        ("", "the file is empty"),
        ("- just\n- a list\n", "expected a mapping at the top"),
    ],
    ids=[
        "yaml-syntax", "unknown-key", "unknown-threshold-key", "wrong-type", "unparseable-threshold",
        "malformed-queue-name", "malformed-queue-url", "bad-region", "wrong-version", "missing-version",
        "reserved-rule", "no-thresholds", "bad-priority", "duplicate-yaml-key", "empty", "not-a-mapping",
    ],
)  # fmt: skip
def test_each_mistake_is_named_with_file_line_and_key(text: str, expected: str) -> None:
    assert expected in problems(text)


def test_a_duplicate_runner_type_names_both_places() -> None:
    text = VALID.replace("rules:", "  - {name: linux.2xlarge, queue: {name: other}}\nrules:")
    assert "runner_types[1].name: 'linux.2xlarge' is already runner_types[0]" in problems(text)


def test_an_unknown_signal_suggests_the_right_one() -> None:
    text = VALID.replace("queued-builds}", "queued-builds}\n    signals: {busy_runner: {namespace: N, metric: M}}")
    assert (
        "qw.yaml:9: runner_types[0].signals.busy_runner: unknown signal 'busy_runner'; did you mean 'busy_runners'?"
        in problems(text)
    )


def test_a_signal_that_sqs_cannot_give_must_be_a_metric() -> None:
    text = VALID.replace("queued-builds}", "queued-builds}\n    signals: {busy_runners: sqs}")
    assert "signal 'busy_runners' cannot come from 'sqs'" in problems(text)


def test_a_discovery_pattern_needs_its_placeholder() -> None:
    text = VALID.replace("rules:", "discovery:\n  - {queue_name_pattern: gh-ci-queued-builds}\nrules:")
    assert "discovery[0].queue_name_pattern: found 'gh-ci-queued-builds'" in problems(text)


def test_every_problem_is_reported_at_once_and_nothing_is_applied() -> None:
    text = VALID.replace("queue_time: 1m", "queue_time: soon").replace("version: 1", "version: 1\nbogus: 1")
    message = problems(text)
    assert "2 problem(s); the config was not applied" in message
    assert "bogus: unknown key" in message and "queue_time: found 'soon'" in message


def test_an_unreadable_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: .*cannot read the file"):
        load_config(tmp_path / "nope.yaml")


def test_rule_match_and_exclude_globs() -> None:
    config = parse_config(
        VALID.replace(
            "  - name: jobs-queueing", "  - name: jobs-queueing\n    match: ['linux.*']\n    exclude: ['*.gpu']"
        )
    )
    [rule] = config.resolved_rules
    assert rule.applies_to("linux.2xlarge") and not rule.applies_to("linux.g5.gpu") and not rule.applies_to("windows")


def test_signals_default_to_sqs_and_metric_queries_fill_in_the_runner_type() -> None:
    config = parse_config(VALID)
    query = MetricQuery(namespace="GitHub Runners", metric="BusyRunners", dimensions={"RunnerType": "{runner_type}"})
    signals = config.signals_for({SignalName.BUSY_RUNNERS: query})
    assert signals[SignalName.QUEUE_SIZE] == "sqs" and signals[SignalName.QUEUE_TIME] == "sqs"
    filled = signals[SignalName.BUSY_RUNNERS]
    assert isinstance(filled, MetricQuery)
    assert filled.for_runner_type("linux.2xlarge").dimensions == {"RunnerType": "linux.2xlarge"}


def test_a_queue_url_gives_its_region_and_name() -> None:
    config = parse_config(
        VALID.replace(
            "{name: gh-ci-linux-2xlarge-queued-builds}",
            "{url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/gh-ci-x'}",
        )
    )
    queue = config.runner_types[0].queue
    assert (queue.region_or("us-east-1"), queue.queue_name) == ("eu-west-1", "gh-ci-x")


def test_discovery_names_runner_types_from_queue_names() -> None:
    config = parse_config(
        VALID.replace(
            "rules:",
            "discovery:\n  - {queue_name_pattern: '{prefix}-{runner_type}-queued-builds', prefix: gh-ci}\nrules:",
        )
    )
    [discovery] = config.discovery
    assert discovery.runner_type_of("gh-ci-linux.2xlarge-queued-builds") == "linux.2xlarge"
    assert discovery.runner_type_of("gh-ci-linux.2xlarge-queued-builds-dlq") is None
    assert discovery.name_prefix == "gh-ci-"
