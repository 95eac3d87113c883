"""A deploy that asks only what it must, written once: every parameter has a working default and its row in
docs/operations.md, the README names the ones to answer, no step needs the AWS CLI, the several-stacks deploy
is the README's alone, the samconfig environments confirm as a user expects, and `make build` names its
config or stops."""

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

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
SHELL_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)
TO_ANSWER = ["AutoscalerEventBusName", "WebhookSecretArn", "WatchedAccountIds", "ChatTopicArn", "ExistingAlertTopicArn"]


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


def test_the_readme_names_each_question_a_fleet_may_need_to_answer() -> None:
    deploy = " ".join(section(README.read_text(encoding="utf-8"), "## Deploy").split())
    for name in TO_ANSWER:
        assert f"`{name}`" in deploy and name in parameters(), name


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
    assert sorted(re.findall(r"--config-env (\w+)", several)) == ["euw1", "use1"]


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
