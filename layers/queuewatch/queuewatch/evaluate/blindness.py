"""Blindness as a finding, pure: where one of two signals that check each other cannot see, the monitor says so.

- A cross-checked signal (the tracked jobs, or the autoscaler's queue beside them) that could not be read is
  named on the runner type's health instance, even while the other one pages (`blind_signals`).
- Scale-up requests past a rule's thresholds while the jobs table holds no queued job for the runner type:
  the jobs' events are not arriving. The rule pages on the queue (rules.judge) and the monitor's
  `jobs:untracked` instance names each such runner type with the likely causes and their fixes.
"""

from __future__ import annotations

from collections.abc import Iterable

from queuewatch.durations import format_duration
from queuewatch.rules import Verdict
from queuewatch.signals import SIGNAL_ORIGIN, SignalName
from queuewatch.snapshot import RunnerTypeSnapshot
from queuewatch.triage import UNTRACKED_CAUSES
from queuewatch.wording import plural

LISTED = 5  # runner types the finding names; the rest are counted


def blind_signals(runner_type: RunnerTypeSnapshot) -> dict[str, str]:
    """The cross-checked signals that could not be read this tick, with why, as the monitor names them."""
    return {
        name.value: f"{SIGNAL_ORIGIN[name]} blind: {reading.error}"
        for name, reading in sorted(runner_type.signals.items())
        if name in SIGNAL_ORIGIN and reading.error is not None
    }


def untracked(runner_type: RunnerTypeSnapshot, verdicts: Iterable[Verdict]) -> bool:
    """A rule breaches on the autoscaler's queue alone while the jobs, read, hold none queued."""
    if runner_type.value(SignalName.JOBS_QUEUED) != 0:
        return False
    return any(
        v.breached and v.breached_signals and all(v.shown_by.get(s) == "queue" for s in v.breached_signals)
        for v in verdicts
    )


def untracked_text(runner_types: list[RunnerTypeSnapshot]) -> str:
    """linux-x64: 3 scale-up requests, the oldest 1h, and no job tracked queued; ... Likely: ..."""
    listed = []
    for found in runner_types[:LISTED]:
        requests = found.value(SignalName.SCALE_UP_REQUESTS) or 0
        age = found.value(SignalName.SCALE_UP_REQUEST_AGE)
        oldest = f", the oldest {format_duration(age)}" if age else ""
        listed.append(f"{found.name}: {plural(requests, 'scale-up request')}{oldest}, and no job tracked queued")
    more = f" and {len(runner_types) - LISTED} more runner types" if len(runner_types) > LISTED else ""
    return "; ".join(listed) + more + f". The jobs' events are not arriving. Likely: {UNTRACKED_CAUSES}"
