"""Held back by a higher-priority page of the same problem (inhibition): asked first, before the holds someone set.

The same problem is the same instance of the same kind of rule for the same team: two queue rules whose
selections both take the runner type, or two rules on its dead-letter queue. Never across kinds (a dead-letter
page against a queue-time page), teams or SLOs, and never the monitor's own page: each is its own problem.
"""

from __future__ import annotations

from dataclasses import dataclass

from queuewatch.evaluate.slo import is_slo_rule
from queuewatch.model.rules import HEALTH_RULE, Rule
from queuewatch.model.signals import SignalName


@dataclass(frozen=True, order=True)
class Problem:
    """What a page is about, as inhibition compares two: the kind of rule, the instance it judges, its team."""

    kind: SignalName  # the signal the rule's size reads: the build queue, the job-retry or dead-letter queue
    instance: str
    team: str


def problem(rule: Rule, instance: str, team: str) -> Problem | None:
    """None: the rule neither holds back nor is held back by another (the monitor, an SLO)."""
    if rule.name == HEALTH_RULE or is_slo_rule(rule.name):
        return None
    return Problem(rule.size_signal, instance, team)


def inhibits(holder: Rule | None, rule: Rule) -> bool:
    """Whether `holder`, paging the same problem, holds back `rule`'s page of it."""
    return holder is not None and holder.name != rule.name and holder.priority < rule.priority
