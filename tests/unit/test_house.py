"""The house rules the layout keeps, checked on the source: what the core may import, what the layer ships."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import load_template

PACKAGE = Path(__file__).resolve().parents[2] / "layers" / "queuewatch" / "queuewatch"
FLOORS: tuple[tuple[str, ...], ...] = (
    ("base",),  # imports nothing of queuewatch
    ("model",),  # the fleet's types and the rules' pure logic
    ("config",),  # the config file: its schema, checks and loader
    ("alerting",),  # silences, alert state, triage, the alert, each SLO's reading and summary
    ("adapters",),  # the only code that calls AWS
    ("runtime",),  # settings, the schedule's event, how a Snapshot travels: what the handlers import
    ("notifications",),  # the bodies per protocol
    ("collect", "evaluate", "track", "digest"),  # the stages
)
"""The layer's folders, bottom up: a module imports its own floor or those below it, never one above."""
PURE_FLOORS = ("base", "model", "alerting")
"""Every module under these folders is pure, whoever adds it: no boto3, YAML or adapter, whatever it imports in turn."""
PURE_IN_STAGES = [
    "config.schema",
    "evaluate.plan",
    "evaluate.context",
    "evaluate.steps",
    "evaluate.groups",
    "evaluate.holds",
    "evaluate.holds.inputs",
    "evaluate.holds.silence",
    "evaluate.holds.window",
    "evaluate.holds.github",
    "evaluate.holds.inhibit",
    "evaluate.probes.discovery",
    "evaluate.probes.slos",
    "evaluate.probes.sources",
    "evaluate.probes.unjudged",
    "evaluate.probes.unserved",
    "evaluate.probes.untracked",
    "track.events",
    "track.routing",
    "track.jobs",
    "track.signature",
    "track.matching",
    "evaluate.forecasts",
]
"""The pure parts of the config and the stages, which the planner, the backtest and the routing share."""


def modules_under(folder: str) -> list[str]:
    """Every module under a folder of the layer, as a dotted name below queuewatch (a package by its own name)."""
    return sorted(
        ".".join(p.relative_to(PACKAGE).with_suffix("").parts).removesuffix(".__init__")
        for p in (PACKAGE / folder).rglob("*.py")
    )


CORE = [m for floor in PURE_FLOORS for m in modules_under(floor)] + PURE_IN_STAGES
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
    assert "queuewatch.adapters.state_table.alerts" in closure("evaluate.stage")
    assert "boto3" not in closure("alerting.slo_summary")


STAGES = ("queuewatch.collect", "queuewatch.evaluate", "queuewatch.track", "queuewatch.notifications")


@pytest.mark.parametrize("name", modules_under("adapters"))
def test_an_adapter_reaches_no_stage(name: str) -> None:
    # Adapters map the core's records to AWS and back: the stages depend on them, never the other way round.
    reached = closure(name)
    upward = {m: via for m, via in reached.items() if any(m == s or m.startswith(f"{s}.") for s in STAGES)}
    assert upward == {}, f"queuewatch.{name} reaches {upward} (module: imported by)"


def floor_of(module: str) -> int | None:
    """The floor of a dotted name below queuewatch (its first folder), or None for the package itself."""
    folder = module.split(".", maxsplit=1)[0]
    return next((n for n, floor in enumerate(FLOORS) if folder in floor), None)


LAYER = [m for m in modules_under(".") if m != "__init__"]


def test_the_layers_root_holds_only_floors() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"modules at the layer's root: {loose}; put each in the folder of its floor (FLOORS)"
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and any(p.rglob("*.py")))
    unplaced = [f for f in folders if floor_of(f) is None]
    assert unplaced == [], f"folders on no floor: {unplaced}; name each in FLOORS"
    assert not [m for m in LAYER if not (PACKAGE / m.split(".")[0]).is_dir()]


@pytest.mark.parametrize("name", LAYER)
def test_a_module_imports_no_floor_above_its_own(name: str) -> None:
    own = floor_of(name)
    assert own is not None, f"queuewatch.{name} is on no floor"
    above = sorted(
        m
        for m in imports_of(name)
        if m.startswith("queuewatch.")
        and (floor := floor_of(m.removeprefix("queuewatch."))) is not None
        and floor > own
    )
    assert above == [], f"queuewatch.{name} (floor {FLOORS[own]}) imports a floor above it: {above}"


