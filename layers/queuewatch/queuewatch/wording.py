"""Counting things in English, one way everywhere: "1 runner type", "3 runner types", "1 scale-up"."""

from __future__ import annotations


def plural(count: float, singular: str, many: str | None = None) -> str:
    """`count` and the noun agreeing with it; `many` for nouns that do not take a plain -s."""
    noun = singular if count == 1 else (many or singular + "s")
    return f"{count:g} {noun}"
