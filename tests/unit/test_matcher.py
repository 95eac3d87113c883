"""Jobs routed as the upstream webhook routes them (lambdas/functions/webhook/src/runners/dispatch.ts and
labels.ts, v6.10 and v7.11), from matcher configs written as its terraform writes them; and the
autoscaler's resources named from its prefix as its modules name them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from matcher_configs import chunks, entry, pytorch_like, upstream_multi_runner, written

from queuewatch.config import Config
from queuewatch.config.load import ConfigError, parse_config
from queuewatch.model import autoscaler
from queuewatch.model.matcher import MatcherConfigError, parse
from queuewatch.track.matching import MatcherParameters, matcher_parameters


def keys(config_entries: list[dict[str, object]], labels: list[str], strategy: str = "first") -> list[str | None]:
    config = parse([("/p", written(config_entries))])
    return [e.key for e in config.dispatch(labels, strategy)]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["self-hosted", "linux", "x64", "ubuntu-latest"], ["linux-x64-ubuntu"]),
        (["self-hosted", "linux", "x64", "ubuntu-2404"], ["linux-x64-ubuntu"]),  # the entry's second label list
        (["self-hosted", "linux", "x64", "ubuntu-2204"], ["linux-x64-ubuntu-2204"]),
        (["Self-Hosted", "Linux", "ARM64", "Amazon"], ["linux-arm64"]),  # without case, as upstream lowers both
        # exactMatch: all three are in both Ubuntu entries' lists; the one written first (by key) takes it
        (["self-hosted", "linux", "x64"], ["linux-x64-ubuntu"]),
        (["self-hosted", "windows", "x64", "servercore-2022"], ["windows-x64"]),
        # Not exactMatch: linux-x64 takes a job when *any* of its labels is in the list, so a GPU job the
        # strict entries refuse lands on the priority-1 Amazon Linux runners.
        (["self-hosted", "linux", "x64", "gpu"], ["linux-x64"]),
        (["self-hosted", "macos"], ["linux-x64"]),  # even a macOS job: self-hosted alone is enough for it
        (["ubuntu-latest", "macos"], []),  # no strict list holds macos, and linux-x64's holds neither
    ],
)
def test_upstream_multi_runner_example_routes_as_its_webhook(labels: list[str], expected: list[str]) -> None:
    assert keys(upstream_multi_runner(), labels) == expected


def test_a_job_no_entry_takes_is_refused() -> None:
    assert keys(upstream_multi_runner(), ["macos", "m2"]) == []


def test_strict_entries_are_tried_first_whatever_their_priority() -> None:
    # linux-x64 (priority 1, not exact) is written first; the exact entries still take the job before it.
    text = written(upstream_multi_runner())
    assert json.loads(text)[0]["key"] == "linux-x64"
    assert keys(upstream_multi_runner(), ["self-hosted", "linux", "arm64", "amazon"]) == ["linux-arm64"]


def test_among_equally_strict_entries_the_written_order_decides() -> None:
    both = [
        entry("p", "b-second", [["self-hosted", "gpu"]], exact=True, priority=5),
        entry("p", "a-first", [["self-hosted", "gpu"]], exact=True, priority=2),
    ]
    assert keys(both, ["self-hosted", "gpu"]) == ["a-first"]
    assert keys(both, ["self-hosted", "gpu"], "all") == ["a-first", "b-second"]
    assert keys(both, ["self-hosted", "gpu"], "random") == ["a-first", "b-second"]  # either: the first stands


def test_all_takes_only_the_matches_of_the_first_ones_exactness() -> None:
    fleet = [
        entry("p", "exact", [["self-hosted", "gpu"]], exact=True),
        entry("p", "loose", [["self-hosted", "gpu", "big"]], exact=False),
    ]
    assert keys(fleet, ["self-hosted", "gpu"], "all") == ["exact"]


def test_a_job_without_labels_is_taken_only_by_a_loose_entry() -> None:
    assert keys([entry("p", "exact", [["self-hosted"]], exact=True)], []) == []
    assert keys([entry("p", "loose", [["self-hosted"]], exact=False)], []) == ["loose"]


def test_bidirectional_match_wants_exactly_the_jobs_labels() -> None:
    fleet = [entry("p", "bi", [["self-hosted", "linux", "x64"]], exact=False, bidirectionalLabelMatch=True)]
    assert keys(fleet, ["self-hosted", "linux", "x64"]) == ["bi"]
    assert keys(fleet, ["self-hosted", "linux"]) == []


def test_dynamic_labels_take_no_part_and_need_an_entry_allowing_them() -> None:
    fleet = [
        entry("p", "a-plain", [["self-hosted", "linux"]], exact=True),
        entry("p", "b-dynamic", [["self-hosted", "linux"]], exact=True, enableDynamicLabels=True),
    ]
    assert keys(fleet, ["self-hosted", "linux"]) == ["a-plain"]
    assert keys(fleet, ["self-hosted", "linux", "ghr-ec2-instance-type:c6i.large"]) == ["b-dynamic"]
    assert keys(fleet[:1], ["self-hosted", "linux", "ghr-ec2-instance-type:c6i.large"]) == []


def test_a_pytorch_like_fleet_maps_keys_chosen_apart_from_labels() -> None:
    assert keys(pytorch_like(), ["self-hosted", "linux", "x64", "gpu-a100"]) == ["linux-x64-gpu-a100"]
    assert keys(pytorch_like(), ["self-hosted", "linux.2xlarge"]) == ["linux-x64-cpu-2xlarge"]
    assert keys(pytorch_like(), ["self-hosted", "linux", "x64", "gpu-b200"]) == []


def test_two_regions_keep_each_queues_region() -> None:
    fleet = upstream_multi_runner("ci", "eu-west-1") + pytorch_like("ci", "us-east-1")
    config = parse([("/p", written(fleet))])
    [gpu] = config.dispatch(["self-hosted", "linux", "x64", "gpu-h100"])
    [arm] = config.dispatch(["self-hosted", "linux", "arm64", "amazon"])
    assert (gpu.queue_name, gpu.queue_region) == ("ci-linux-x64-gpu-h100-queued-builds", "us-east-1")
    assert (arm.queue_name, arm.queue_region) == ("ci-linux-arm64-queued-builds", "eu-west-1")


def test_chunks_join_in_order_as_upstream_joins_them() -> None:
    text = written(pytorch_like())
    parts = chunks(text, 3)
    assert len(parts) == 3
    config = parse([(f"/p-{i}", part) for i, part in enumerate(parts)])
    assert len(config.entries) == len(pytorch_like())
    assert config.source == "/p-0:/p-1:/p-2"


@pytest.mark.parametrize(
    ("texts", "said"),
    [
        ([("/p", "{not json")], "/p: not JSON"),
        ([("/p", "[]")], "expected a non-empty list"),
        ([("/p", '{"id": "x"}')], "found dict"),
        ([("/p", '[{"id": "u", "matcherConfig": {"exactMatch": true}}]')], "entry 0: matcherConfig.labelMatchers"),
        ([("/p-0", '[{"id": "u"'), ("/p-2", "}]")], "/p-0:/p-2: entry 0: matcherConfig"),
    ],
)
def test_a_malformed_matcher_config_is_an_error_naming_the_parameter(texts: list[tuple[str, str]], said: str) -> None:
    with pytest.raises(MatcherConfigError, match=said.replace("[", r"\[")):
        parse(texts)


def test_names_from_the_prefix_as_the_modules_give_them() -> None:
    multi = autoscaler.log_groups("ci", "linux-x64-gpu-a100", "multi-runner")
    assert multi.scale_up == "/aws/lambda/ci-linux-x64-gpu-a100-scale-up"
    assert multi.job_retry == "/aws/lambda/ci-linux-x64-gpu-a100-job-retry"
    single = autoscaler.log_groups("ci", "ignored", "single-runner")
    assert (single.scale_up, single.job_retry) == ("/aws/lambda/ci-scale-up", "/aws/lambda/ci-job-retry")
    assert autoscaler.bus_name("ci") == "ci-runners"
    assert autoscaler.build_queue("ci", "linux-x64", "multi-runner") == "ci-linux-x64-queued-builds"
    assert autoscaler.build_queue("ci", None, "single-runner") == "ci-queued-builds"
    assert autoscaler.matcher_config_path("ci") == "/github-action-runners/ci/webhook/runner-matcher-config"
    assert autoscaler.matcher_config_chunks("/x", 2) == ["/x-0", "/x-1"]


LABELS = st.sampled_from(["self-hosted", "Linux", "linux", "x64", "arm64", "gpu-a100", "gpu-h100", "ghr-run-id:1"])


def upstream_reference(entries: list[dict[str, object]], labels: list[str], strategy: str) -> list[str]:
    """dispatch.ts and labels.ts, line for line, over every entry: what the indexed dispatch must equal."""
    ordered = sorted(
        json.loads(written(entries)),
        key=lambda e: not (e["matcherConfig"].get("bidirectionalLabelMatch") or e["matcherConfig"]["exactMatch"]),
    )
    plain = [label for label in labels if not label.startswith("ghr-")]

    def can_run(e: dict[str, Any]) -> bool:
        lowered = [[label.lower() for label in runner] for runner in e["matcherConfig"]["labelMatchers"]]
        if e["matcherConfig"].get("bidirectionalLabelMatch"):
            job = [label.lower() for label in plain]
            return any(all(j in r for j in job) and all(x in job for x in r) for r in lowered)
        test = all if e["matcherConfig"]["exactMatch"] else any
        found = any(test(label.lower() in r for label in plain) for r in lowered)
        return not found if not plain else found

    matches = [e for e in ordered if can_run(e)]
    if not matches:
        return []
    if len(plain) != len(labels):
        dynamic = [e for e in matches if e["matcherConfig"].get("enableDynamicLabels")]
        return [dynamic[0]["key"]] if dynamic else []
    top = [e["key"] for e in matches if e["matcherConfig"]["exactMatch"] == matches[0]["matcherConfig"]["exactMatch"]]
    return top[:1] if strategy == "first" else top


@given(
    fleet=st.lists(
        st.tuples(
            st.lists(st.lists(LABELS, max_size=4), min_size=1, max_size=3),
            st.booleans(),
            st.booleans(),
            st.booleans(),
            st.integers(0, 3),
        ),
        min_size=1,
        max_size=8,
    ),
    labels=st.lists(LABELS, max_size=4, unique=True),
    strategy=st.sampled_from(["first", "all"]),
)
def test_the_indexed_dispatch_routes_every_job_as_upstreams_scan_does(
    fleet: list[tuple[list[list[str]], bool, bool, bool, int]], labels: list[str], strategy: str
) -> None:
    entries = [
        entry("p", f"k{i}", lists, exact=exact, priority=priority, bidirectionalLabelMatch=bi, enableDynamicLabels=dyn)
        for i, (lists, exact, bi, dyn, priority) in enumerate(fleet)
    ]
    assert keys(entries, labels, strategy) == upstream_reference(entries, labels, strategy)


def config_with(autoscaler: str) -> Config:
    text = f"version: 1\n{autoscaler}\nrules:\n  - {{name: q, team: ci, thresholds: {{queue_size: 0}}}}\n"
    return parse_config(text, source="t.yaml")


def test_the_deploys_matcher_config_comes_first_then_the_configs_then_the_prefixes_default() -> None:
    named = config_with("autoscaler: {prefix: ci, matcher_config: /a/x-0:/a/x-1}")
    assert matcher_parameters(named, "/deploy/path", "ci") == MatcherParameters(("/deploy/path",), explicit=False)
    assert matcher_parameters(named, "/d/x-0:/d/x-1", "") == MatcherParameters(("/d/x-0", "/d/x-1"), explicit=True)
    assert matcher_parameters(named) == MatcherParameters(("/a/x-0", "/a/x-1"), explicit=True)
    plain = config_with("autoscaler: {prefix: ci}")
    default = "/github-action-runners/{}/webhook/runner-matcher-config"
    assert matcher_parameters(plain, "", "deployed") == MatcherParameters((default.format("deployed"),), False)
    assert matcher_parameters(plain) == MatcherParameters((default.format("ci"),), explicit=False)
    assert matcher_parameters(config_with("discovery: [{queue_name_pattern: '{runner_type}-queued-builds'}]")) is None


@pytest.mark.parametrize(
    ("autoscaler", "said"),
    [
        ("autoscaler: {prefix: 'ci runners'}", "t.yaml:2: autoscaler.prefix: found 'ci runners'"),
        ("autoscaler: {prefix: ci, layout: multi}", "autoscaler.layout"),
        ("autoscaler: {prefix: ci, matcher_config: [no-slash]}", "expected an SSM parameter name"),
        ("autoscaler: {}", "autoscaler.prefix"),
    ],
)
def test_a_bad_autoscaler_section_is_refused_naming_the_key(autoscaler: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        config_with(autoscaler)
