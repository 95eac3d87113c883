"""The clone this CLI runs from, if it runs from one: the nearest folder above the package whose pyproject.toml
is queuewatch's. The handler harness, the demo's files and the plot extra's install hint all need it; found
here once, so no module counts its own depth in the tree."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

PROJECT = "queuewatch"  # pyproject.toml's [project] name
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # queuewatch_cli/


@cache
def checkout_root(package: Path = PACKAGE_DIR) -> Path | None:
    """The clone's root, or None when installed (site-packages sits under no pyproject.toml of ours: a project
    that keeps its virtual environment inside itself has a pyproject.toml above, but not queuewatch's)."""
    for folder in package.parents:
        pyproject = folder / "pyproject.toml"
        if not pyproject.is_file():
            continue
        try:
            name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if name == PROJECT:
            return folder
    return None
