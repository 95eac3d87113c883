"""Routing a job to its runner type: label sets, case, discovered candidates, GitHub-hosted jobs; and
GitHub's webhook signature, by GitHub's own documented example and over non-ASCII bodies."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from queuewatch.config.load import ConfigError, parse_config
from queuewatch.model.jobs import github_hosted
from queuewatch.track import Router
from queuewatch.track.signature import signature_valid

# The upstream module's own runner configs (examples/multi-runner/templates/runner-configs): one runner
# type on one queue with two label sets, a GPU type with one, and discovery of the rest.
CONFIG = """
version: 1
runner_types:
  - name: linux-x64-ubuntu
    queue: {name: multi-runner-linux-x64-ubuntu-queued-builds}
    label_sets:
      - {labels: [self-hosted, linux, x64, ubuntu-latest], exact_match: true}
      - {labels: [self-hosted, linux, x64, ubuntu-2404], exact_match: true}
  - name: linux-x64
    queue: {name: multi-runner-linux-x64-queued-builds}
    label_sets:
      - {labels: [self-hosted, linux, x64, amazon]}
  - name: gpu
    queue: {name: multi-runner-gpu-queued-builds}
    labels: [self-hosted, linux, gpu]
discovery:
  - {queue_name_pattern: "gh-ci-{runner_type}-queued-builds", match: ["*"]}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_size: 0}}
"""


@pytest.fixture(scope="module")
def router() -> Router:
    return Router(parse_config(CONFIG, source="test.yaml"))


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["self-hosted", "linux", "x64", "ubuntu-latest"], "linux-x64-ubuntu"),  # the first set
        (["self-hosted", "linux", "x64", "ubuntu-2404"], "linux-x64-ubuntu"),  # the second set, same runner type
        (["Self-Hosted", "Linux", "X64", "Ubuntu-2404"], "linux-x64-ubuntu"),  # without case
        (
            ["self-hosted", "linux", "ubuntu-2404"],
            "ubuntu-2404",
        ),  # exact_match: a subset is not enough (a candidate)...
        (["self-hosted", "amazon"], "linux-x64"),  # ...but is without it
        (["self-hosted", "gpu"], "gpu"),  # the one-set `labels:` keeps working
    ],
)
def test_a_runner_type_serves_each_of_its_label_sets(router: Router, labels: list[str], expected: str | None) -> None:
    assert router.runner_type(labels) == expected
    assert router.configured(expected) is (expected != "ubuntu-2404")


def test_a_discovered_name_is_taken_whatever_the_labels_case(router: Router) -> None:
    # runs-on: [self-hosted, Linux.Arm64-Large] is the discovered linux.arm64-large: GitHub ignores case.
    assert router.runner_type(["self-hosted", "Linux.Arm64-Large"]) == "linux.arm64-large"
    case_config = CONFIG.replace('match: ["*"]', 'match: ["Linux.Arm64-*"]')
    assert Router(parse_config(case_config, source="t.yaml")).runner_type(["LINUX.ARM64-LARGE"]) == "linux.arm64-large"


def test_a_discovered_name_is_only_a_candidate(router: Router) -> None:
    # With match ["*"], a GitHub-hosted job names a "runner type" no queue may hold: the track stage cannot
    # tell, so the name is a candidate the collector confirms, never a configured runner type.
    assert router.runner_type(["ubuntu-latest"]) == "ubuntu-latest"
    assert not router.configured("ubuntu-latest")


@pytest.mark.parametrize(
    ("labels", "hosted"),
    [
        (["ubuntu-latest"], True),
        (["ubuntu-24.04"], True),
        (["ubuntu-22.04-arm"], True),
        (["ubuntu-slim"], True),
        (["windows-2022"], True),
        (["Windows-Latest"], True),
        (["macos-14-xlarge"], True),
        (["macos-latest"], True),
        (["self-hosted", "ubuntu-latest"], False),  # the upstream example's self-hosted set
        (["ubuntu-2204"], False),  # not one of GitHub's names (theirs is ubuntu-22.04)
        (["linux.2xlarge"], False),
        (["gpu-a100"], False),
        ([], False),
    ],
)
def test_github_hosted_jobs_are_told_by_githubs_own_runner_labels(labels: list[str], hosted: bool) -> None:
    assert github_hosted(labels) is hosted


def test_label_sets_are_checked_in_the_config() -> None:
    both = CONFIG.replace("    labels: [self-hosted, linux, gpu]", "    labels: [gpu]\n    label_sets: [{labels: [a]}]")
    with pytest.raises(ConfigError, match="labels and label_sets both given"):
        parse_config(both, source="t.yaml")
    with pytest.raises(ConfigError, match=r"write labels: \[amazon\]"):
        parse_config(CONFIG.replace("{labels: [self-hosted, linux, x64, amazon]}", "{labels: amazon}"), source="t.yaml")
    with pytest.raises(ConfigError, match="expected a runner label"):
        parse_config(CONFIG.replace("ubuntu-2404]", "'ubuntu 2404']"), source="t.yaml")
    with pytest.raises(ConfigError, match="exact_match: true needs each label set's own exact_match under label_sets"):
        parse_config(CONFIG.replace("    label_sets:\n      - {labels: [self-hosted, linux, x64, amazon]}",
                                    "    exact_match: true\n    label_sets:\n      - {labels: [amazon]}"),
                     source="t.yaml")  # fmt: skip
    with pytest.raises(ConfigError, match="label_sets"):
        parse_config(CONFIG.replace("{labels: [self-hosted, linux, x64, amazon]}", "{labels: []}"), source="t.yaml")


# GitHub's documented example ("Validating webhook deliveries"): this secret and payload give this header.
GITHUB_SECRET = "It's a Secret to Everybody"
GITHUB_PAYLOAD = b"Hello, World!"
GITHUB_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def githubs_signature(secret: str, body: bytes) -> str:
    """GitHub's scheme as it documents it: the HMAC-SHA256 hex digest of the raw body, under the secret."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def test_githubs_documented_example_verifies() -> None:
    assert githubs_signature(GITHUB_SECRET, GITHUB_PAYLOAD) == GITHUB_SIGNATURE
    assert signature_valid(GITHUB_SECRET, GITHUB_PAYLOAD, GITHUB_SIGNATURE)
    assert not signature_valid(GITHUB_SECRET, b"Hello, World?", GITHUB_SIGNATURE)


