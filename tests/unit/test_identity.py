"""A runner type key watched in several places: the identity of each copy, what a rule or a silence selects,
and discovery's reading of a FIFO queue's name."""

from __future__ import annotations

from datetime import timedelta

import pytest
from support import T0

from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config import DiscoverySpec
from queuewatch.config.load import ConfigError, parse_config
from queuewatch.model.rules import Priority, Rule
from queuewatch.model.snapshot import RunnerTypeSnapshot, qualified, runner_type_key

PATTERN = "{prefix}-{runner_type}-queued-builds"


@pytest.mark.parametrize(
    ("queue_name", "key"),
    [
        ("multi-runner-linux-x64-queued-builds", "linux-x64"),
        ("multi-runner-linux-x64-queued-builds.fifo", "linux-x64"),  # the suffix is dropped
        ("multi-runner-linux.arm64-queued-builds.fifo", "linux.arm64"),
        ("multi-runner-linux-x64-queued-builds_dead_letter", None),
        ("multi-runner-linux-x64-queued-builds_dead_letter.fifo", None),
        ("multi-runner-linux-x64-queued-builds.fifox", None),
    ],
)
def test_the_default_pattern_finds_a_fifo_queue_and_its_key_drops_the_suffix(queue_name: str, key: str | None) -> None:
    discovery = DiscoverySpec(queue_name_pattern=PATTERN, prefix="multi-runner")
    assert discovery.runner_type_of(queue_name) == key


def test_a_pattern_that_names_fifo_finds_only_fifo_queues() -> None:
    discovery = DiscoverySpec(queue_name_pattern=PATTERN + ".fifo", prefix="multi-runner")
    assert discovery.runner_type_of("multi-runner-linux-x64-queued-builds.fifo") == "linux-x64"
    assert discovery.runner_type_of("multi-runner-linux-x64-queued-builds") is None


@pytest.mark.parametrize(
    "name",
    ["linux-x64", "linux-x64@eu-west-1", "linux.2xlarge@us-gov-west-1", "gpu@eu-west-1.111122223333", "a" * 128],
)
def test_a_snapshot_takes_a_key_or_a_copys_identity(name: str) -> None:
    assert RunnerTypeSnapshot(name=name, region="eu-west-1", queue_name="q").name == name


@pytest.mark.parametrize(
    "name", ["linux-x64@", "linux-x64@nowhere", "@eu-west-1", "x@eu-west-1.1234", "x@eu-west-1@us-east-1", "a" * 129]
)
def test_a_snapshot_refuses_what_is_no_identity(name: str) -> None:
    with pytest.raises(ValueError, match="expected a runner type name"):
        RunnerTypeSnapshot(name=name, region="eu-west-1", queue_name="q")


def test_an_identity_names_its_key() -> None:
    assert qualified("linux-x64", "eu-west-1") == "linux-x64@eu-west-1"
    assert qualified("linux-x64", "eu-west-1", "111122223333") == "linux-x64@eu-west-1.111122223333"
    assert runner_type_key("linux-x64@eu-west-1.111122223333") == runner_type_key("linux-x64") == "linux-x64"


@pytest.mark.parametrize(
    ("match", "exclude", "selected"),
    [
        (("linux-x64",), (), {"linux-x64", "linux-x64@eu-west-1", "linux-x64@eu-west-1.111122223333"}),
        (("linux-*",), (), {"linux-x64", "linux-x64@eu-west-1", "linux-x64@eu-west-1.111122223333"}),
        (("linux-x64@eu-west-1",), (), {"linux-x64@eu-west-1"}),
        (("linux-x64@*",), (), {"linux-x64@eu-west-1", "linux-x64@eu-west-1.111122223333"}),
        (("linux-x64",), ("linux-x64@*",), {"linux-x64"}),
        (("*",), ("linux-x64",), {"windows-x64"}),
    ],
)
def test_a_rule_for_a_key_selects_it_everywhere_and_one_with_a_region_that_copy(
    match: tuple[str, ...], exclude: tuple[str, ...], selected: set[str]
) -> None:
    names = ["linux-x64", "linux-x64@eu-west-1", "linux-x64@eu-west-1.111122223333", "windows-x64"]
    judged = Rule("r", match, exclude, 60, 0, "all", 0, 0, 0, Priority.P2, "ci-infra", None, None, "all")
    assert {name for name in names if judged.applies_to(name)} == selected


def test_a_silence_matches_identities_as_the_page_names_them() -> None:
    def silence(*matchers: str) -> SilenceRecord:
        return SilenceRecord("s", matchers, None, None, T0, T0 + timedelta(hours=1), "me", "why")

    def hides(record: SilenceRecord, name: str) -> bool:
        return record.matches("jobs-queueing", name, "ci-infra", T0)

    # A pattern without `@` means the key in every region and account, as a rule's `match` does.
    copies = ("linux-x64", "linux-x64@eu-west-1", "linux-x64@eu-west-1.111122223333")
    assert all(hides(silence("linux-x64"), n) for n in copies)
    # A pattern with `@` names one copy.
    assert hides(silence("linux-x64@eu-west-1"), "linux-x64@eu-west-1")
    assert not hides(silence("linux-x64@eu-west-1"), "linux-x64")
    assert not hides(silence("linux-x64@eu-west-1"), "linux-x64@eu-west-1.111122223333")
    assert not hides(silence("linux-x64"), "linux-arm64@eu-west-1")


CONFIG = """
version: 1
runner_types:
  - {name: NAME, queue: {name: q}}
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", region: eu-west-1}
rules:
  - {name: jobs-queueing, match: [MATCH], team: ci-infra, thresholds: {queue_size: 0}}
"""


def test_a_rule_may_name_one_copy_and_a_configured_runner_type_never_takes_a_qualified_name() -> None:
    # A second rule pages the plain identity: a configured runner type no rule selects is refused.
    plain = "\n  - {name: plain, match: [linux-x64], team: ci-infra, thresholds: {queue_size: 0}}\n"
    text = CONFIG.replace("NAME", "linux-x64").replace("MATCH", "linux-x64@eu-west-1").rstrip("\n") + plain
    config = parse_config(text, source="c")
    assert config.rules[0].match == ["linux-x64@eu-west-1"]
    with pytest.raises(ConfigError, match=r"runner_types\[0\]\.name"):
        parse_config(CONFIG.replace("NAME", "linux-x64@eu-west-1").replace("MATCH", "'*'"), source="c")
