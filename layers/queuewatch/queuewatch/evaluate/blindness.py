"""Blindness as a finding, pure: where one of two signals that check each other cannot see, the monitor says so.

- A cross-checked signal (the tracked jobs, or the autoscaler's queue beside them) that could not be read is
  named on the runner type's health instance, even while the other one pages (`blind_signals`).
- Scale-up requests past a rule's thresholds while the jobs table holds no queued job for the runner type:
  the jobs' events are not arriving. The rule pages on the queue (rules.judge) and the monitor's
  `jobs:untracked` instance names each such runner type with the likely causes and their fixes.
- Under `queue_selection_strategy: all` a job's request sits in every queue whose labels take it, while the job is
  tracked under one runner type: a request with no job of its own is blindness only where no runner type that
  could share a job with it has one tracked queued (`shared_requests`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from queuewatch.alerting.triage import UNTRACKED_CAUSES
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import plural
from queuewatch.config import Config
from queuewatch.model.rules import Verdict
from queuewatch.model.signals import SIGNAL_ORIGIN, SignalName
from queuewatch.model.snapshot import RunnerTypeSnapshot, runner_type_key

LISTED = 5  # runner types the finding names; the rest are counted

LabelSet = tuple[frozenset[str], bool]  # lower-cased labels, exact_match


def shared_requests(config: Config, runner_types: Sequence[RunnerTypeSnapshot]) -> frozenset[str]:
    """Under `all` dispatch, the runner types with no job tracked queued whose requests may stand for a job tracked
    under another: one whose label sets and that one's admit a common job (the upstream webhook puts a job's request
    in every queue whose labels take it), or the same key's copy in another region. A runner type the config gives
    no labels is matched by name, so which jobs it shares is unknown: it may share any. Label sets are compared
    through indexes, so 5,000 runner types cost no pairwise comparison."""
    if config.defaults.queue_selection_strategy != "all":
        return frozenset()
    sets = {spec.name: [(frozenset(x.lower() for x in ls), exact) for ls, exact in spec.all_label_sets]
            for spec in config.runner_types}  # fmt: skip
    holders = {runner_type_key(rt.name) for rt in runner_types if rt.value(SignalName.JOBS_QUEUED)}
    candidates = [rt.name for rt in runner_types if rt.value(SignalName.JOBS_QUEUED) == 0]
    if not holders or not candidates:
        return frozenset()
    if any(not sets.get(holder) for holder in holders):
        return frozenset(candidates)  # a holder matched by name may have taken anyone's job
    held = _HeldLabelSets([label_set for holder in holders for label_set in sets[holder]])
    return frozenset(
        name
        for name in candidates
        if runner_type_key(name) in holders or not sets.get(runner_type_key(name))
        or any(held.shares(label_set) for label_set in sets[runner_type_key(name)])
    )  # fmt: skip


class _HeldLabelSets:
    """The label sets of the runner types with jobs tracked queued, indexed to answer "could a job of theirs also
    go to this set?": a job's labels are all among a set's (exact_match: the set itself), so two sets admit a
    common job when both are wide and share a label, one is exact and lies within the other, or both are exact
    and equal."""

    def __init__(self, held: list[LabelSet]) -> None:
        self.exact = {labels for labels, exact in held if exact}
        self.wide_labels = {label for labels, exact in held if not exact for label in labels}
        self.wide_holding: dict[str, set[int]] = defaultdict(set)  # label -> the wide sets holding it
        for index, labels in enumerate(labels for labels, exact in held if not exact):
            for label in labels:
                self.wide_holding[label].add(index)
        counts: dict[str, int] = defaultdict(int)
        for labels in self.exact:
            for label in labels:
                counts[label] += 1
        self.exact_by_rarest: dict[str, list[frozenset[str]]] = defaultdict(list)
        for labels in self.exact:
            self.exact_by_rarest[min(labels, key=lambda label: (counts[label], label))].append(labels)

    def shares(self, label_set: LabelSet) -> bool:
        labels, exact = label_set
        if exact:
            if labels in self.exact:
                return True
            holding = sorted((self.wide_holding.get(label, set()) for label in labels), key=len)
            return bool(holding) and bool(set.intersection(*holding))  # one wide set holds all of this one's labels
        if not labels.isdisjoint(self.wide_labels):
            return True
        return any(held <= labels for label in labels for held in self.exact_by_rarest.get(label, ()))


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
