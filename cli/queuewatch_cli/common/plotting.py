"""What the --plot options share: whether matplotlib is there (and how to get it from where this package was
installed), and how a chart says which part of its span the history does not hold."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shlex
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from queuewatch.base.wording import moment
from queuewatch_cli.common.checkout import checkout_root

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOT_EXTRA = "plot"
NOT_HELD = "before the history: not held"
NOT_HELD_SHARE = 0.05  # of the held span: enough of a sliver before it to see that the history starts there


def install_hint() -> str:
    """The command that adds the `plot` extra to this very installation: from a clone, the clone's own extra
    (`pip install 'queuewatch[plot]'` would fetch a PyPI package of that name instead); else the pinned
    requirement the extra names."""
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    root = checkout_root()
    if root is not None:
        return f"{pip} -e {shlex.quote(f'{root}[{PLOT_EXTRA}]')}"
    return f"{pip} {shlex.quote(_pinned() or 'matplotlib')}"


def _pinned() -> str | None:
    try:
        requires = importlib.metadata.requires("queuewatch") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for requirement in requires:
        spec, _, marker = requirement.partition(";")
        if f'extra == "{PLOT_EXTRA}"' in marker:
            return spec.strip()
    return None


def plot_problem(path: str) -> str | None:
    """Why --plot PATH cannot be drawn, before anything is read; None when it can."""
    if importlib.util.find_spec("matplotlib") is None:
        return f"needs matplotlib (the '{PLOT_EXTRA}' extra): {install_hint()}"
    if not Path(path).parent.is_dir():
        return f"the folder {Path(path).parent} does not exist"
    return None


def span_held(axes: Axes, begins: datetime, held_from: datetime | None, ends: datetime, what: str) -> None:
    """Draw `axes` over the data's own span: from `begins`, or, where the history starts later, from just before
    `held_from`, that sliver hatched as not held (never drawn as quiet) and a note under the axis's label saying
    from when it is held. `what` names where the span was meant to begin (`--from 2026-11-14 04:18 UTC`). Call
    it after the axis's label is set."""
    if held_from is None or held_from <= begins:
        axes.set_xlim(begins, ends)  # type: ignore[arg-type]
        return
    margin = max((ends - held_from) * NOT_HELD_SHARE, timedelta(minutes=1))
    left = max(begins, held_from - margin)
    axes.axvspan(left, held_from, facecolor="none", edgecolor="grey", hatch="///", linewidth=0, label=NOT_HELD)  # type: ignore[arg-type]
    axes.set_xlim(left, ends)  # type: ignore[arg-type]
    # Under the axis, where no legend or line can cover it.
    note = f"the history holds data from {moment(held_from)}, not from {what}:\nearlier is not held, not quiet"
    axes.set_xlabel(f"{axes.get_xlabel()}\n{note}".strip())


def inside_frame(figure: Figure, axes: Axes) -> None:
    """Each label drawn in the data stays inside the axes: one that would cross the right (or left) edge is
    turned to end (or begin) at its point instead, so the last span's label is never clipped."""
    figure.canvas.draw()
    frame = axes.get_window_extent()
    for text in axes.texts:
        extent = text.get_window_extent()
        if extent.x1 > frame.x1:
            text.set_horizontalalignment("right")
        elif extent.x0 < frame.x0:
            text.set_horizontalalignment("left")
