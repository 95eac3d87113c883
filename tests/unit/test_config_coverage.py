"""check-config finds what cannot page on fleets shaped like real ones: errors for what can never be right,
warnings (shown, never failing) for what might be meant. Each named with its file, line and key."""

from __future__ import annotations

import pytest

from queuewatch.config.load import ConfigError, parse_checked

# PyTorch's GPU runner types beside its Linux ones, each on its own queue (the upstream module's shape).
GPUS = ["linux.g5.4xlarge.nvidia.gpu", "linux.g5.12xlarge.nvidia.gpu", "linux.g5.48xlarge.nvidia.gpu",
        "linux.g6.4xlarge.experimental.nvidia.gpu", "linux.4xlarge.nvidia.gpu"]  # fmt: skip
FLEET = "version: 1\ndefaults: {rule: {team: ci-infra}}\nrunner_types:\n" + "".join(
    f"  - {{name: {name}, queue: {{name: gh-ci-{name.replace('.', '-')}-queued-builds}}}}\n"
    for name in ["linux.2xlarge", "linux.4xlarge", *GPUS]
)
DISCOVERY = "discovery:\n  - {queue_name_pattern: 'gh-ci-{runner_type}-queued-builds'}\n"


def errors(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_checked(text, source="fleet.yaml")
    return [f"{p.line}:{p.key_path}: {p.message}" for p in caught.value.problems]


def warnings(text: str) -> list[str]:
    return parse_checked(text, source="fleet.yaml").render_warnings()


def test_a_configured_runner_type_no_rule_selects_is_an_error_naming_it() -> None:
    text = (
        "version: 1\ndefaults: {rule: {team: ci-infra}}\nrunner_types:\n"
        "  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}\n"
        "  - {name: windows.4xlarge, queue: {name: gh-ci-windows-4xlarge-queued-builds}}\n"
        "rules:\n  - {name: jobs-queueing, match: ['linux.*'], thresholds: {queue_time: 1m}}\n"
    )
    [problem] = errors(text)
    assert problem.startswith(
        "5:runner_types[1].name: runner type 'windows.4xlarge' can never page: no rule selects it"
    )
    excluded = text.replace("match: ['linux.*']", "exclude: ['windows.*']")
    assert "(excluded by jobs-queueing)" in errors(excluded)[0]


def test_a_misspelt_gpu_glob_without_discovery_is_an_error_with_the_near_miss() -> None:
    text = FLEET + (
        "rules:\n  - {name: jobs-queueing, match: ['linux.*'], thresholds: {queue_time: 1m}}\n"
        "  - {name: gpu-queueing, match: ['*-nvida-gpu'], thresholds: {queue_time: 30m}, priority: P1}\n"
    )
    [problem] = errors(text)
    assert problem.startswith("13:rules[1].match: rule 'gpu-queueing' can never apply")
    assert "did you mean '*.nvidia.gpu'? it selects 5 runner types: 'linux.g5.4xlarge.nvidia.gpu'" in problem


def test_a_dead_glob_beside_live_ones_without_discovery_is_an_error() -> None:
    text = (
        FLEET
        + "rules:\n  - {name: jobs-queueing, match: ['linux.*', 'linux.*-nvida-gpu'], thresholds: {queue_time: 1m}}\n"
    )
    [problem] = errors(text)
    assert problem.startswith("12:rules[0].match[1]: rule 'jobs-queueing': 'linux.*-nvida-gpu' selects none of")
    assert "did you mean 'linux.*.nvidia.gpu'?" in problem


def test_with_discovery_a_near_miss_is_a_warning_and_a_glob_for_discovered_names_is_nothing() -> None:
    text = (
        FLEET
        + DISCOVERY
        + (
            "rules:\n  - {name: jobs-queueing, match: ['linux.*', 'macos-*'], thresholds: {queue_time: 1m}}\n"
            "  - {name: gpu-queueing, match: ['*-nvida-gpu'], thresholds: {queue_time: 30m}, priority: P1}\n"
        )
    )
    [warning] = warnings(text)
    assert warning.startswith(
        "fleet.yaml:15: rules[1].match[0]: warning: rule 'gpu-queueing': '*-nvida-gpu' selects none"
    )
    assert "did you mean '*.nvidia.gpu'?" in warning
    fixed = text.replace("*-nvida-gpu", "*.nvidia.gpu")
    assert warnings(fixed) == []  # macos-* can only mean discovered names: not a finding


SHARED = (
    "version: 1\ndefaults: {queue_source: QS, rule: {team: ci-infra}}\nrunner_types:\n"
    "  - {name: ubuntu-2204, queue: {name: acme-ci-linux-x64-queued-builds, region: eu-west-1}}\n"
    "  - {name: ubuntu-latest, queue: {url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/acme-ci-linux-x64-queued-builds'}}\n"
    "  - {name: ubuntu-2404, queue: {name: acme-ci-linux-x64-queued-builds, region: us-east-1}}\n"
    "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 1m}}\n"
)


def test_two_runner_types_on_one_queue_page_one_backlog_twice_in_sqs_mode() -> None:
    shared = SHARED.replace("defaults: {", "defaults: {account_id: '123456789012', ")
    [problem] = errors(shared.replace("QS", "sqs"))
    assert problem.startswith(
        "5:runner_types[1].queue: runner types 'ubuntu-2204' and 'ubuntu-latest' both read queue "
        "acme-ci-linux-x64-queued-builds (eu-west-1, 123456789012): with queue_source sqs one backlog is paged twice"
    )  # the same name in us-east-1 is another queue
    [warning] = warnings(shared.replace("QS", "jobs"))
    assert warning.startswith("fleet.yaml:5: runner_types[1].queue: warning: runner types 'ubuntu-2204' and")
    assert warnings(SHARED.replace("QS", "sqs")) == []  # another account: another queue


def test_one_queue_with_per_runner_type_metrics_is_not_a_finding() -> None:
    metrics = "{namespace: gh-ci-scaleUpChron-dim, metric: M, dimensions: {RunnerType: '{runner_type}'}}"
    text = (
        SHARED.replace("QS", "sqs")
        .replace("queue_source: sqs,", f"queue_source: sqs, signals: {{queue_size: {metrics}, queue_time: {metrics}}},")
        .replace(
            "https://sqs.eu-west-1.amazonaws.com/123456789012/", "https://sqs.eu-west-1.amazonaws.com/000000000000/"
        )
    )
    assert warnings(text.replace("region: us-east-1", "region: eu-west-1")) == []


NESTED = (
    "  - {queue_name_pattern: 'acme-ci-{runner_type}-queued-builds'EXCLUDE}\n"
    "  - {queue_name_pattern: 'acme-ci-linux-{runner_type}-queued-builds', team: linuxREGION}\n"
)
CROSSING = (
    "  - {queue_name_pattern: '{prefix}-{runner_type}-queued-builds', prefix: acme, match: ['linux*']}\n"
    "  - {queue_name_pattern: 'acme-{runner_type}-queued-builds', match: ['*gpu']EXCLUDEREGION}\n"
)


@pytest.mark.parametrize(
    ("entries", "overlap", "exclude"),
    [(NESTED, "acme-ci-linux-x-queued-builds", ", exclude: ['linux-*']"),
     (CROSSING, "acme-linuxxgpu-queued-builds", ", exclude: ['linux*']")],
    ids=["nested-prefix", "crossing-globs"],
)  # fmt: skip
def test_overlapping_discovery_entries_in_one_region_are_an_error(entries: str, overlap: str, exclude: str) -> None:
    head = "version: 1\ndefaults: {rule: {team: ci-infra}}\ndiscovery:\n"
    rules = "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 1m}}\n"
    [problem] = errors(head + entries.replace("EXCLUDE", "").replace("REGION", "") + rules)
    assert problem.startswith(f"5:discovery[1]: discovery[1] and discovery[0] can both select queue {overlap!r}")
    for separated in (
        entries.replace("EXCLUDE", exclude).replace("REGION", ""),
        entries.replace("EXCLUDE", "").replace("REGION", ", region: eu-west-1"),
    ):
        parse_checked(head + separated + rules)


def test_a_runner_type_with_no_queue_is_said_to_have_nothing_cross_checking_its_jobs() -> None:
    text = (
        "version: 1\ndefaults: {rule: {team: ci-infra}}\nrunner_types:\n"
        "  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}\n"
        "  - {name: arc-lane, queue: none, labels: [arc-lane]}\n"
        "rules:\n  - {name: jobs-queueing, thresholds: {queue_time: 1m}}\n"
    )
    [warning] = warnings(text)
    assert warning.startswith("fleet.yaml:5: runner_types[1].queue: warning: runner type 'arc-lane' has queue: none")
    assert "nothing cross-checks them" in warning
    [problem] = errors(text.replace("queue: none", "queue: nothing"))
    assert problem.startswith("5:runner_types[1].queue: ")
    assert "found 'nothing', a single value where a mapping goes; write queue: {name: nothing}" in problem
