"""Judge one runner type against one rule: breached, clear, or cannot tell."""

from __future__ import annotations

from dataclasses import dataclass, field

from queuewatch.config import Rule, SignalName
from queuewatch.snapshot import RunnerTypeSnapshot


@dataclass(frozen=True)
class Verdict:
    """breached is None when missing data leaves the answer open; the state then holds."""

    breached: bool | None
    breached_signals: tuple[str, ...] = ()
    queue_size: float | None = None
    queue_time: float | None = None
    missing: dict[str, str] = field(default_factory=dict)


def judge(rule: Rule, runner_type: RunnerTypeSnapshot) -> Verdict:
    checks: list[tuple[str, int]] = []
    if rule.queue_size_threshold is not None:
        checks.append((SignalName.QUEUE_SIZE, rule.queue_size_threshold))
    if rule.queue_time_threshold is not None:
        checks.append((SignalName.QUEUE_TIME, rule.queue_time_threshold))
    outcomes: list[bool | None] = []
    breached: list[str] = []
    missing: dict[str, str] = {}
    for signal, threshold in checks:
        reading = runner_type.signals.get(SignalName(signal))
        if reading is None or reading.value is None:
            outcomes.append(None)
            missing[signal] = reading.error if reading and reading.error else "not collected"
            continue
        over = reading.value > threshold
        outcomes.append(over)
        if over:
            breached.append(str(signal))
    return Verdict(
        breached=_combine(outcomes, rule.breach_when),
        breached_signals=tuple(breached),
        queue_size=runner_type.value(SignalName.QUEUE_SIZE),
        queue_time=runner_type.value(SignalName.QUEUE_TIME),
        missing=missing,
    )


def _combine(outcomes: list[bool | None], breach_when: str) -> bool | None:
    """Three-valued all/any: a known answer wins over missing data wherever it decides the result."""
    if breach_when == "all":
        if False in outcomes:
            return False
        return None if None in outcomes else True
    if True in outcomes:
        return True
    return None if None in outcomes else False
