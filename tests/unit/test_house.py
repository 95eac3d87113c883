"""The house rules the layout keeps, checked on the source: what the core may import, what the layer ships."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import load_template

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "queuewatch" / "queuewatch"
CORE = [
    "signals",
    "snapshot",
    "rules",
    "alert_state",
    "silences",
    "triage",
    "alert",
    "frozen",
    "errors",
    "durations",
    "globs",
    "subjects",
    "config.schema",
    "evaluate.plan",
    "track.events",
    "track.routing",
    "track.jobs",
    "jobs",
    "track.signature",
    "metric_names",
    "runner_names",
]
"""Core types and pure logic: they never reach AWS or YAML, whatever they import in turn."""
FORBIDDEN = ("boto3", "botocore", "yaml", "queuewatch.adapters", "moto", "queuewatch_cli")


def module_path(name: str) -> Path:
    relative = Path(*name.split("."))
    package = PACKAGE / relative / "__init__.py"
    return package if package.exists() else PACKAGE / relative.with_suffix(".py")


def imports_of(name: str) -> set[str]:
    """Every module `name` imports, as dotted names; `from queuewatch.x import y` counts x, and x.y if a module."""
    path = module_path(name)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                if submodule.startswith("queuewatch.") and module_path(submodule.removeprefix("queuewatch.")).exists():
                    found.add(submodule)
    return found


def closure(name: str) -> dict[str, str]:
    """Each module reachable from `name` (package __init__ files included, as Python runs them) -> who imports it."""
    seen: dict[str, str] = {f"queuewatch.{name}": ""}
    todo = [name]
    while todo:
        current = todo.pop()
        parents = current.split(".")[:-1]
        found = imports_of(current) | {f"queuewatch.{'.'.join(parents[: n + 1])}" for n in range(len(parents))}
        for imported in found:
            if imported in seen:
                continue
            seen[imported] = f"queuewatch.{current}"
            if imported.startswith("queuewatch.") and module_path(imported.removeprefix("queuewatch.")).exists():
                todo.append(imported.removeprefix("queuewatch."))
    return seen


@pytest.mark.parametrize("name", CORE)
def test_the_core_reaches_no_aws_yaml_or_adapter(name: str) -> None:
    reached = closure(name)
    bad = {m: via for m, via in reached.items() if any(m == f or m.startswith(f"{f}.") for f in FORBIDDEN)}
    assert bad == {}, f"queuewatch.{name} reaches {bad} (module: imported by)"


def test_the_import_check_sees_an_import_through_a_package() -> None:
    # config/load.py imports yaml: a module that imports it, even through the package, must be caught.
    assert "yaml" in closure("config.load")
    assert "queuewatch.adapters.state_table" in closure("evaluate.stage")


STAGES = ("queuewatch.collect", "queuewatch.evaluate", "queuewatch.track", "queuewatch.notifications")


@pytest.mark.parametrize("name", sorted(p.stem for p in (PACKAGE / "adapters").glob("*.py") if p.stem != "__init__"))
def test_an_adapter_reaches_no_stage(name: str) -> None:
    # Adapters map the core's records to AWS and back: the stages depend on them, never the other way round.
    reached = closure(f"adapters.{name}")
    upward = {m: via for m, via in reached.items() if any(m == s or m.startswith(f"{s}.") for s in STAGES)}
    assert upward == {}, f"queuewatch.adapters.{name} reaches {upward} (module: imported by)"


def test_the_layer_holds_the_runtime_alone() -> None:
    template = load_template()
    content = PACKAGE.parents[2] / template["Resources"]["QueuewatchLayer"]["Properties"]["ContentUri"]
    assert sorted(p.name for p in content.iterdir() if not p.name.startswith((".", "__"))) == [
        "queuewatch",
        "requirements.txt",
    ]
    requirements = (content / "requirements.txt").read_text(encoding="utf-8")
    assert "moto" not in requirements and "matplotlib" not in requirements
    names = {p.stem for p in PACKAGE.rglob("*.py")}
    assert not names & {"cli", "demo", "localrun", "seed", "main"}
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        imported = imports_of(".".join(path.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__"))
        assert not {m for m in imported if m.split(".")[0] in ("moto", "queuewatch_cli", "pytest")}, path
        assert "REPO_ROOT" not in text and "parents[" not in text, f"{path} assumes a checkout"
