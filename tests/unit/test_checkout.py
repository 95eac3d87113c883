"""The clone the CLI runs from is found by its pyproject.toml's name, not by counting folders: a virtual
environment kept inside some other project is not mistaken for a clone."""

from pathlib import Path

from queuewatch_cli.common.checkout import checkout_root
from queuewatch_cli.devkit.handlers import EVENTS_DIR, REPO_ROOT


def project(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(f'[project]\nname = "{name}"\n', encoding="utf-8")
    return folder


def test_a_clone_is_found_from_its_package_and_an_installed_copy_is_none(tmp_path: Path) -> None:
    clone = project(tmp_path / "clone", "queuewatch")
    assert checkout_root(clone / "cli" / "queuewatch_cli") == clone
    other = project(tmp_path / "app", "someone-elses-app")
    installed = other / ".venv" / "lib" / "python3.13" / "site-packages" / "queuewatch_cli"
    assert checkout_root(installed) is None
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "pyproject.toml").write_bytes(b"\xff[project")  # neither UTF-8 nor TOML: skipped
    assert checkout_root(tmp_path / "broken" / "x" / "queuewatch_cli") is None


def test_this_clone_holds_the_events_the_handler_harness_reads() -> None:
    assert checkout_root() == REPO_ROOT and (REPO_ROOT / "template.yaml").is_file()
    assert (EVENTS_DIR / "collect_scheduled.json").is_file()
