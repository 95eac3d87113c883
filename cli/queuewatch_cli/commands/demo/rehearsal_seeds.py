"""What the rehearsal seeds (rehearsal.py): which runner types queue, how far, and which of the autoscaler's other
queues hold a stuck check or dead-lettered requests, each past the thresholds of the rules that judge it.

A rule selecting no named runner type is rehearsed on a name its own glob selects (`*-gpu` -> `rehearsal-gpu`),
where a discovery entry selects that name too: its queue is the one that entry would find, so the collector's
and the backtest's listing find it as they would once deployed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from queuewatch.collect.paths import path_queues
from queuewatch.collect.queues import WatchedQueue
from queuewatch.config import Config
from queuewatch.model.demand_paths import DEAD_LETTER_RULE, JOB_RETRY_RULE, PATH_COUNTED, beside
from queuewatch.model.rules import Rule

MARGIN_MINUTES = 5  # the incident's oldest job passes the highest queue-time threshold by this much
DEFAULT_PEAK = 1800  # for a runner type whose rules judge queue size alone
STAND_IN = "rehearsal"  # what a glob's `*` becomes in a name the rehearsal makes up
KEY = re.compile(r"^[A-Za-z0-9._-]+$")


@dataclass(frozen=True)
class Seeded:
    """One queue's incident: its runner type, the queue, the messages it holds, and how long the oldest waits at
    the peak. A build queue's messages are jobs; a path queue's are checks or dead-lettered requests."""

    name: str
    queue: str
    region: str
    size: int
    peak_seconds: int
    discovered: bool = False
    holds: str = "jobs queued"  # what its messages are, in the page's words


def seed_plan(config: Config) -> tuple[list[Seeded], list[str]]:
    """The build queues to seed, and in words what the rehearsal made up or cannot rehearse."""
    named = [spec for spec in config.runner_types if spec.queue is not None and spec.queue.name is not None]
    notes: list[str] = []
    chosen: dict[str, Seeded] = {}
    for rule in config.resolved_rules:
        spec = next((s for s in named if rule.applies_to(s.name)), None)
        if spec is not None:
            if spec.name not in chosen:
                assert spec.queue is not None and spec.queue.name is not None
                region = spec.queue.region or config.defaults.region
                chosen[spec.name] = _incident(config, spec.name, spec.queue.name, region)
            continue
        if any(s.discovered and rule.applies_to(s.name) for s in chosen.values()):
            continue
        found = discovered(config, rule, {s.name for s in named} | set(chosen))
        if found is None:
            notes.append(
                f"rule {rule.name}: selects no named runner type, and none of its globs names one a discovery "
                "entry selects, so the rehearsal cannot seed it"
            )
            continue
        chosen[found.name] = found
        notes.append(
            f"rule {rule.name}: selects no named runner type: rehearsed on {found.name}, a name its globs select, "
            f"whose queue discovery would find as {found.queue}"
        )
    return list(chosen.values()), notes


def _incident(config: Config, name: str, queue: str, region: str, discovered: bool = False) -> Seeded:
    """Past every threshold of every rule that selects the runner type, so that an escalation escalates."""
    rules = config.rules_for(name)
    times = [r.queue_time_threshold for r in rules if r.queue_time_threshold is not None]
    sizes = [r.queue_size_threshold for r in rules if r.queue_size_threshold is not None]
    pending = max((r.pending_for for r in rules), default=0)
    peak = (max(times) if times else DEFAULT_PEAK) + pending + MARGIN_MINUTES * 60
    return Seeded(name, queue, region, max(sizes, default=0) + 3, peak, discovered)


def discovered(config: Config, rule: Rule, taken: set[str]) -> Seeded | None:
    """A runner type the rule's globs select and a discovery entry finds, with the queue that entry would list."""
    for glob in rule.match:
        key = glob.split("@")[0]
        name = re.sub(r"\[[^]]*\]", "x", key).replace("*", STAND_IN).replace("?", "x")
        if not KEY.match(name) or name in taken or not rule.applies_to(name):
            continue
        for spec in config.discovery:
            queue = spec.queue_name_pattern.replace("{prefix}", spec.prefix).replace("{runner_type}", name)
            if spec.selects(name) and spec.runner_type_of(queue) == name:
                return _incident(config, name, queue, spec.region or config.defaults.region, discovered=True)
    return None


def path_queues_to_create(config: Config, seeded: list[Seeded]) -> list[Seeded]:
    """The queues upstream puts beside each seeded build queue, for each path with a rule, empty: they exist, as
    the autoscaler's do, so the listing finds them beside their build queue."""
    on = {rule.name for rule in config.path_rules}
    out = []
    for entry in seeded:
        paths = beside(entry.queue)
        for rule, queue in ((DEAD_LETTER_RULE, paths.dead_letter), (JOB_RETRY_RULE, paths.job_retry)):
            if rule in on and queue is not None:
                out.append(Seeded(entry.name, queue, entry.region, 0, 0))
    return out


def path_plan(config: Config, seeded: list[Seeded], targets: list[WatchedQueue]) -> tuple[list[Seeded], list[str]]:
    """For each path rule, the first seeded runner type with that path's queue: it holds a stuck check or
    dead-lettered requests past the rule's thresholds; in words, a path rule that no seeded queue can carry."""
    names = {entry.name for entry in seeded}
    plan: list[Seeded] = []
    notes: list[str] = []
    for rule in config.path_rules:
        found = next(
            (
                (target, path)
                for target in targets
                if target.runner_type in names
                for path in path_queues(target)
                if path.count == rule.size_signal
            ),
            None,
        )
        if found is None:
            notes.append(
                f"rule {rule.name}: not rehearsed: no seeded runner type has that queue beside its build queue "
                "(a discovery entry lists it, or the runner type names it)"
            )
            continue
        target, path = found
        size = (rule.queue_size_threshold or 0) + 1
        peak = (rule.queue_time_threshold or 0) + MARGIN_MINUTES * 60
        plan.append(
            Seeded(target.runner_type, path.queue_name, target.region, size, peak, holds=PATH_COUNTED[rule.name])
        )
    return plan, notes
