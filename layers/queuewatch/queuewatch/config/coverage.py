"""What cannot page, found from the config alone: runner types no rule selects, globs that select none of the
runner types they were meant for, one queue under two runner types, discovery entries that select one queue.

Each finding is an error when the config can never be right as written, and a warning when it might be
meant; a warning is shown by check-config and never fails it. Why each is which is said beside it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from queuewatch.base.wording import plural
from queuewatch.config.names import QUEUE_URL, RUNNER_TYPE
from queuewatch.config.schema import Config, DiscoverySpec, RunnerTypeSpec
from queuewatch.model.signals import SignalName

Location = tuple[str | int, ...]


@dataclass(frozen=True)
class Finding:
    location: Location
    message: str
    severity: Literal["error", "warning"]


def coverage_findings(config: Config) -> list[Finding]:
    return [
        *_unselected_runner_types(config),
        *_globs_selecting_nothing(config),
        *_shared_queues(config),
        *_overlapping_discovery(config),
        *_not_cross_checked(config),
    ]


def _not_cross_checked(config: Config) -> Iterator[Finding]:
    # A warning: a scale-set lane has no build queue, so this is right for it, but its blindness is the
    # jobs' alone and must be known: a lost job event is a job nobody sees waiting.
    for index, spec in enumerate(config.runner_types):
        if spec.queue is None:
            yield Finding(
                ("runner_types", index, "queue"),
                f"runner type {spec.name!r} has queue: none: it is judged on its tracked jobs alone and nothing "
                "cross-checks them (a job whose events are lost is never seen waiting; a job source gone quiet "
                "pages the monitor); without job tracking nothing reads it at all",
                "warning",
            )


def _unselected_runner_types(config: Config) -> Iterator[Finding]:
    # An error: a runner type is named under runner_types only to be watched, and with no rule selecting
    # it nothing it does can ever page. Not watching it is said by removing it, not by leaving it there.
    rules = config.resolved_rules
    for index, spec in enumerate(config.runner_types):
        if not any(rule.applies_to(spec.name) for rule in rules):
            excluded = [rule.name for rule in rules if any(fnmatch.fnmatchcase(spec.name, p) for p in rule.match)]
            why = f" (excluded by {', '.join(excluded)})" if excluded else ""
            meant = [
                (("rules", number, "match", position), f"rule {rule.name!r}: {pattern!r} nearly selects it{hint}")
                for number, rule in enumerate(rules)
                for position, pattern in enumerate(rule.match)
                if (hint := near_miss(pattern, [spec.name]))
            ]
            if meant:  # said at the typo, where the fix goes
                where, said = meant[0]
                yield Finding(where, f"runner type {spec.name!r} can never page: {said}", "error")
                continue
            yield Finding(
                ("runner_types", index, "name"),
                f"runner type {spec.name!r} can never page: no rule selects it{why}; expected a rule whose match "
                "selects it, or remove it from runner_types",
                "error",
            )


def _globs_selecting_nothing(config: Config) -> Iterator[Finding]:
    # Without discovery a glob selecting none of runner_types can never select anything: an error. With
    # discovery it may be meant for discovered names, which are unknown here; only a near miss of a named
    # runner type (a typo such as '*-nvida-gpu') is then worth saying, as a warning.
    names = [spec.name for spec in config.runner_types]
    for index, rule in enumerate(config.rules):
        for position, pattern in enumerate(rule.match):
            if any(fnmatch.fnmatchcase(name, pattern) for name in names):
                continue
            hint = near_miss(pattern, names)
            if config.discovery and not hint:
                # Discovery's own match globs are what check-config knows of the names it will find: a rule glob
                # that nearly spells one ('*-nvida-gpu-*' beside discovery's '*-nvidia-gpu-*') is a typo too.
                meant = near_a_discovery_glob(pattern, config)
                if meant:
                    yield Finding(
                        ("rules", index, "match", position),
                        f"rule {rule.name!r}: {pattern!r} selects none of runner_types and nearly spells discovery's "
                        f"glob {meant!r}; did you mean {meant!r}? Otherwise the runner types discovery finds with "
                        "it have no such rule",
                        "warning",
                    )
                continue
            where = ("rules", index, "match", position)
            if config.discovery:
                yield Finding(
                    where,
                    f"rule {rule.name!r}: {pattern!r} selects none of runner_types{hint}; discovery may find names "
                    "it selects, but if it was meant for these, they have no such rule",
                    "warning",
                )
            elif any(fnmatch.fnmatchcase(name, p) for name in names for p in rule.match):
                # (a rule selecting nothing at all is rule_coverage_problems' to say)
                yield Finding(
                    where,
                    f"rule {rule.name!r}: {pattern!r} selects none of runner_types and there is no discovery entry"
                    f"{hint}; expected a name or glob of a configured runner type",
                    "error",
                )


def near_a_discovery_glob(pattern: str, config: Config) -> str:
    globs = sorted({g for entry in config.discovery for g in entry.match if g.strip("*?")})
    if any(fnmatch.fnmatchcase(_sample(glob), pattern) for glob in globs):
        return ""  # the rule selects some of what that entry finds
    return next((glob for glob in globs if near_miss(pattern, [_sample(glob)])), "")


_SEPARATORS = str.maketrans("-_", "..")


def near_miss(pattern: str, names: list[str]) -> str:
    """'; did you mean ...?' with the glob corrected to what it nearly selects among `names`, or ''."""
    literals = [part for part in re.split(r"[*?]|\[[^\]]*\]", pattern) if part]
    if not literals:
        return ""
    slipped = _wildcard_slip(pattern, names)
    if slipped:
        selects = [name for name in names if fnmatch.fnmatchcase(name, slipped)]
        more = f" (and {len(selects) - 1} more)" if len(selects) > 1 else ""
        return f"; did you mean {slipped!r}? it selects {plural(len(selects), 'runner type')}: {selects[0]!r}{more}"
    fixes: dict[str, str] = {}
    close: list[str] = []
    for name in names:
        fixed = pattern
        for literal in literals:
            if literal in name:
                continue
            window = _closest_window(literal, name)
            if window is None:
                break
            fixed = fixed.replace(literal, window, 1)
        else:
            if fixed != pattern:
                close.append(name)
                fixes[name] = fixed
    if not close:
        return ""
    corrected = sorted({fixes[name] for name in close if fnmatch.fnmatchcase(name, fixes[name])})
    more = f" (and {len(close) - 1} more)" if len(close) > 1 else ""
    if len(corrected) == 1:
        selects = [name for name in names if fnmatch.fnmatchcase(name, corrected[0])]
        return (
            f"; did you mean {corrected[0]!r}? it selects {plural(len(selects), 'runner type')}: {selects[0]!r}{more}"
        )
    return f"; it nearly selects {close[0]!r}{more}"


def _wildcard_slip(pattern: str, names: list[str]) -> str:
    """The glob meant when a '*' slipped ('*-gpu*-' for '*-gpu-*') or was left off an end, if it selects some
    of `names` and the pattern as written selects none."""
    if "*" not in pattern or any(fnmatch.fnmatchcase(name, pattern) for name in names):
        return ""
    swaps = [
        pattern[:i] + pattern[i + 1] + pattern[i] + pattern[i + 2 :]
        for i in range(len(pattern) - 1)
        if "*" in pattern[i : i + 2] and pattern[i] != pattern[i + 1]
    ]
    for variant in (*swaps, pattern + "*", "*" + pattern):
        if any(fnmatch.fnmatchcase(name, variant) for name in names):
            return variant
    return ""


def _closest_window(literal: str, name: str) -> str | None:
    """The part of `name` a misspelt literal most likely meant ('-nvida-gpu' in '...nvidia.gpu'), if any is
    close; '.', '-' and '_' count as one, since names mix them."""
    import difflib  # only bad files need suggestions: kept off the cold start

    if len(literal) < 3:
        return None
    wanted = literal.translate(_SEPARATORS)
    best: tuple[float, str] | None = None
    for size in range(max(1, len(literal) - 2), len(literal) + 3):
        for start in range(len(name) - size + 1):
            window = name[start : start + size]
            ratio = difflib.SequenceMatcher(None, wanted, window.translate(_SEPARATORS)).ratio()
            if ratio >= 0.8 and (best is None or ratio > best[0]):
                best = (ratio, window)
    return best[1] if best else None


def _queue_identity(config: Config, spec: RunnerTypeSpec) -> tuple[str, str, str]:
    assert spec.queue is not None  # only runner types that read a queue (_reads_the_queue)
    url = QUEUE_URL.match(spec.queue.url or "")
    account = spec.queue.account_id or (url["account"] if url else None) or config.defaults.account_id
    return (spec.queue.region_or(config.defaults.region), account or "the stack's account", spec.queue.queue_name)


def _reads_the_queue(config: Config, spec: RunnerTypeSpec) -> bool:
    if spec.queue is None:
        return False
    signals = config.signals_for(spec.signals)
    return signals[SignalName.QUEUE_SIZE] == "sqs" or signals[SignalName.QUEUE_TIME] == "sqs"


def _shared_queues(config: Config) -> Iterator[Finding]:
    # Only runner types whose queue size or time is the queue's (signals from sqs) share its figures; one
    # queue for the whole fleet with per-runner-type metrics (pytorch's) is right. queue_source 'sqs': the
    # rules judge the queue, so one backlog pages twice: never right, an error. 'jobs': with tracking
    # each runner type counts its own jobs (two label sets on one queue), so it may be meant; without
    # tracking the queue is judged instead and pages twice: a warning.
    first: dict[tuple[str, str, str], int] = {}
    for index, spec in enumerate(config.runner_types):
        if not _reads_the_queue(config, spec):
            continue
        identity = _queue_identity(config, spec)
        if identity not in first:
            first[identity] = index
            continue
        other = config.runner_types[first[identity]].name
        region, account, name = identity
        said = f"runner types {other!r} and {spec.name!r} both read queue {name} ({region}, {account})"
        if config.defaults.queue_source == "sqs":
            yield Finding(
                ("runner_types", index, "queue"),
                f"{said}: with queue_source sqs one backlog is paged twice; expected one runner type per queue "
                "(or queue_size and queue_time from metrics of each runner type's own)",
                "error",
            )
        else:
            yield Finding(
                ("runner_types", index, "queue"),
                f"{said}: with job tracking each counts its own jobs, but without it the queue is judged for "
                "both and one backlog is paged twice",
                "warning",
            )


def _overlapping_discovery(config: Config) -> Iterator[Finding]:
    # An error: two entries that select one queue give it two runner types, or one entry's team and
    # signals silently lose to the other's; an exclude on one of them says which is meant.
    for (i, first), (j, second) in combinations(enumerate(config.discovery), 2):
        if _where(config, first) != _where(config, second):
            continue
        if first == second:  # copied, and the edit that was meant (a region, most often) not made
            yield Finding(
                ("discovery", j),
                f"discovery[{j}] is identical to discovery[{i}]; did you mean another region? "
                f"(both list {_where(config, first)[0]}: add region: to one of them)",
                "error",
            )
            continue
        shared = _shared_queue(first, second)
        if shared is None:
            continue
        yield Finding(
            ("discovery", j),
            f"discovery[{j}] and discovery[{i}] can both select queue {shared!r} in {_where(config, first)[0]}: "
            "expected match/exclude (or patterns) that leave each queue to one entry",
            "error",
        )


def _where(config: Config, spec: DiscoverySpec) -> tuple[str, str]:
    return (spec.region or config.defaults.region, spec.account_id or config.defaults.account_id or "")


def _sample(pattern: str) -> str:
    """A name the glob selects: each wildcard stands for 'x', a set for its first character."""
    return re.sub(r"\[!?([^\]]).*?\]", r"\1", pattern).replace("*", "x").replace("?", "x")


def _shared_queue(first: DiscoverySpec, second: DiscoverySpec) -> str | None:
    """A queue name both entries select, if one of the likely ones is: each entry's own samples, and the
    samples of each match glob with the other's globs put in place of its '*'."""
    globs = [(a, b) for a in first.match for b in second.match]
    runner_types = {_sample(g) for pair in globs for g in pair}
    runner_types |= {_sample(a.replace("*", b, 1)) for a, b in globs} | {
        _sample(b.replace("*", a, 1)) for a, b in globs
    }
    for spec, other in ((first, second), (second, first)):
        for runner_type in sorted(runner_types):
            if not RUNNER_TYPE.match(runner_type):
                continue
            before, after = spec.queue_name_pattern.replace("{prefix}", spec.prefix).split("{runner_type}")
            queue = f"{before}{runner_type}{after}"
            if spec.runner_type_of(queue) and other.runner_type_of(queue):
                return queue
    return None
