"""Fitting text into what consumers show: one line, or a cut with an ellipsis."""

from __future__ import annotations

import re


def one_line(text: str) -> str:
    return re.sub(r"\s*\n\s*", " ", text).strip()


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
