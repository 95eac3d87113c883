"""A deploy that asks only what it must, written once: every parameter has a working default and its row in
docs/operations.md, the config decides the parameters it can and `make deploy` passes them, the README lists
every question a deploy asks and no other, no step needs the AWS CLI, the several-stacks deploy is the
README's alone, the samconfig environments confirm as a user expects, and `make build` names its config or
stops, as `make deploy` stops before a build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from support import load_template

from queuewatch.config.load import check_config_bytes
from queuewatch_cli.commands.build.build import DERIVED_PARAMETERS, deploy_parameters, parameter_overrides

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
QUESTION = re.compile(r"^- \*\*(?P<what>[^*]+)\*\*:(?P<where>.*?)(?=^- |^$)", re.M | re.S)
PARAMETER = re.compile(r"`([A-Z][a-z0-9]+(?:[A-Z][a-zA-Z0-9]*)+)`")


def parameters() -> dict[str, Any]:
    return dict(load_template()["Parameters"])


def section(text: str, heading: str) -> str:
    start = text.index(f"\n{heading}\n")
    return text[start : text.index("\n## ", start + 1)]


def test_every_parameter_has_a_default_and_its_row_and_no_row_is_left_over() -> None:
    table = section((ROOT / "docs" / "operations.md").read_text(encoding="utf-8"), "## Deploy")
    rows = set(re.findall(r"^\| `(\w+)` \|", table, flags=re.M))
    for name, parameter in parameters().items():
        assert "Default" in parameter, f"{name}: no default, so every deploy must answer it"
    assert rows == set(parameters())


def questions() -> dict[str, str]:
    """The README's list of what a deploy asks: each bold item, and where it is answered."""
    one_stack = section(README.read_text(encoding="utf-8"), "### One stack").split("\n### ")[1] + "\n"
    return {found["what"]: " ".join(found["where"].split()) for found in QUESTION.finditer(one_stack)}


def test_the_readme_lists_what_a_deploy_asks_and_each_parameter_it_names_exists() -> None:
    asked = questions()
    assert list(asked) == [
        "the stack name and region",
        "the config",
        "the autoscaler's prefix",
        "what the config cannot know",
    ]
    assert (
        "samconfig.toml" in asked["the stack name and region"] and "DEPLOY_ENV=" in asked["the stack name and region"]
    )
    assert "make build CONFIG=" in asked["the config"] and "autoscaler: {prefix:" in asked["the autoscaler's prefix"]
    named = PARAMETER.findall(asked["what the config cannot know"])
    assert named and "PARAMETERS=" in asked["what the config cannot know"]
    for name in named:
        assert name in parameters(), f"the README asks for {name}, which template.yaml no longer has"
        assert name not in DERIVED_PARAMETERS, f"the README asks for {name}, which the config decides"


def test_every_parameter_is_asked_derived_or_defaulted() -> None:
    """A parameter with no default would be a question every deploy must answer: the README must ask it."""
    asked = set(PARAMETER.findall(questions()["what the config cannot know"]))
    for name, parameter in parameters().items():
        assert "Default" in parameter or name in asked or name in DERIVED_PARAMETERS, name
    assert set(DERIVED_PARAMETERS) <= set(parameters())
    deploy = " ".join(section(README.read_text(encoding="utf-8"), "## Deploy").split())
    assert f"one question for each of the template's {len(parameters())} parameters" in deploy


def test_the_config_decides_the_prefix_its_matcher_config_and_the_accounts_it_reads() -> None:
    fleet = b"""\
version: 1
autoscaler: {prefix: gh-ci, matcher_config: /ci/webhook/matcher}
runner_types:
  - {name: arm, queue: {name: gh-ci-arm-queued-builds, account_id: "444455556666"}}
  - {name: x64, queue: {url: "https://sqs.eu-west-1.amazonaws.com/111122223333/gh-ci-x64-queued-builds"}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}, team: ci}
"""
    derived = deploy_parameters(check_config_bytes(fleet, "fleet.yaml").config)
    assert derived == {
        "AutoscalerPrefix": "gh-ci",
        "AutoscalerMatcherConfigPath": "/ci/webhook/matcher",
        "WatchedAccountIds": "111122223333,444455556666",
    }
    assert list(derived) == list(DERIVED_PARAMETERS)


