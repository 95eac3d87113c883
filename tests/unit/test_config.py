"""The config file: what loads, and a clear message for each kind of mistake, naming file, line, key and expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from queuewatch.config import DiscoverySpec, MetricQuery
from queuewatch.config.load import ConfigError, load_config, parse_config
from queuewatch.config.schema import QueueRef
from queuewatch.model.rules import Rule
from queuewatch.model.signals import SignalName
from queuewatch_cli.main import main

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (REPO_ROOT / "config" / "examples").glob("*") if p.suffix in {".yaml", ".yml"})
SHIPPED = [REPO_ROOT / "config" / "queuewatch.yaml", *EXAMPLES]

# Block style, one key a line, so that every line number below points at one key.
VALID = """\
# queuewatch test config
version: 1
defaults:
  rule:
    team: ci-infra
    keep_firing_for: 5m
runner_types:
  - name: linux.2xlarge
    queue:
      name: gh-ci-linux-2xlarge-queued-builds
      region: us-east-1
    signals:
      queue_time: sqs
rules:
  - name: jobs-queueing
    breach_when: all
    thresholds:
      queue_time: 1m
      queue_size: 0
"""
SECOND_RUNNER_TYPE = """\
  - name: linux.4xlarge
    queue:
      name: gh-ci-linux-4xlarge-queued-builds
