"""What a replay found, in words: every page, pages per week, time firing, flaps, and two configs compared."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.base.durations import format_duration
from queuewatch.base.wording import moment
from queuewatch_cli.commands.backtest.replay import Episode

FLAP_WINDOW = timedelta(minutes=30)
MAX_NAMED = 8  # runner types named per line; the rest are counted


@dataclass(frozen=True)
class Summary:
    episodes: int
    notifications: int
    pages_per_week: float
    firing_seconds: float
    flaps: list[tuple[Episode, Episode]]  # (resolved, paged again within 30 minutes)


def summarize(episodes: Sequence[Episode], start: datetime, end: datetime) -> Summary:
    weeks = max((end - start).total_seconds(), 60.0) / timedelta(weeks=1).total_seconds()
    flaps: list[tuple[Episode, Episode]] = []
    by_group: dict[tuple[str, str], list[Episode]] = {}
    for episode in episodes:
        by_group.setdefault((episode.rule, episode.group), []).append(episode)
    for series in by_group.values():
        for before, after in itertools.pairwise(series):
            if before.resolved_at is not None and after.started_at - before.resolved_at <= FLAP_WINDOW:
                flaps.append((before, after))
    return Summary(
        episodes=len(episodes),
        notifications=sum(e.notifications for e in episodes),
        pages_per_week=len(episodes) / weeks,
        firing_seconds=sum(e.firing_seconds(end) for e in episodes),
        flaps=flaps,
    )


def names(runner_types: set[str] | Sequence[str]) -> str:
    ordered = sorted(runner_types)
    shown = ", ".join(ordered[:MAX_NAMED])
    return shown + (f" and {len(ordered) - MAX_NAMED} more" if len(ordered) > MAX_NAMED else "")


def _when(at: datetime | None) -> str:
    return moment(at) if at else "still firing"


def _peak(episode: Episode) -> str:
    size = "?" if episode.peak_queue_size is None else f"{episode.peak_queue_size:g}"
    age = "?" if episode.peak_queue_time is None else format_duration(episode.peak_queue_time)
    return f"peak queue size {size}, peak queue time {age}"


def episode_line(episode: Episode) -> str:
    delay = format_duration(episode.breach_to_page_seconds)
    return (
        f"{_when(episode.started_at)} -> {_when(episode.resolved_at)}  {episode.priority}  "
        f"{episode.rule}/{episode.group}"
        f"  {len(episode.runner_types)} runner type(s): {names(episode.runner_types)}; {_peak(episode)}; "
        f"first breach to page {delay}; {episode.notifications} notification(s)"
    )


def report(label: str, episodes: Sequence[Episode], start: datetime, end: datetime) -> list[str]:
    summary = summarize(episodes, start, end)
    lines = [f"{label}: {summary.episodes} page(s) from {moment(start)} to {moment(end)}"]
    lines += [f"  {episode_line(e)}" for e in episodes]
    # A rate scaled up from a shorter range says more about the range than about a week: not given.
    weekly = f"pages per week {summary.pages_per_week:.1f}; " if end - start >= timedelta(weeks=1) else ""
    lines.append(
        f"  {weekly}notifications {summary.notifications} "
        f"(pages, updates, repeats and resolves); time firing {format_duration(summary.firing_seconds)}"
    )
    if summary.flaps:
        lines.append(f"  flaps (resolved, then paged again within {format_duration(FLAP_WINDOW.total_seconds())}):")
        for before, after in summary.flaps:
            gap = format_duration(
                (after.started_at - before.started_at).total_seconds()
                if before.resolved_at is None
                else (after.started_at - before.resolved_at).total_seconds()
            )
            lines.append(
                f"    {before.rule}/{before.group}: resolved {_when(before.resolved_at)}, paged again {gap} later"
            )
    else:
        lines.append("  flaps: none")
    return lines


def _overlaps(a: Episode, b: Episode, end: datetime) -> bool:
    return (
        a.started_at <= (b.resolved_at or end)
        and b.started_at <= (a.resolved_at or end)
        and bool(a.runner_types & b.runner_types)
    )


@dataclass(frozen=True)
class Comparison:
    only_a: list[Episode]
    only_b: list[Episode]
    shifted: list[tuple[Episode, Episode]]  # the same alert, paged at a different minute by B
    same: list[tuple[Episode, Episode]]


def compare(a: Sequence[Episode], b: Sequence[Episode], end: datetime) -> Comparison:
    """Pair each of A's pages with B's first page of overlapping time and shared runner types."""
    unpaired = list(b)
    only_a: list[Episode] = []
    shifted: list[tuple[Episode, Episode]] = []
    same: list[tuple[Episode, Episode]] = []
    for episode in a:
        match = next((other for other in unpaired if _overlaps(episode, other, end)), None)
        if match is None:
            only_a.append(episode)
            continue
        unpaired.remove(match)
        (same if match.started_at == episode.started_at else shifted).append((episode, match))
    return Comparison(only_a, unpaired, shifted, same)


def comparison_lines(result: Comparison, label_a: str, label_b: str) -> list[str]:
    lines = [f"compare: A = {label_a}, B = {label_b}"]
    lines.append(f"  pages only A sends: {len(result.only_a)}")
    lines += [f"    {episode_line(e)}" for e in result.only_a]
    lines.append(f"  pages only B sends: {len(result.only_b)}")
    lines += [f"    {episode_line(e)}" for e in result.only_b]
    extra = set().union(*(e.runner_types for e in result.only_b)) if result.only_b else set()
    paged_by_a = (
        set().union(*(e.runner_types for e, _ in [*result.same, *result.shifted]))
        if result.same or result.shifted
        else set()
    )
    paged_by_a |= set().union(*(e.runner_types for e in result.only_a)) if result.only_a else set()
    never_a = extra - paged_by_a
    if never_a:
        lines.append(f"  B pages {len(never_a)} runner type(s) A never pages: {names(never_a)}")
    earlier = [(x, y) for x, y in result.shifted if y.started_at < x.started_at]
    later = [(x, y) for x, y in result.shifted if y.started_at > x.started_at]
    for word, pairs in (("earlier", earlier), ("later", later)):
        lines.append(f"  pages B sends {word} than A: {len(pairs)}")
        for x, y in pairs:
            shift = format_duration(abs((y.started_at - x.started_at).total_seconds()))
            when = f"A {_when(x.started_at)}, B {_when(y.started_at)} ({shift} {word})"
            lines.append(f"    {x.rule}/{x.group} {names(x.runner_types)}: {when}")
    lines.append(f"  pages both send at the same minute: {len(result.same)}")
    return lines