def test_a_config_without_an_autoscaler_deploys_every_derived_parameter_empty() -> None:
    """Left out, SAM would keep the last deploy's prefix: an empty one must be passed, as `Name=""`."""
    queue_only = b"""\
version: 1
discovery: [{queue_name_pattern: "acme-{runner_type}-queued-builds", region: eu-west-1}]
rules: [{name: jobs-queueing, thresholds: {queue_time: 5m}, team: ci}]
"""
    derived = deploy_parameters(check_config_bytes(queue_only, "fleet.yaml").config)
    assert parameter_overrides(derived) == 'AutoscalerPrefix="" AutoscalerMatcherConfigPath="" WatchedAccountIds=""'


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_no_step_needs_the_aws_cli(doc: Path) -> None:
    """Nothing installs the AWS CLI: a shell block calls the SAM CLI, make and queuewatch alone."""
    for block in SHELL_BLOCK.findall(doc.read_text(encoding="utf-8")):
        for line in block.replace("\\\n", " ").splitlines():
            assert not re.search(r"(^|\$\(|[;&|]\s*)aws\s", line.strip()), f"{doc.name}: {line.strip()}"


def test_the_several_stacks_deploy_is_written_once_and_linked() -> None:
    written = [
        doc.name
        for doc in DOCS
        for block in SHELL_BLOCK.findall(doc.read_text(encoding="utf-8"))
        if "ExistingAlertTopicArn=" in block
    ]
    assert written == ["README.md"]
    assert "](../README.md#several-stacks)" in (ROOT / "docs" / "SCALE_OUT.md").read_text(encoding="utf-8")


def test_one_stack_by_hand_confirms_its_change_set_and_the_scripted_stacks_do_not() -> None:
    environments = tomllib.loads((ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    confirm = {n: e["deploy"]["parameters"]["confirm_changeset"] for n, e in environments.items() if n != "version"}
    assert confirm == {"default": True, "use1": False, "euw1": False}
    several = section(README.read_text(encoding="utf-8"), "### Several stacks")
    assert sorted(re.findall(r"make deploy DEPLOY_ENV=(\w+)", several)) == ["euw1", "use1"]


def test_make_build_without_config_stops_and_names_the_fix(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.fail("make is needed to run the build's first step")
    env = {key: value for key, value in os.environ.items() if key != "CONFIG"}
    done = subprocess.run(
        ["make", "--no-print-directory", "build", f"VENV={tmp_path}/venv", f"VENV_SAM={tmp_path}/venv-sam"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "make build CONFIG=path/to/fleet.yaml" in done.stderr and "CONFIG=config/queuewatch.yaml" in done.stderr
    assert not (tmp_path / "venv").exists()  # it stopped before installing anything


def test_make_deploy_before_a_build_stops_and_names_the_fix(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.fail("make is needed to run the deploy's first step")
    done = subprocess.run(
        ["make", "--no-print-directory", "deploy", f"BUILT_TEMPLATE={tmp_path}/template.yaml",
         f"STAGED_CONFIG={tmp_path}/config", f"SAM={tmp_path}/sam"],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "make deploy: nothing is built to deploy: make build CONFIG=path/to/fleet.yaml first" in done.stderr


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_samconfig_environments_are_written_in_samconfig_toml_alone(doc: Path) -> None:
    """A copy in a doc would drift from the file `make deploy` reads: the docs name the environments, never
    write them."""
    text = doc.read_text(encoding="utf-8")
    assert not re.search(r"^\[\w+\.deploy\.parameters\]", text, re.M), f"{doc.name} writes a samconfig environment"
    assert "stack_name =" not in text and "confirm_changeset =" not in text, doc.name
