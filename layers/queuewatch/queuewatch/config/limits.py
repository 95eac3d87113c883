"""How big a config may be, checked before it is built: its bytes, its nesting, what its aliases
expand to, and its runner types.

Each bound sits well above what a real config needs and well below what would take minutes or
gigabytes (or crash libyaml's recursive composer) before the first error could be reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

MAX_BYTES = 4 * 1024 * 1024
"""A 5,000-runner-type config where each runner type has its own queue, team and metric query
is 1.1 MB in flow style and about 1.7 MB in block style; 4 MiB leaves room over that, and
libyaml composes it in a few seconds."""

MAX_NODES = 500_000
"""YAML nodes once every alias is expanded: about what a file of MAX_BYTES holds written out (the
5,000-runner-type config above is 125,000), so aliases may share a block but not multiply the
document. A "billion laughs" file expands to 10**9 and is refused after counting, in milliseconds."""

MAX_DEPTH = 64
"""Nesting levels; a config needs about 8. The Python that walks and builds the tree recurses
once a level, so this keeps it far from the interpreter's recursion limit."""

MAX_PRESCAN_DEPTH = 1000
"""libyaml composes recursively in C, and a file nested some 50,000 levels deep overflows its stack
(a segfault, not an error). A cheap over-estimate of the nesting from the text keeps it below this."""

MAX_RUNNER_TYPES = 5000
"""One stack is sized and measured for about 5,000 runner types (docs/SCALE_OUT.md: the collector's
tick, the snapshot's size, a page for all of them); a bigger fleet is split across stacks."""

_BRACKET = re.compile(r"[\[\]{}]")
_LEADING_INDICATORS = re.compile(r"^[ \t?:-]*", re.MULTILINE)


def size_message(size: int) -> str:
    return f"found a file of {size:,} bytes, expected at most {MAX_BYTES:,} (4 MiB)"


def text_problem(text: str) -> tuple[str, int | None] | None:
    """Too many bytes, or nested too deep for libyaml to compose safely: the message and its line."""
    size = len(text) if len(text) > MAX_BYTES else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        return (size_message(size), None)
    # Flow nesting: brackets counted as if none were quoted, which over-estimates, never under.
    depth = 0
    for match in _BRACKET.finditer(text):
        depth = depth + 1 if match.group() in "[{" else max(depth - 1, 0)
        if depth > MAX_PRESCAN_DEPTH:
            line = text.count("\n", 0, match.start()) + 1
            return (f"found brackets nested over {MAX_PRESCAN_DEPTH} deep, expected at most {MAX_DEPTH} levels", line)
    # Block nesting: every level moves the content at least one column right, by indentation or '- '.
    for match in _LEADING_INDICATORS.finditer(text):
        if match.end() - match.start() > MAX_PRESCAN_DEPTH:
            line = text.count("\n", 0, match.start()) + 1
            return (
                f"found a line indented over {MAX_PRESCAN_DEPTH} columns, expected at most {MAX_DEPTH} levels",
                line,
            )
    return None


Location = tuple[str | int, ...]


def tree_problem(root: yaml.Node) -> tuple[Location, str, int] | None:
    """Aliases that expand too far or refer to themselves, or nesting too deep: where, what, which line.

    Each distinct node is visited once (an alias shares the anchor's node), and its expanded size
    is memoised, so counting costs the size of the file, never of the expansion.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = {id(root)}
    stack: list[tuple[yaml.Node, Location, Iterator[tuple[Location, yaml.Node]]]] = [(root, (), _children(root, ()))]
    while stack:
        node, path, children = stack[-1]
        step = next(children, None)
        if step is None:
            stack.pop()
            open_nodes.discard(id(node))
            size = 1 + sum(sizes[id(child)] for _, child in _children(node, path))
            if size > MAX_NODES:
                return (
                    path,
                    f"found aliases that expand this to over {MAX_NODES:,} nodes, expected at most {MAX_NODES:,} "
                    "in the whole document: an alias may share a block, not multiply the file",
                    node.start_mark.line + 1,
                )
            sizes[id(node)] = size
            continue
        child_path, child = step
        if id(child) in open_nodes:
            message = "found an alias inside the anchor it refers to, expected no recursive aliases"
            return (child_path, message, child.start_mark.line + 1)
        if id(child) in sizes:
            continue
        if len(stack) >= MAX_DEPTH:
            message = f"found nesting over {MAX_DEPTH} levels deep, expected at most {MAX_DEPTH}"
            return (child_path, message, child.start_mark.line + 1)
        open_nodes.add(id(child))
        stack.append((child, child_path, _children(child, child_path)))
    return None


def fleet_problem(root: yaml.Node) -> tuple[Location, str, int] | None:
    """More runner types listed than one stack is sized for: counted on the tree, before building it."""
    if not isinstance(root, yaml.MappingNode):
        return None
    for key, value in root.value:
        if key.value == "runner_types" and isinstance(value, yaml.SequenceNode) and len(value.value) > MAX_RUNNER_TYPES:
            return (
                ("runner_types",),
                f"found {len(value.value):,} runner types, expected at most {MAX_RUNNER_TYPES:,}: one stack is sized "
                "for that many; split the fleet across stacks (docs/SCALE_OUT.md)",
                key.start_mark.line + 1,
            )
    return None


def _children(node: yaml.Node, path: Location) -> Iterator[tuple[Location, yaml.Node]]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield path, key
            yield (*path, str(key.value)), value
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield (*path, index), item
