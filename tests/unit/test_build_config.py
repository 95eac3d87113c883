"""Your config in your repository: `make build CONFIG=...` deploys exactly the bytes check-config passed, under
the one name the functions read, and the dashboard draws that config's thresholds. Checked without a build:
the Makefile's recipe (make -n), the template's wiring, and the staging and drawing themselves."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import load_template

from queuewatch.config.load import load_config
from queuewatch_cli.commands.build.build import DEPLOYED_NAME, THRESHOLD_GRAPHS, draw_thresholds, stage_dashboard
from queuewatch_cli.main import main

REPO_ROOT = Path(__file__).resolve().parents[2]
FLEET = """\
version: 1
defaults: {rule: {team: plateforme-ci}}
discovery:
  - {queue_name_pattern: "acme-ci-{runner_type}-queued-builds", region: eu-west-1}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m, queue_size: 2}}
  - {name: gpu-queueing, match: ["*-gpu"], thresholds: {queue_time: 30m}, priority: P1}
"""


def build_recipe(config: str) -> list[str]:
    if shutil.which("make") is None:
        pytest.fail("make is needed to read the build's recipe")
    out = subprocess.run(
        ["make", "-n", "--no-print-directory", "build", f"CONFIG={config}", "VENV=.venv", "VENV_SAM=.venv"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return [line for line in out.splitlines() if not line.startswith("#")]


def test_the_build_stages_the_given_config_before_sam_build_and_draws_its_dashboard_after() -> None:
    recipe = build_recipe("../fleet/prod.yaml")
    stage = next(i for i, line in enumerate(recipe) if " stage-config " in line)
    build = next(i for i, line in enumerate(recipe) if "/sam build || " in line)
    draw = next(i for i, line in enumerate(recipe) if " stage-dashboard " in line)
    assert stage < build < draw
    assert "stage-config ../fleet/prod.yaml --into .aws-sam/config || " in recipe[stage]
    assert "stage-dashboard .aws-sam/build/template.yaml --config .aws-sam/config/queuewatch.yaml || " in recipe[draw]


def test_the_build_installs_the_package_and_the_sam_cli_and_no_development_tool() -> None:
    out = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", "build", "PYTHON313=python3.13"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    installs = [line for line in out.splitlines() if " pip install " in line]
    assert any(line.endswith("pip install --quiet --disable-pip-version-check -e .") for line in installs), installs
    assert any(line.endswith("-r requirements-sam.txt") for line in installs), installs
    assert len(installs) == 2, installs  # no moto, no linters, type checkers or test tools
    assert not [line for line in installs if "requirements-dev.txt" in line or "requirements-demo.txt" in line]


def test_make_test_installs_the_sam_cli_so_the_readmes_deploy_commands_are_run_not_skipped() -> None:
    out = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", "test", "PYTHON313=python3.13"],
        cwd=REPO_ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert any(line.endswith("-r requirements-sam.txt") for line in out.splitlines()), out


def test_the_functions_read_only_the_staged_file_and_no_parameter_names_another() -> None:
    template = load_template()
    layer = template["Resources"]["ConfigLayer"]["Properties"]
    assert layer["ContentUri"].rstrip("/") == ".aws-sam/config"  # where stage-config writes (the Makefile)
    assert template["Globals"]["Function"]["Environment"]["Variables"]["QUEUEWATCH_CONFIG"] == f"/opt/{DEPLOYED_NAME}"
    # (AutoscalerMatcherConfigPath names the autoscaler's own matcher config in SSM, not queuewatch's)
    assert not [
        name
        for name in template["Parameters"]
        if ("Config" in name or "Threshold" in name) and name != "AutoscalerMatcherConfigPath"
    ]
    for name, function in template["Resources"].items():
        if function["Type"] == "AWS::Serverless::Function":
            variables = function["Properties"].get("Environment", {}).get("Variables", {})
            assert "QUEUEWATCH_CONFIG" not in variables, name


def test_staging_writes_the_checked_bytes_under_the_deployed_name_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = tmp_path / "their-repo" / "ops"
    theirs.mkdir(parents=True)
    (theirs / "queuewatch.yaml").write_text(FLEET + "# the team's own comment\n", encoding="utf-8")
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "old.yaml").write_text("stale")
    assert main(["stage-config", str(theirs), "--into", str(staged)]) == 0  # a folder of theirs
    assert [p.name for p in staged.iterdir()] == [DEPLOYED_NAME]
    assert (staged / DEPLOYED_NAME).read_bytes() == (theirs / "queuewatch.yaml").read_bytes()


def test_a_config_that_fails_check_config_stages_nothing_and_fails_the_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    staged = tmp_path / "staged"
    good = tmp_path / "good.yaml"
    good.write_text(FLEET, encoding="utf-8")
    assert main(["stage-config", str(good), "--into", str(staged)]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text(FLEET.replace("queue_time: 5m", "queue_time: 90"), encoding="utf-8")
    assert main(["stage-config", str(bad), "--into", str(staged)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:6: rules[0].thresholds.queue_time: 90: add a unit" in err and "nothing was staged" in err
    assert not (staged / DEPLOYED_NAME).exists()  # not even the good config from before


STUB_SAM = """#!/bin/sh
# sam build, as far as the Makefile can tell: the built template appears, unless the test says it fails
[ "$1" = build ] || exit 2
[ -z "$SAM_FAILS" ] || { echo "Build Failed" >&2; exit 1; }
mkdir -p .aws-sam/build && cp "$REAL_TEMPLATE" .aws-sam/build/template.yaml
"""


def make_build(tmp_path: Path, config: str, sam_fails: bool = False) -> subprocess.CompletedProcess[str]:
    """The Makefile's build target in a scratch folder: its own steps and the real queuewatch command, with a
    stub `sam` (the real one takes minutes); the prerequisites' stamps make the venvs count as installed."""
    if shutil.which("make") is None:
        pytest.fail("make is needed to run the build's recipe")
    shutil.copy(REPO_ROOT / "Makefile", tmp_path / "Makefile")
    for stamp in ("venv/.package-installed", "venv-sam/.installed"):
        (tmp_path / stamp).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").touch()
    (tmp_path / "requirements-sam.txt").touch()
    (tmp_path / "venv/.package-installed").touch()
    (tmp_path / "venv-sam/.installed").touch()
    (tmp_path / "venv/bin").mkdir(exist_ok=True)
    (tmp_path / "venv-sam/bin").mkdir(exist_ok=True)
    queuewatch = tmp_path / "venv/bin/queuewatch"
    queuewatch.write_text(f'#!/bin/sh\nexec {sys.executable} -m queuewatch_cli "$@"\n')
    sam = tmp_path / "venv-sam/bin/sam"
    sam.write_text(STUB_SAM)
    for tool in (queuewatch, sam):
        tool.chmod(0o755)
    env = {**os.environ, "REAL_TEMPLATE": str(REPO_ROOT / "template.yaml"), "SAM_FAILS": "1" if sam_fails else ""}
    return subprocess.run(
        ["make", "--no-print-directory", "build", f"CONFIG={config}", "VENV=venv", "VENV_SAM=venv-sam",
         f"PYTHON313={sys.executable}"],
        cwd=tmp_path, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip


def deployable(tmp_path: Path) -> list[str]:
    """What `sam package` would ship: the built template, else the source one with the staged config folder."""
    return [p for p in (".aws-sam/build/template.yaml", ".aws-sam/config") if (tmp_path / p).exists()]


def test_a_failed_build_after_a_good_one_leaves_nothing_to_deploy(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(FLEET, encoding="utf-8")
    done = make_build(tmp_path, str(good))
    assert done.returncode == 0, done.stderr
    assert deployable(tmp_path) == [".aws-sam/build/template.yaml", ".aws-sam/config"]
    assert (tmp_path / ".aws-sam/config" / DEPLOYED_NAME).read_bytes() == good.read_bytes()
    built = (tmp_path / ".aws-sam/build/template.yaml").read_text(encoding="utf-8")
    assert "rule jobs-queueing (P2): queue time > 5m" in built  # the dashboard was drawn after the build
    # The loops are written out, one alarm per logical id: `sam deploy` reads it without the SAM CLI's opt-in.
    assert "Fn::ForEach" not in built
    # ... and so is the transform that made them: given it, `sam local invoke` drops a conditioned function's
    # environment overrides (the tracker's tables in e2e).
    assert "AWS::LanguageExtensions" not in built and "\nTransform: AWS::Serverless-2016-10-31\n" in built
    assert "\n  CollectThrottlesAlarm:\n" in built and "\n  TrackEventAgeAlarm:\n" in built

    bad = tmp_path / "bad.yaml"
    bad.write_text(FLEET.replace("queue_time: 5m", "queue_time: 90"), encoding="utf-8")
    failed = make_build(tmp_path, str(bad))
    assert failed.returncode != 0
    assert "rules[0].thresholds.queue_time" in failed.stderr and "nothing is left to deploy" in failed.stderr
    assert deployable(tmp_path) == []  # not the last good build's template, not an empty config layer

    assert make_build(tmp_path, str(good)).returncode == 0
    failed = make_build(tmp_path, str(good), sam_fails=True)  # the config is good, sam build is not
    assert failed.returncode != 0 and "Build Failed" in failed.stderr
    assert deployable(tmp_path) == []


def test_staging_swaps_the_whole_folder_and_leaves_no_scratch_folder_beside_it(tmp_path: Path) -> None:
    first, second = tmp_path / "first.yaml", tmp_path / "second.yaml"
    first.write_text(FLEET, encoding="utf-8")
    second.write_text(FLEET + "# the second\n", encoding="utf-8")
    into = tmp_path / "build" / "config"
    for config in (first, second):
        assert main(["stage-config", str(config), "--into", str(into)]) == 0
        assert [p.name for p in into.iterdir()] == [DEPLOYED_NAME]
        assert (into / DEPLOYED_NAME).read_bytes() == config.read_bytes()
    assert [p.name for p in into.parent.iterdir()] == ["config"]


def lines_of(template: dict[str, Any]) -> dict[str, list[tuple[str, float]]]:
    body = json.loads(template["Resources"]["QueuewatchDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"])
    out = {}
    for widget in body["widgets"]:
        metrics = widget["properties"].get("metrics") or [[{}]]
        graph = metrics[0][0].get("id") if isinstance(metrics[0][0], dict) else None
        if graph in THRESHOLD_GRAPHS:
            out[graph] = [(a["label"], a["value"]) for a in widget["properties"]["annotations"]["horizontal"]]
    return out


def test_the_dashboard_draws_each_rule_of_the_deployed_config(tmp_path: Path) -> None:
    config_path = tmp_path / "fleet.yaml"
    config_path.write_text(FLEET, encoding="utf-8")
    built = tmp_path / "template.yaml"
    # As sam build writes it: long form (Fn::Sub), the source's values otherwise.
    built.write_text(yaml.safe_dump(load_template(), sort_keys=False), encoding="utf-8")
    stage_dashboard(built, load_config(config_path))
    drawn = lines_of(yaml.safe_load(built.read_text(encoding="utf-8")))
    time_lines = [("rule jobs-queueing (P2): queue time > 5m", 300), ("rule gpu-queueing (P1): queue time > 30m", 1800)]
    assert drawn == {
        "queuetime": time_lines,
        "jobqueuetime": time_lines,
        "queuesize": [("rule jobs-queueing (P2): queue size > 2", 2)],
    }


def test_a_dashboard_without_a_graph_to_draw_on_is_an_error_not_a_silent_dashboard() -> None:
    template = load_template()
    body = json.loads(template["Resources"]["QueuewatchDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"])
    body["widgets"] = [w for w in body["widgets"] if "Queue size" not in w["properties"].get("title", "")]
    template["Resources"]["QueuewatchDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"] = json.dumps(body)
    with pytest.raises(ValueError, match="no graph queuesize"):
        draw_thresholds(template, load_config(REPO_ROOT / "config" / "queuewatch.yaml"))


def test_the_built_template_is_one_cloudformation_takes(tmp_path: Path) -> None:
    """No YAML aliases (CloudFormation refuses them; the receivers' subscriptions share their topic's value), and
    `!Condition` in its long form, {"Condition": name} (a "Fn::Condition" is no condition to CloudFormation)."""
    config_path = tmp_path / "fleet.yaml"
    config_path.write_text(
        FLEET + "receivers:\n  - {name: mail, email: a@example.com}\n  - {name: ops, email: b@example.com}\n"
        "routes:\n  - {receiver: mail}\n  - {receiver: ops}\n",
        encoding="utf-8",
    )
    built = tmp_path / "template.yaml"
    built.write_text(yaml.safe_dump(load_template(), sort_keys=False), encoding="utf-8")
    stage_dashboard(built, load_config(config_path))
    text = built.read_text(encoding="utf-8")
    assert not re.search(r"[&*]id\d+", text)
    template = yaml.safe_load(text)
    assert {"Condition": "TrackFromBus"} in template["Conditions"]["Tracking"]["Fn::Or"]
    assert "Fn::Condition" not in text
    assert template["Resources"]["ReceiverOpsSubscription"]["Properties"]["Protocol"] == "email"