rules:"""


def edit(old: str, new: str, text: str = VALID) -> str:
    assert old in text, f"the edit {old!r} does not apply"
    return text.replace(old, new, 1)


def problems(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="qw.yaml")
    message = str(caught.value)
    assert message.startswith("qw.yaml: "), "the message must open with the file's name"
    assert "the config was not applied" in message
    return message


def test_the_test_config_itself_loads() -> None:
    [rule] = parse_config(VALID, source="qw.yaml").resolved_rules
    assert (rule.queue_time_threshold, rule.queue_size_threshold) == (60, 0)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_every_shipped_config_loads(path: Path) -> None:
    config = load_config(path)
    assert config.resolved_rules
    assert config.runner_types or config.discovery


# Each line: a mistake, and the one line of the message that must name file:line, key path and expectation.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (edit("    breach_when: all", "    breach_when: all\n   oops: 1"), "qw.yaml:17: (top level): YAML syntax error"),
        (edit("    breach_when: all", "    breach_wen: all"), "qw.yaml:16: rules[0].breach_wen: unknown key 'breach_wen'; did you mean 'breach_when'?"),
        (edit("      queue_time: 1m", "      queue_tme: 1m"), "qw.yaml:18: rules[0].thresholds.queue_tme: unknown key 'queue_tme'; did you mean 'queue_time'?"),
        (edit("      queue_time: sqs", "      busy_runner: sqs"), "qw.yaml:13: runner_types[0].signals.busy_runner: unknown signal 'busy_runner'; did you mean 'busy_runners'? expected one of"),
        (edit("queue_size: 0", 'queue_size: "many"'), "qw.yaml:19: rules[0].thresholds.queue_size: found 'many', expected a whole number"),
        (edit("queue_time: 1m", "queue_time: 5 minutes"), "qw.yaml:18: rules[0].thresholds.queue_time: found '5 minutes', expected a duration such as 90s, 5m or 1h30m"),
        (edit("queue_size: 0", "queue_size: -1"), "qw.yaml:19: rules[0].thresholds.queue_size: found -1, expected at least 0"),
        (edit("    breach_when: all", "    breach_when: both"), "qw.yaml:16: rules[0].breach_when: found 'both', expected one of 'all', 'any'"),
        (edit("    keep_firing_for: 5m", "    keep_firing_for: 5m\n    keep_firing_for: 1m"), "qw.yaml:7: defaults.rule.keep_firing_for: duplicate key; each key may appear once"),
        (edit("name: gh-ci-linux-2xlarge-queued-builds", "name: gh-ci/linux-2xlarge"), "qw.yaml:10: runner_types[0].queue.name: found 'gh-ci/linux-2xlarge', expected an SQS queue name"),
        (edit("name: gh-ci-linux-2xlarge-queued-builds", "url: https://sqs.us-east-1.amazonaws.com/1234/q"), "qw.yaml:10: runner_types[0].queue.url: found 'https://sqs.us-east-1.amazonaws.com/1234/q', expected a queue URL such as"),
        (edit("region: us-east-1", "region: europe"), "qw.yaml:11: runner_types[0].queue.region: found 'europe', expected an AWS region such as us-east-1"),
        (edit("  rule:", "  region: US-EAST-1\n  rule:"), "qw.yaml:4: defaults.region: found 'US-EAST-1'; did you mean 'us-east-1'? expected an AWS region such as us-east-1"),
        (edit("version: 1", "version: 2"), "qw.yaml:2: version: found 2, expected version 1"),
        (edit("version: 1\n", "") + "version: one\n", "qw.yaml:19: version: found 'one', expected a whole number"),
        (edit("version: 1\n", ""), "version: required key is missing"),
        (edit("      queue_time: sqs", "      busy_runners: sqs"), "qw.yaml:12: runner_types[0].signals: found {'busy_runners': 'sqs'}: signal 'busy_runners' cannot come from 'sqs'; expected a metric query"),
        (edit("rules:", "discovery:\n  - queue_name_pattern: gh-ci-queued-builds\nrules:"), "qw.yaml:15: discovery[0].queue_name_pattern: found 'gh-ci-queued-builds', expected a queue name pattern with one '{runner_type}'"),
        (edit("    queue:\n", "    queue:\n      url: https://sqs.us-east-1.amazonaws.com/123456789012/q\n"), "qw.yaml:9: runner_types[0].queue: found "),
        (edit("    breach_when: all", "    priority: P5"), "qw.yaml:16: rules[0].priority: found 'P5'"),
        (edit("    breach_when: all", "    repeat_interval: 30s"), "qw.yaml:16: rules[0].repeat_interval: found 30s, expected at least 1m"),
        (edit("rules:", "discovery:\n  - queue_name_pattern: gh-ci-{runner_type}\n    account_id: '12345'\nrules:"), "qw.yaml:16: discovery[0].account_id: found '12345', expected a 12-digit AWS account id"),
        (edit("rules:", "discovery:\n  - queue_name_pattern: gh-ci-{runner_type}\n    account_id: '444455556666'\nrules:"), "qw.yaml:16: discovery[0].account_id: found '444455556666': discovery lists queues with ListQueues, which lists only the stack's own account"),
    ],
    ids=[
        "yaml-syntax", "unknown-key", "unknown-threshold-key", "unknown-signal", "wrong-type", "unparseable-threshold",
        "negative-threshold", "bad-breach-when", "duplicate-yaml-key", "malformed-queue-name", "malformed-queue-url",
        "bad-region", "bad-default-region", "wrong-version", "non-integer-version", "missing-version",
        "signal-not-from-sqs", "discovery-without-placeholder", "queue-name-and-url", "bad-priority",
        "short-repeat-interval", "bad-discovery-account", "discovery-in-another-account",
    ],
)  # fmt: skip
def test_each_mistake_is_named_with_file_line_key_and_expectation(text: str, expected: str) -> None:
    assert expected in problems(text)


# Type mistakes people make, each answered in YAML with the fix, not in pydantic's Python: one translation of
# pydantic's error kinds (config/messages.py) serves every key.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (edit("    queue:\n      name: gh-ci-linux-2xlarge-queued-builds\n      region: us-east-1\n", "    queue: gh-ci-linux-2xlarge-queued-builds\n"), "qw.yaml:9: runner_types[0].queue: found 'gh-ci-linux-2xlarge-queued-builds', a single value where a mapping goes; write queue: {name: gh-ci-linux-2xlarge-queued-builds}"),
        (edit("    queue:\n      name: gh-ci-linux-2xlarge-queued-builds\n      region: us-east-1\n", "    queue: https://sqs.us-east-1.amazonaws.com/123456789012/q\n"), "qw.yaml:9: runner_types[0].queue: found 'https://sqs.us-east-1.amazonaws.com/123456789012/q', a single value where a mapping goes; write queue: {url: https://sqs.us-east-1.amazonaws.com/123456789012/q}"),
        (edit("    breach_when: all", "    match: 'linux.*'"), "qw.yaml:16: rules[0].match: found 'linux.*', a single value where a list goes; write match: ['linux.*']"),
        (edit("    breach_when: all", "    priority: p2"), "qw.yaml:16: rules[0].priority: found 'p2'; did you mean 'P2'? expected one of 'P0', 'P1', 'P2', 'P3'"),
        (edit("    breach_when: all", "    breach_when: Any"), "qw.yaml:16: rules[0].breach_when: found 'Any'; did you mean 'any'?"),
        (edit("    team: ci-infra", "    team: [ci-infra]"), "qw.yaml:5: defaults.rule.team: found a list (1 item), expected text: one value, not a list or a mapping"),
        (edit("    thresholds:\n      queue_time: 1m\n      queue_size: 0\n", "    thresholds: 1m\n"), "qw.yaml:17: rules[0].thresholds: found '1m', a single value where a mapping goes; write thresholds: {queue_time: 1m}"),
        (edit("    breach_when: all", "    match: []"), "qw.yaml:16: rules[0].match: found an empty list, expected at least 1 item"),
        (edit("      queue_time: 1m", "      queue_time: 90"), "qw.yaml:18: rules[0].thresholds.queue_time: 90: add a unit, such as 90s or 90m"),
        (edit("    breach_when: all", '    for: "90"'), "qw.yaml:16: rules[0].for: 90: add a unit, such as 90s or 90m"),
        (edit("    keep_firing_for: 5m", "    keep_firing_for: 300"), "qw.yaml:6: defaults.rule.keep_firing_for: 300: add a unit, such as 300s or 300m"),
        (edit("    signals:", "    labels: self-hosted,linux,x64\n    signals:"), "qw.yaml:12: runner_types[0].labels: found 'self-hosted,linux,x64', a single value where a list goes; write labels: [self-hosted, linux, x64]"),
        (edit("      region: us-east-1", "      region: us-east-1\n      account_id: 444455556666"), "qw.yaml:12: runner_types[0].queue.account_id: found 444455556666, a number; write account_id: \"444455556666\" (quoted)"),
        (edit("    signals:", "    labels: [self-hosted]\n    label_sets:\n      - {labels: [self-hosted, linux]}\n    signals:"), "qw.yaml:8: runner_types[0]: labels and label_sets both given: write one set as labels"),
        (edit("region: us-east-1", "region: us-west2"), "qw.yaml:11: runner_types[0].queue.region: found 'us-west2'; did you mean 'us-west-2'? expected an AWS region such as us-east-1"),
        (edit("rules:", "discovery:\n  - {queue_name_pattern: 'gh-{runner_type}-queued-builds'}\n  - {queue_name_pattern: 'gh-{runner_type}-queued-builds'}\nrules:"), "qw.yaml:16: discovery[1]: discovery[1] is identical to discovery[0]; did you mean another region? (both list us-east-1: add region: to one of them)"),
    ],
    ids=["queue-as-a-name", "queue-as-a-url", "match-as-a-string", "priority-lower-case", "breach-when-capital",
         "team-as-a-list", "thresholds-as-a-duration", "match-empty", "queue-time-without-unit", "for-without-unit",
         "keep-firing-without-unit", "labels-as-one-string", "account-id-unquoted", "labels-and-label-sets",
         "region-typo", "discovery-copied-without-region"],
)  # fmt: skip
def test_a_type_mistake_is_answered_in_yaml_with_the_fix(text: str, expected: str) -> None:
    message = problems(text)
    assert expected in message
    assert "Input should" not in message and "instance of" not in message
    assert "found {" not in message  # never the whole entry's mapping dumped


def test_problems_come_in_the_order_of_the_files_lines_whichever_check_found_them() -> None:
    # The second runner type's duplicate name (line 14) is found by a check across entries, after the field
    # error on line 19.
    duplicate = SECOND_RUNNER_TYPE.replace("linux.4xlarge", "linux.2xlarge")
    text = edit("rules:", duplicate, text=edit("    breach_when: all", "    breach_when: both"))
    lines = problems(text).splitlines()[1:]
    numbers = [int(line.split(":")[1]) for line in lines]
    assert len(numbers) == 2 and numbers == sorted(numbers), lines


def test_check_config_does_not_say_the_config_was_not_applied_and_the_loader_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(edit("    breach_when: all", "    breach_when: both"))
    assert main(["check-config", str(bad)]) == 1
    said = capsys.readouterr().err
    assert f"{bad}: 1 problem\n  {bad}:16: rules[0].breach_when" in said and "not applied" not in said
    with pytest.raises(ConfigError) as caught:
        load_config(bad)
    assert "the config was not applied" in str(caught.value)


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n"], ids=["empty", "newline", "comment"])
def test_an_empty_file_is_named_as_empty(text: str) -> None:
    assert "qw.yaml: (top level): the file is empty; expected a mapping with 'version' and 'rules'" in problems(text)


@pytest.mark.parametrize("text", ["- a\n- list\n", "just words\n", "42\n"], ids=["list", "string", "number"])
def test_a_document_that_is_not_a_mapping_is_rejected(text: str) -> None:
    assert "expected a mapping at the top" in problems(text)


def test_an_empty_document_says_so() -> None:
    assert "the file is empty" in problems("---\n")


# Problems found by looking at the config as a whole: the message names the key path and what was expected.
CROSS_CHECKS = [
    (
        edit("rules:", "  - name: linux.2xlarge\n    queue:\n      name: other\nrules:"),
        14,
        "runner_types[1].name: 'linux.2xlarge' is already runner_types[0]",
    ),
    (
        edit("name: jobs-queueing", "name: queuewatch-health"),
        15,
        "rules[0].name: 'queuewatch-health' is reserved for queuewatch's own health page",
    ),
    (
        edit("    thresholds:\n      queue_time: 1m\n      queue_size: 0\n", ""),
        15,
        "rules[0].thresholds: expected queue_time, queue_size or both (here or in defaults.rule)",
    ),
    (
        VALID + "  - name: jobs-queueing\n    thresholds:\n      queue_size: 3\n",
        20,
        "rules[1].name: 'jobs-queueing' is already rules[0]",
    ),
]
CROSS_IDS = ["duplicate-runner-type", "reserved-rule-name", "no-thresholds", "duplicate-rule"]


@pytest.mark.parametrize(("text", "line", "expected"), CROSS_CHECKS, ids=CROSS_IDS)
def test_whole_config_checks_name_the_key_and_the_expectation(text: str, line: int, expected: str) -> None:
    assert expected in problems(text)


@pytest.mark.parametrize(("text", "line", "expected"), CROSS_CHECKS, ids=CROSS_IDS)
def test_whole_config_checks_give_the_line_of_the_offending_key(text: str, line: int, expected: str) -> None:
    message = problems(text)
    assert f"qw.yaml:{line}: {expected}" in message
    assert "gh-ci-linux-2xlarge-queued-builds" not in message, "the message should not dump the whole config"


def test_a_config_with_two_problems_reports_both_with_their_lines() -> None:
    text = edit("queue_time: 1m", "queue_time: soon", edit("version: 1", "version: 1\nbogus: 1"))
    message = problems(text)
    assert "2 problems; the config was not applied" in message
    assert "qw.yaml:3: bogus: unknown key 'bogus'" in message
    assert "qw.yaml:19: rules[0].thresholds.queue_time: found 'soon', expected a duration" in message


def test_two_problems_in_different_sections_are_both_reported() -> None:
    text = edit("region: us-east-1", "region: europe", edit("version: 1", "version: 3"))
    message = problems(text)
    assert "2 problems" in message
    assert "version: found 3, expected version 1" in message
    assert "runner_types[0].queue.region: found 'europe'" in message


def test_a_whole_config_problem_is_reported_alongside_a_field_problem() -> None:
    text = edit(
        "rules:",
        "  - name: linux.2xlarge\n    queue:\n      name: other\nrules:",
        edit("queue_time: 1m", "queue_time: soon"),
    )
    message = problems(text)
    assert "queue_time: found 'soon'" in message
    assert "runner_types[1].name: 'linux.2xlarge' is already runner_types[0]" in message


def test_an_unreadable_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: .*cannot read the file"):
        load_config(tmp_path / "nope.yaml")


def test_load_config_names_the_file_it_read(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(edit("version: 1", "version: 2"), encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{path.name}:2: version: found 2, expected version 1"):
        load_config(path)


def test_defaults_rule_values_are_inherited_and_a_rules_own_values_win() -> None:
    text = """\
