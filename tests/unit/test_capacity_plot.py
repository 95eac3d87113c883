"""`capacity --plot`: every line and the chosen N labelled, and a queue time axis in durations."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from queuewatch.model.forecast.model import PoolResult, Sizing, Target
from queuewatch_cli.commands.capacity.analysis import Capacity
from queuewatch_cli.commands.capacity.plot import capacity_figure


def answer(name: str, chosen: int, waits_minutes: list[float]) -> Capacity:
    curve = [
        PoolResult(runners, p50=wait * 30, p90=wait * 60, p99=wait * 60, worst=wait * 60, target_value=wait * 60)
        for runners, wait in enumerate(waits_minutes, start=1)
    ]
    sizing = Sizing(chosen, curve[chosen - 1], len(curve), tuple(curve))
    return cast(Capacity, SimpleNamespace(name=name, curve=curve, sizing=sizing))


def test_the_chosen_n_and_every_dashed_line_are_labelled_and_the_axis_reads_in_durations() -> None:
    target = Target(90, 300, strict=True)
    figure = capacity_figure([answer("linux.2xlarge", 3, [600, 90, 4, 0.5, 0])], target)
    [axes] = figure.axes
    legend = axes.get_legend()
    assert legend is not None
    labels = [text.get_text() for text in legend.get_texts()]
    assert labels == [
        "linux.2xlarge: p90",
        "linux.2xlarge: median",
        "linux.2xlarge: N = 3",
        "target p90<5m",
    ]
    assert "N = 3" in [text.get_text() for text in axes.texts]
    for line in axes.lines:  # no line left unnamed in the legend
        assert not str(line.get_label()).startswith("_"), line.get_linestyle()
    figure.canvas.draw()
    ticks = [label.get_text() for label in axes.get_yticklabels()]
    assert ticks[0] == "0" and "5m" in ticks and "1h" in ticks and "10h" not in ticks
    assert not [tick for tick in ticks if "10^" in tick or "mathdefault" in tick]
    assert axes.get_ylim()[0] == 0


def test_an_n_at_the_right_end_of_the_axis_keeps_its_label_inside_the_frame() -> None:
    figure = capacity_figure([answer("linux.2xlarge", 5, [600, 90, 40, 20, 0.5])], Target(90, 300, strict=True))
    [axes] = figure.axes
    figure.canvas.draw()
    frame = axes.get_window_extent()
    [label] = [text for text in axes.texts if text.get_text() == "N = 5"]
    assert label.get_window_extent().x1 <= frame.x1 + 1
