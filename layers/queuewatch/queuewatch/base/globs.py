"""Runner type globs (`match`, `exclude`, a silence's matchers): which of them can match a name at all.

Runner type names are letters, digits, '.', '_' and '-'. A glob is matched with fnmatch: '*', '?'
and '[...]' are wildcards and every other character stands for itself, so a pattern written as a
regular expression (`linux\\..*`, `^gpu$`, `(a|b)`) names characters no runner type has and
silently matches nothing. Such a pattern is refused instead.
"""

from __future__ import annotations

import fnmatch
import string

NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits + "._-")
IDENTITY_CHARACTERS = NAME_CHARACTERS | {"@"}
"""A pattern may also name one place's copy of a key watched in several: `linux-x64@eu-west-1`."""
HEALTH_INSTANCE_CHARACTERS = IDENTITY_CHARACTERS | {":"}
"""queuewatch's own page also names a region's queue listing, `discovery:<region>`."""
_REGEX_HINTS = frozenset("\\^$+()|{}")


def glob_problem(pattern: str, alphabet: frozenset[str] = IDENTITY_CHARACTERS) -> str | None:
    """Why `pattern` can match no name spelt from `alphabet` (a runner type's), or None when some name can."""
    if not pattern:
        return "found an empty pattern, expected a runner type name or glob such as 'linux.*'"
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "[":
            end = _class_end(pattern, index)
            if end is None:
                return f"found {pattern!r}: '[' opens a set that never closes; expected '[...]' or no '['"
            if not any(fnmatch.fnmatchcase(c, pattern[index : end + 1]) for c in alphabet):
                return f"found {pattern!r}: the set {pattern[index : end + 1]!r} admits no character a runner type has"
            index = end + 1
            continue
        if char not in alphabet and char not in "*?":
            return _bad_character(pattern, char)
        index += 1
    return None


def _class_end(pattern: str, start: int) -> int | None:
    """The index of the ']' closing the set opened at `start`, as fnmatch reads it ('[!]...]', '[]...]')."""
    index = start + 1
    if index < len(pattern) and pattern[index] == "!":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    end = pattern.find("]", index)
    return end if end >= 0 else None


def _bad_character(pattern: str, char: str) -> str:
    hint = (
        "; it looks like a regular expression, and patterns are globs: '*' for any run of characters, "
        "'?' for one, '[...]' for a set (so 'linux\\..*' is 'linux.*')"
        if char in _REGEX_HINTS or ".*" in pattern
        else ""
    )
    return (
        f"found {pattern!r}, which can match no runner type: {char!r} is in no runner type name "
        f"(letters, digits, '.', '_' and '-', and '@' before a region){hint}"
    )