version: 1
defaults:
  rule:
    team: ci-infra
    priority: P1
    keep_firing_for: 10m
    repeat_interval: 2h
    runbook_url: https://runbooks.example.com/queueing
    thresholds: {queue_time: 5m, queue_size: 2}
runner_types:
  - {name: linux.2xlarge, queue: {name: q}}
rules:
  - name: inherits
  - name: overrides
    team: gpu-infra
    priority: P3
    keep_firing_for: 1m
    breach_when: any
    for: 2m
    thresholds: {queue_time: 30m}
"""
    inherits, overrides = parse_config(text, source="qw.yaml").resolved_rules
    assert (inherits.team, inherits.priority, inherits.keep_firing_for, inherits.repeat_interval) == (
        "ci-infra",
        "P1",
        600,
        7200,
    )
    assert (inherits.queue_time_threshold, inherits.queue_size_threshold) == (300, 2)
    assert inherits.runbook_url == "https://runbooks.example.com/queueing"
    # Left unset everywhere: the built-in defaults.
    assert (inherits.breach_when, inherits.pending_for, inherits.group_by) == ("all", 0, "all")

    assert (overrides.team, overrides.priority, overrides.keep_firing_for) == ("gpu-infra", "P3", 60)
    assert (overrides.breach_when, overrides.pending_for) == ("any", 120)
    assert overrides.repeat_interval == 7200  # not overridden: still inherited
    assert overrides.runbook_url == "https://runbooks.example.com/queueing"
    assert overrides.queue_time_threshold == 1800


def rule(match: tuple[str, ...] = ("*",), exclude: tuple[str, ...] = ()) -> Rule:
    return Rule(
        name="r",
        match=match,
        exclude=exclude,
        queue_time_threshold=60,
        queue_size_threshold=0,
        breach_when="all",
        pending_for=0,
        keep_firing_for=300,
        repeat_interval=14400,
        priority="P2",  # type: ignore[arg-type]
        team="ci-infra",
        runbook_url=None,
        dashboard_url=None,
        group_by="all",
    )


@pytest.mark.parametrize(
    ("match", "exclude", "runner_type", "applies"),
    [
        (("*",), (), "linux.2xlarge", True),
        (("linux.*",), (), "linux.2xlarge", True),
        (("linux.*",), (), "windows.4xlarge", False),
        (("linux.*",), ("*.gpu",), "linux.g5.4xlarge.nvidia.gpu", False),
        (("linux.*",), ("*.gpu",), "linux.g5.4xlarge", True),
        (("linux.2xlarge", "windows.*"), (), "windows.4xlarge", True),
        (("linux.*",), (), "Linux.2xlarge", False),  # case matters
        (("*",), ("*",), "linux.2xlarge", False),  # exclude wins over match
    ],
)
def test_rule_applies_by_match_globs_minus_exclude(
    match: tuple[str, ...], exclude: tuple[str, ...], runner_type: str, applies: bool
) -> None:
    assert rule(match, exclude).applies_to(runner_type) is applies


def test_rules_for_selects_by_match_and_exclude_from_the_file() -> None:
    text = edit(
        "rules:",
        "  - name: linux.g5.4xlarge.nvidia.gpu\n    queue: {name: gh-ci-gpu}\nrules:\n  - name: gpu\n    match: ['*.gpu']\n    thresholds: {queue_size: 0}",
        edit("    breach_when: all", "    exclude: ['*.gpu']\n    breach_when: all"),
    )
    config = parse_config(text, source="qw.yaml")
    assert [r.name for r in config.rules_for("linux.g5.4xlarge.nvidia.gpu")] == ["gpu"]
    assert [r.name for r in config.rules_for("linux.2xlarge")] == ["jobs-queueing"]


def test_queue_size_and_time_come_from_sqs_unless_configured() -> None:
    config = parse_config(VALID, source="qw.yaml")
    signals = config.signals_for({})
    assert signals == {SignalName.QUEUE_SIZE: "sqs", SignalName.QUEUE_TIME: "sqs"}


def test_own_signals_override_defaults_and_fill_in_the_runner_type() -> None:
    text = edit(
        "  rule:",
        "  signals:\n"
        "    busy_runners: {namespace: GitHub Runners, metric: BusyRunners, dimensions: {RunnerType: '{runner_type}'}}\n"
        "    queue_time: {namespace: GitHub Runners, metric: QueueTime, unit: minutes}\n"
        "  rule:",
    )
    config = parse_config(text, source="qw.yaml")
    signals = config.signals_for(config.runner_types[0].signals)
    assert signals[SignalName.QUEUE_SIZE] == "sqs"
    assert signals[SignalName.QUEUE_TIME] == "sqs"  # the runner type's own wins over defaults
    busy = signals[SignalName.BUSY_RUNNERS]
    assert isinstance(busy, MetricQuery)
    filled = busy.for_runner_type("linux.2xlarge")
    assert filled.dimensions == {"RunnerType": "linux.2xlarge"}
    assert busy.dimensions == {"RunnerType": "{runner_type}"}, "filling in must not change the shared query"
    assert config.signals_for({})[SignalName.QUEUE_TIME] != "sqs"  # defaults win over the built-in sqs


def test_for_runner_type_fills_every_placeholder_in_every_dimension() -> None:
    query = MetricQuery(
        namespace="N",
        metric="M",
        dimensions={"RunnerType": "{runner_type}", "Pool": "pool-{runner_type}", "Env": "prod"},
    )
    assert query.for_runner_type("linux.4xlarge").dimensions == {
        "RunnerType": "linux.4xlarge",
        "Pool": "pool-linux.4xlarge",
        "Env": "prod",
    }


@pytest.mark.parametrize(("unit", "seconds"), [("count", 1), ("seconds", 1), ("minutes", 60), ("hours", 3600)])
def test_metric_units_convert_to_seconds(unit: str, seconds: int) -> None:
    assert MetricQuery(namespace="N", metric="M", unit=unit).seconds_per_unit == seconds


@pytest.mark.parametrize(
    ("queue", "region"),
    [
        (QueueRef(url="https://sqs.eu-west-1.amazonaws.com/123456789012/gh-ci-x"), "eu-west-1"),
        (QueueRef(url="https://sqs.eu-west-1.amazonaws.com/123456789012/gh-ci-x", region="us-west-2"), "us-west-2"),
        (QueueRef(name="gh-ci-x", region="ap-south-1"), "ap-south-1"),
        (QueueRef(name="gh-ci-x"), "us-east-1"),
        (QueueRef(url="http://localhost:4566/000000000000/gh-ci-x"), "us-east-1"),
    ],
    ids=["from-url-host", "explicit-wins", "by-name", "default", "non-aws-host"],
)
def test_queue_region_comes_from_the_config_or_the_url_host(queue: QueueRef, region: str) -> None:
    assert queue.region_or("us-east-1") == region
    assert queue.queue_name == "gh-ci-x"


def test_a_standard_queue_name_of_80_characters_is_accepted() -> None:
    assert QueueRef(name="q" * 80).queue_name == "q" * 80


def test_a_queue_name_over_80_characters_is_rejected() -> None:
    with pytest.raises(ValueError, match="expected an SQS queue name"):
        QueueRef(name="q" * 81)


@pytest.mark.parametrize(
    ("queue_name", "runner_type"),
    [
        ("gh-ci-linux.2xlarge-queued-builds", "linux.2xlarge"),
        ("gh-ci-linux-g5-4xlarge-nvidia-gpu-queued-builds", "linux-g5-4xlarge-nvidia-gpu"),
        ("gh-ci-linux.2xlarge-queued-builds-dlq", None),
        ("gh-ci-linux.2xlarge-queued-builds_dead_letter", None),
        ("other-linux.2xlarge-queued-builds", None),
        ("gh-ci--queued-builds", None),
    ],
)
def test_discovery_names_the_runner_type_from_the_queue_name(queue_name: str, runner_type: str | None) -> None:
    discovery = DiscoverySpec(queue_name_pattern="{prefix}-{runner_type}-queued-builds", prefix="gh-ci")
    assert discovery.runner_type_of(queue_name) == runner_type
    assert discovery.name_prefix == "gh-ci-"


@pytest.mark.parametrize("name", ["collector", "discovery:us-east-1"])
def test_a_runner_type_cannot_take_a_health_instance_name(name: str) -> None:
    """`queuewatch-health#<runner type>` and the health instances share one key space: no name may be both."""
    message = problems(edit("  - name: linux.2xlarge\n", f"  - name: '{name}'\n"))
    assert "qw.yaml:8: runner_types[0].name" in message
    assert repr(name) in message


def test_a_runner_type_named_collector_says_why_and_what_to_do() -> None:
    message = problems(edit("  - name: linux.2xlarge\n", "  - name: collector\n"))
    assert "reserves for its own health page (queuewatch-health#collector)" in message
    assert "expected another name" in message


def test_discovery_never_names_a_runner_type_after_a_health_instance() -> None:
    discovery = DiscoverySpec(queue_name_pattern="{prefix}-{runner_type}-queued-builds", prefix="gh-ci")
    assert discovery.runner_type_of("gh-ci-collector-queued-builds") is None
    assert discovery.runner_type_of("gh-ci-collectors-queued-builds") == "collectors"
    # That queue is still watched once named under runner_types:, whose entry owns it.
    config = parse_config(
        edit(
            "      name: gh-ci-linux-2xlarge-queued-builds\n",
            "      name: gh-ci-collector-queued-builds\n",
            edit("  - name: linux.2xlarge\n", "  - name: collector-fleet\n"),
        ),
        source="qw.yaml",
    )
    assert [spec.name for spec in config.runner_types] == ["collector-fleet"]