@pytest.mark.parametrize(
    "text", ['{"repo": "équipe-zürich/ci"}', '{"name": "tests (日本語, 🚀)"}', '{"x": "\u00a0\u2028"}']
)
def test_non_ascii_bodies_verify_when_right_and_fail_when_tampered(text: str) -> None:
    body = text.encode("utf-8")
    header = githubs_signature(GITHUB_SECRET, body)
    assert signature_valid(GITHUB_SECRET, body, header)
    assert not signature_valid(GITHUB_SECRET, text.replace('"}', 'x"}').encode(), header)
    assert not signature_valid(GITHUB_SECRET, text.encode("utf-16"), header)  # the same text, other bytes


@pytest.mark.parametrize("digest", ["é" * 64, "\ud800" + "0" * 63, "０" * 64, "0" * 63 + "\x00", "ß"])
def test_a_header_anyone_can_send_is_refused_never_an_error(digest: str) -> None:
    assert not signature_valid(GITHUB_SECRET, GITHUB_PAYLOAD, "sha256=" + digest)


def test_a_label_set_an_earlier_runner_type_takes_whole_is_an_error() -> None:
    # gpu's [self-hosted, linux] jobs all go to the first runner type, whose set holds those labels.
    shadowed = CONFIG.replace("    labels: [self-hosted, linux, gpu]", "    labels: [self-hosted, linux, x64]")
    with pytest.raises(ConfigError, match=r"runner type 'gpu' never gets a job for labels \['linux', 'self-hosted', "
                       r"'x64'\]: runner_types\[1\] 'linux-x64' comes first"):  # fmt: skip
        parse_config(shadowed, source="t.yaml")
    twice = CONFIG.replace(
        "      - {labels: [self-hosted, linux, x64, ubuntu-2404], exact_match: true}",
        "      - {labels: [self-hosted, linux, x64, ubuntu-2404], exact_match: true}\n"
        "  - name: again\n    queue: {name: q-again}\n"
        "    label_sets: [{labels: [SELF-HOSTED, linux, x64, ubuntu-latest], exact_match: true}]",
    )
    with pytest.raises(ConfigError, match=r"t.yaml:\d+: runner_types\[1\]\.label_sets\[0\]: runner type 'again'"):
        parse_config(twice, source="t.yaml")
    # An exact set earlier takes only its own set: a wider set later still gets the others.
    exact_first = CONFIG.replace(
        "    labels: [self-hosted, linux, gpu]", "    labels: [self-hosted, linux, x64, ubuntu-latest, gpu]"
    )
    assert Router(parse_config(exact_first, source="t.yaml")).runner_type(["self-hosted", "gpu"]) == "gpu"
