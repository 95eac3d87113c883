"""Pins kept in two places agree: the layer's requirements with pyproject.toml, pre-commit's ruff with the dev pin."""

import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
LAYER_REQUIREMENTS = ROOT / "layers" / "queuewatch" / "requirements.txt"
# The Lambda runtime brings boto3; the layer does not ship its own.
RUNTIME_PROVIDED = {"boto3"}


def requirement_lines(path: Path) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def pins(requirements: list[str], where: str) -> dict[str, tuple[frozenset[str], str]]:
    """Each package's extras and exact pin, keyed by its normalised name; anything but `==` is refused."""
    pinned: dict[str, tuple[frozenset[str], str]] = {}
    for text in requirements:
        requirement = Requirement(text)
        specifiers = list(requirement.specifier)
        assert len(specifiers) == 1 and specifiers[0].operator == "==", f"{where}: {text!r} is not pinned with =="
        name = requirement.name.lower().replace("_", "-")
        pinned[name] = (frozenset(requirement.extras), specifiers[0].version)
    return pinned


def layer_and_project_pins(
    layer_requirements: list[str], project_dependencies: list[str]
) -> tuple[dict[str, tuple[frozenset[str], str]], dict[str, tuple[frozenset[str], str]]]:
    layer = pins(layer_requirements, LAYER_REQUIREMENTS.name)
    project = {
        name: pin
        for name, pin in pins(project_dependencies, "pyproject.toml [project] dependencies").items()
        if name not in RUNTIME_PROVIDED
    }
    return layer, project


def test_layer_requirements_match_pyproject_dependencies() -> None:
    project_dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    layer, project = layer_and_project_pins(requirement_lines(LAYER_REQUIREMENTS), project_dependencies)
    assert layer == project, (
        f"{LAYER_REQUIREMENTS.relative_to(ROOT)} and pyproject.toml's dependencies disagree "
        f"(boto3 aside, which the runtime brings): only in the layer {sorted(layer.keys() - project.keys())}, "
        f"only in pyproject {sorted(project.keys() - layer.keys())}, "
        f"differing {sorted(n for n in layer.keys() & project.keys() if layer[n] != project[n])}"
    )


@pytest.mark.parametrize(
    ("layer_line", "project_line"),
    [
        ("pydantic==2.14.2", "pydantic==2.14.3"),  # another version
        ("aws-lambda-powertools==3.37.0", "aws-lambda-powertools[parser]==3.37.0"),  # an extra lost
    ],
)
def test_a_disagreement_is_seen(layer_line: str, project_line: str) -> None:
    layer, project = layer_and_project_pins([layer_line], [project_line, "boto3==1.44.5"])
    assert layer != project


def test_a_missing_package_is_seen() -> None:
    layer, project = layer_and_project_pins(["pydantic==2.14.3"], ["pydantic==2.14.3", "tzdata==2026.6"])
    assert layer != project


def test_an_unpinned_requirement_is_refused() -> None:
    with pytest.raises(AssertionError, match="not pinned"):
        pins(["pydantic>=2"], "requirements.txt")


def test_pre_commit_runs_the_pinned_ruff() -> None:
    dev = pins(requirement_lines(ROOT / "requirements-dev.txt"), "requirements-dev.txt")
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    (ruff_repo,) = [repo for repo in config["repos"] if repo["repo"].endswith("/ruff-pre-commit")]
    assert ruff_repo["rev"] == f"v{dev['ruff'][1]}", "pre-commit's ruff rev and requirements-dev.txt's ruff pin differ"
    assert {hook["id"] for hook in ruff_repo["hooks"]} == {"ruff-check", "ruff-format"}
