"""`queuewatch capacity --plot`: queue time against the pool's size N, each line and the chosen N labelled."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from queuewatch.base.durations import format_duration
from queuewatch.model.forecast.model import Target
from queuewatch_cli.commands.capacity.analysis import Capacity
from queuewatch_cli.common.plotting import inside_frame

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_PLOTTED = 12
# The queue time axis: a few durations people read at a glance, from 0 to days, on a scale that is linear
# below a minute and logarithmic above (symlog), labelled as durations rather than powers of ten.
TICKS_MINUTES = (0, 1, 5, 15, 30, 60, 120, 240, 480, 1440, 2880, 10080)


def capacity_figure(answers: Sequence[Capacity], target: Target) -> Figure:
    """Queue time at the target's percentile (solid) and the median (dashed) against N, one colour per runner
    type; the N each needs (dotted, labelled with its value) and the target (grey, dashed), each in the legend."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    figure, axes = plt.subplots(figsize=(10, 5), dpi=100)
    highest = target.seconds / 60
    for a in [a for a in answers if a.curve][:MAX_PLOTTED]:
        sizes = [r.runners for r in a.curve]
        at_target = [r.target_value / 60 for r in a.curve]
        medians = [r.p50 / 60 for r in a.curve]
        highest = max(highest, *at_target, *medians)
        (line,) = axes.plot(sizes, at_target, label=f"{a.name}: p{target.percentile:g}")
        colour = line.get_color()
        axes.plot(sizes, medians, linestyle="--", color=colour, linewidth=0.8, label=f"{a.name}: median")
        if a.sizing.runners is not None:
            chosen = a.sizing.runners
            axes.axvline(chosen, color=colour, linestyle=":", linewidth=0.8, label=f"{a.name}: N = {chosen}")
            axes.annotate(
                f"N = {chosen}", (chosen, 0), xytext=(3, 3), textcoords="offset points", fontsize=7, color=colour
            )
    axes.axhline(target.seconds / 60, color="grey", linestyle="--", linewidth=0.8, label=f"target {target}")
    axes.set_xlabel("runners (N)")
    axes.set_ylabel("queue time")
    axes.set_yscale("symlog", linthresh=1.0, linscale=0.5)  # minutes to days on one axis, zero included
    ticks = [t for t in TICKS_MINUTES if t <= highest * 1.5] or [0, 1]
    axes.set_ylim(0, max(ticks[-1], highest) * 1.1)
    axes.yaxis.set_major_locator(FixedLocator(ticks))
    axes.yaxis.set_minor_locator(NullLocator())
    axes.yaxis.set_major_formatter(FuncFormatter(lambda minutes, _: format_duration(minutes * 60) if minutes else "0"))
    axes.set_title("queuewatch capacity: queue time against the pool's size")
    axes.grid(alpha=0.3)
    axes.legend(loc="best", fontsize=8)
    figure.tight_layout()
    inside_frame(figure, axes)  # an N at the axis's right end keeps its label
    return figure


def draw(answers: Sequence[Capacity], target: Target, path: str) -> None:
    import matplotlib.pyplot as plt

    figure = capacity_figure(answers, target)
    figure.savefig(path)
    plt.close(figure)
