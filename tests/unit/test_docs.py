"""What a user reads holds together: the README stays short, its links and the docs' links resolve, and
none of them points at a folder that exists only on this project's build machines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
USER_DOCS = [README, ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (?P<title>.+)$", re.MULTILINE)
README_MOST_LINES = 300
CONTRIBUTOR_DOCS = {ROOT / "CONTRIBUTING.md", ROOT / "docs" / "development.md", ROOT / "docs" / "ARCHITECTURE.md"}
TEST_FILE = re.compile(r"\btests/|\btest_\w+\.py\b|\bconftest\.py\b")
# Words that speak to a reader of an earlier version: what changed belongs in CHANGELOG.md, the docs say what is.
CHANGELOG_TONE = re.compile(
    r"\b(?:is gone|are gone|no longer|any ?more|as before|what changed|used to be|was removed|were removed)\b",
    re.IGNORECASE,
)
NAMED_DOC = re.compile(r"`(?P<path>docs/[\w./-]+\.md)`")


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(found["title"]) for found in HEADING.finditer(path.read_text(encoding="utf-8"))}


def test_readme_is_at_most_300_lines() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= README_MOST_LINES, f"README.md has {lines} lines; the rest belongs under docs/"


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc: Path) -> None:
    broken = []
    for found in LINK.finditer(doc.read_text(encoding="utf-8")):
        target = found["target"]
        if re.match(r"^[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        path = (doc.parent / file_part).resolve() if file_part else doc
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading '#{anchor}' in {path.name}")
    assert not broken, f"{doc.name}: {broken}"


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_link_to_our_build_machines(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert "../shared" not in text and "shared/tools" not in text, (
        f"{doc.name} points at a folder of this project's build machines, which a user does not have"
    )


@pytest.mark.parametrize(
    "doc", [d for d in USER_DOCS if d not in CONTRIBUTOR_DOCS], ids=lambda p: str(p.relative_to(ROOT))
)
def test_user_docs_name_no_test_file(doc: Path) -> None:
    """Which test holds which promise is contributor material: docs/development.md keeps that table."""
    found = [
        f"line {number}: {match.group()}"
        for number, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
        for match in TEST_FILE.finditer(text)
    ]
    assert not found, f"{doc.name} names test files ({found}); say what is tested, and list the test in development.md"


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_describe_what_is_not_what_changed(doc: Path) -> None:
    found = [
        f"line {number}: {match.group()}"
        for number, text in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
        for match in CHANGELOG_TONE.finditer(text)
    ]
    assert not found, f"{doc.name} speaks of an earlier version ({found}); history goes in CHANGELOG.md"


@pytest.mark.parametrize("doc", USER_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_doc_named_in_backticks_exists(doc: Path) -> None:
    named = [found["path"] for found in NAMED_DOC.finditer(doc.read_text(encoding="utf-8"))]
    missing = [path for path in named if not (ROOT / path).exists()]
    assert not missing, f"{doc.name} names docs that do not exist: {missing}"