def import_graph() -> dict[str, set[str]]:
    """Each module of the layer -> the layer's modules it imports when it is imported (not `if TYPE_CHECKING:`)."""
    graph: dict[str, set[str]] = {}
    for name in LAYER:
        tree = ast.parse(module_path(name).read_text(encoding="utf-8"))
        for block in ast.walk(tree):
            if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING":
                block.body = []
        found: set[str] = set()
        for node in tree.body:  # what runs at import; an import inside a function runs later
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                candidates = (node.module, *(f"{node.module}.{a.name}" for a in node.names))
                found |= {c.removeprefix("queuewatch.") for c in candidates if c.removeprefix("queuewatch.") in LAYER}
            elif isinstance(node, ast.Import):
                found |= {
                    a.name.removeprefix("queuewatch.")
                    for a in node.names
                    if a.name.removeprefix("queuewatch.") in LAYER
                }
        graph[name] = found - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[str]:
    """Every import circle of a graph, each once as the path from its first member back to it."""
    found = []
    for start in sorted(graph):
        todo: list[tuple[str, tuple[str, ...]]] = [(start, (start,))]
        seen = {start}
        while todo:
            current, path = todo.pop()
            for imported in sorted(graph[current]):
                if imported == start:
                    found.append(" -> ".join((*path, start)))
                elif imported not in seen:
                    seen.add(imported)
                    todo.append((imported, (*path, imported)))
    return found


def test_the_layer_has_no_import_circle() -> None:
    graph = import_graph()
    assert "model.snapshot" in graph["alerting.alert"]  # the walk sees the modules
    assert circles(graph) == []


def test_the_checks_see_a_module_out_of_place() -> None:
    assert floor_of("model.snapshot") < floor_of("runtime.wire") < floor_of("evaluate.stage")  # type: ignore[operator]
    assert circles({"a": {"b"}, "b": {"a"}, "c": set()}) == ["a -> b -> a", "b -> a -> b"]
    assert "base.errors" in CORE and "alerting.alert" in CORE and "model.slo" in CORE


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


CLI = PACKAGE.parents[2] / "cli" / "queuewatch_cli"


def cli_imports() -> dict[str, set[str]]:
    """Each CLI module -> the CLI modules it imports when it runs, at the top or inside a function alike."""
    modules = {
        ".".join(("queuewatch_cli", *p.relative_to(CLI).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in CLI.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for block in ast.walk(tree):  # `if TYPE_CHECKING:` imports never run: annotations only
            if isinstance(block, ast.If) and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING":
                block.body = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found |= {m for m in (node.module, *(f"{node.module}.{a.name}" for a in node.names)) if m in modules}
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name in modules}
        graph[name] = found - {name}
    return graph


def test_the_command_line_has_no_import_circle() -> None:
    graph = cli_imports()
    assert "queuewatch_cli.main" in graph and graph["queuewatch_cli.commands.demo.run"]  # the walk sees the modules
    assert circles(graph) == []


def command_of(module: str) -> str | None:
    """The command package a CLI module belongs to (`queuewatch_cli.commands.<command>...`), or None."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "commands" else None


TOUR = "demo"
"""The demo runs the other commands as a person types them: the one command that imports others."""


def test_a_command_imports_no_other_command_what_they_share_is_in_common_or_devkit() -> None:
    graph = cli_imports()
    assert {command_of(m) for m in graph} >= {"backtest", "capacity", "status", "history", TOUR}  # the walk sees them
    crossing = sorted(
        f"{module} -> {imported}"
        for module, imports in graph.items()
        if (own := command_of(module)) is not None and own != TOUR
        for imported in imports
        if command_of(imported) not in (None, own)
    )
    assert crossing == [], "commands share through common/ or devkit/, never each other"
    toured = sorted(
        f"{module} -> {imported}"
        for module, imports in graph.items()
        if command_of(module) != TOUR and module != "queuewatch_cli.registry"
        for imported in imports
        if command_of(imported) == TOUR
    )
    assert toured == [], "only the registry imports the demo"


def test_common_and_devkit_import_no_command_and_the_clis_root_holds_its_entry_points() -> None:
    graph = cli_imports()
    below = {m: i for m, i in graph.items() if m.split(".")[1:2] in (["common"], ["devkit"])}
    assert "queuewatch_cli.common.stacks" in below and "queuewatch_cli.devkit.handlers" in below
    upward = sorted(f"{m} -> {i}" for m, imports in below.items() for i in imports if i.split(".")[1:2] == ["commands"])
    assert upward == []
    loose = sorted(p.name for p in CLI.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "main.py", "registry.py"], (
        "a module belongs in commands/, common/ or devkit/"
    )


def test_command_of_names_the_command_a_module_belongs_to() -> None:
    assert command_of("queuewatch_cli.commands.backtest.run") == "backtest"
    assert command_of("queuewatch_cli.common.times") is None and command_of("queuewatch_cli.main") is None


@pytest.mark.parametrize(("stage", "sibling"), [("collect", "track"), ("track", "collect")])
def test_a_stage_reaches_no_sibling_stage_what_both_need_is_in_the_core(stage: str, sibling: str) -> None:
    for path in (PACKAGE / stage).glob("*.py"):
        imported = imports_of(f"{stage}.{path.stem}" if path.stem != "__init__" else stage)
        assert not [m for m in imported if m.startswith(f"queuewatch.{sibling}")], f"{stage}/{path.name}"
