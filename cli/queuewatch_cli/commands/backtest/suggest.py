"""`queuewatch backtest --suggest`: per rule, the thresholds and pending period that stay within a page budget
over the history and still page every listed incident.

Each candidate is the config with that one rule changed (and the other rules left out, so each is judged
alone), replayed through the backtest's own Replay, the evaluator's plan, over the same ticks. Nothing here
judges a breach: the pages are the replay's.

What is searched: every setting of the ladder. The rule's queue time threshold takes each of a ladder of round
values (or, for a rule with no queue time threshold, its queue size threshold), with each of a few pending
periods; the other threshold, the grouping and the rest stay as configured. All of them (and the rule as it
is) are replayed in one pass over the history, every candidate fed the same tick. Pages are not monotone in
the threshold (a long episode splits in two, or flaps, when the threshold rises), so no candidate is
skipped on the assumption that a higher threshold pages less: the chosen one is the best of the whole ladder.

The budget counts the pages that match no listed incident: the incidents' own pages are the point. A rule
must page the incidents that name no runner type, and those naming a runner type it applies to.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from queuewatch.base.durations import format_duration, parse_duration
from queuewatch.base.errors import QueuewatchError
from queuewatch.base.wording import moment
from queuewatch.config import Config
from queuewatch.config.schema import RuleSpec, Thresholds
from queuewatch.model.jobs import JobRecord
from queuewatch.model.rules import Rule
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch_cli.commands.backtest.replay import Episode, Replay
from queuewatch_cli.commands.backtest.slo_suggest import objective_lines, propose

QUEUE_TIME_LADDER = (60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200, 10800)
QUEUE_SIZE_LADDER = (0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500)
PENDING_PERIODS = (0, 120, 300, 600, 900)
DEFAULT_INCIDENT_LENGTH = timedelta(hours=1)
_BUDGET_UNITS = {"hour": 3600, "day": 86400, "week": 7 * 86400}


@dataclass(frozen=True)
class Budget:
    pages: float
    per_seconds: int
    text: str

    def allowed(self, span: float) -> float:
        return self.pages * span / self.per_seconds


def parse_budget(text: str) -> Budget:
    """`1/week`, `3/day`, `2/14d`: pages per span."""
    problem = f"--budget: found {text!r}, expected pages per span, such as 1/week, 3/day or 2/14d"
    pages, slash, per = text.strip().partition("/")
    if not slash:
        raise QueuewatchError(problem)
    try:
        count = float(pages)
        seconds = _BUDGET_UNITS.get(per.strip().lower()) or parse_duration(per.strip())
    except ValueError:
        raise QueuewatchError(problem) from None
    if not (math.isfinite(count) and count >= 0 and seconds > 0):
        raise QueuewatchError(problem)
    return Budget(count, seconds, text.strip())


@dataclass(frozen=True)
class Incident:
    """A time the fleet really needed the on-call; with runner types, only a page naming one of them counts."""

    start: datetime
    end: datetime
    runner_types: frozenset[str]
    line: int

    def label(self) -> str:
        where = f" on {', '.join(sorted(self.runner_types))}" if self.runner_types else ""
        return f"incident at {moment(self.start)}{where}"

    def paged_by(self, episode: Episode, until: datetime) -> bool:
        overlaps = episode.started_at <= self.end and (episode.resolved_at or until) >= self.start
        return overlaps and (not self.runner_types or bool(self.runner_types & episode.runner_types))


def parse_incidents(text: str, source: str) -> list[Incident]:
    """One incident a line: `START [END] [RUNNER_TYPE,...]`, times in ISO 8601 (UTC unless they say), END an
    hour after START when not given; `#` starts a comment."""
    incidents: list[Incident] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        where = f"{source}, line {number}"
        start = _moment(words[0], where)
        end = start + DEFAULT_INCIDENT_LENGTH
        rest = words[1:]
        if rest and re.match(r"^\d{4}-\d{2}-\d{2}", rest[0]):
            end = _moment(rest[0], where)
            rest = rest[1:]
        if end <= start:
            raise QueuewatchError(f"{where}: the end {moment(end)} is not after the start")
        if len(rest) > 1:
            raise QueuewatchError(f"{where}: found {' '.join(rest)!r}, expected runner types joined by commas")
        names = frozenset(n for n in rest[0].split(",") if n) if rest else frozenset()
        incidents.append(Incident(start, end, names, number))
    return incidents


def _moment(word: str, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(word)
    except ValueError:
        raise QueuewatchError(f"{where}: found {word!r}, expected an ISO time such as 2026-05-01T09:00Z") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)


def read_incidents(path: str) -> list[Incident]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise QueuewatchError(f"--incidents {path}: {error}") from None
    return parse_incidents(text, path)


@dataclass(frozen=True)
class Setting:
    """One candidate: the threshold searched (queue time in seconds, or queue size), and the pending period."""

    threshold: int
    pending: int
    on_queue_time: bool

    def describe(self) -> str:
        which = (
            f"queue time > {format_duration(self.threshold)}"
            if self.on_queue_time
            else f"queue size > {self.threshold}"
        )
        return f"{which}, for {format_duration(self.pending)}"


@dataclass
class Tried:
    setting: Setting
    episodes: list[Episode]
    noise: int  # pages matching no listed incident
    lateness: dict[int, float | None]  # incident line -> seconds from its start to its page; None: not paged
    within_budget: bool = False

    @property
    def pages_every_incident(self) -> bool:
        return all(late is not None for late in self.lateness.values())

    @property
    def worst_lateness(self) -> float:
        return max((late for late in self.lateness.values() if late is not None), default=0.0)


@dataclass
class RuleSuggestion:
    rule: str
    current: Setting
    incidents: list[Incident]  # those it must page: unnamed, or naming a runner type it applies to
    tried: list[Tried] = field(default_factory=list)
    chosen: Tried | None = None
    worst: Episode | None = None  # the longest wait the most sensitive setting paged: the range's worst outage

    def leaves_worst_unpaged(self, until: datetime) -> bool:
        """The chosen setting sends no page while the range's worst outage lasted."""
        worst, chosen = self.worst, self.chosen
        if worst is None or chosen is None:
            return False
        ended = worst.resolved_at or until
        return not any(e.started_at <= ended and (e.resolved_at or until) >= worst.started_at for e in chosen.episodes)


def candidate_config(config: Config, spec: RuleSpec, rule: Rule, setting: Setting) -> Config:
    """The config with this rule alone, at this setting."""
    if setting.on_queue_time:
        thresholds = Thresholds(queue_time=setting.threshold, queue_size=rule.queue_size_threshold)
    else:
        thresholds = Thresholds(queue_time=rule.queue_time_threshold, queue_size=setting.threshold)
    changed = spec.model_copy(update={"thresholds": thresholds, "for_": setting.pending})
    document = config.model_dump(by_alias=True, exclude_none=True)
    document["rules"] = [changed.model_dump(by_alias=True, exclude_none=True)]
    return Config.model_validate(document)


def judge(setting: Setting, episodes: list[Episode], incidents: Sequence[Incident], until: datetime) -> Tried:
    lateness: dict[int, float | None] = {}
    wanted: set[int] = set()
    for incident in incidents:
        matched = [(i, e) for i, e in enumerate(episodes) if incident.paged_by(e, until)]
        wanted.update(i for i, _ in matched)
        lateness[incident.line] = (
            min(max(0.0, (e.started_at - incident.start).total_seconds()) for _, e in matched) if matched else None
        )
    return Tried(setting, episodes, len(episodes) - len(wanted), lateness)


def _ladder(rule: Rule) -> tuple[list[int], bool]:
    if rule.queue_time_threshold is not None:
        return sorted({*QUEUE_TIME_LADDER, rule.queue_time_threshold}), True
    return sorted({*QUEUE_SIZE_LADDER, rule.queue_size_threshold or 0}), False


def suggest(
    config: Config,
    ticks: Callable[[], Iterable[Snapshot]],
    start: datetime,
    end: datetime,
    budget: Budget,
    incidents: Sequence[Incident] = (),
    held_from: datetime | None = None,
) -> list[RuleSuggestion]:
    """Every rule's search, one pass over the history each; `ticks` gives the history's observations afresh
    for each pass. The budget is over the span the history holds (from `held_from` when it starts late)."""
    allowed = budget.allowed((end - max(start, held_from or start)).total_seconds())
    answers: list[RuleSuggestion] = []
    for spec, rule in zip(config.rules, config.resolved_rules, strict=True):
        ladder, on_queue_time = _ladder(rule)
        current = Setting(
            (rule.queue_time_threshold if on_queue_time else rule.queue_size_threshold) or 0,
            rule.pending_for,
            on_queue_time,
        )
        relevant = [i for i in incidents if not i.runner_types or any(map(rule.applies_to, i.runner_types))]
        answer = RuleSuggestion(rule.name, current, relevant)
        pendings = sorted({*PENDING_PERIODS, rule.pending_for})
        wanted = [current, *(Setting(t, p, on_queue_time) for p in pendings for t in ladder)]
        results: dict[Setting, Tried] = {}
        for tried in _replay(config, spec, rule, list(dict.fromkeys(wanted)), ticks, relevant, end):
            tried.within_budget = tried.noise <= allowed
            results[tried.setting] = tried
        # The most sensitive setting pages every wait its threshold can see: its longest is the range's worst.
        sensitive = results[Setting(ladder[0], 0, on_queue_time)].episodes
        answer.worst = max(sensitive, key=lambda e: e.peak_queue_time or 0.0, default=None)
        answer.tried = sorted(results.values(), key=lambda t: (t.setting.pending, t.setting.threshold))
        answer.chosen = choose(answer.tried)
        answers.append(answer)
    return answers


def choose(tried: Sequence[Tried]) -> Tried | None:
    """Within budget and paging every incident: the one paging the incidents soonest, then the lowest threshold,
    then the shortest pending period (the most sensitive that stays quiet enough)."""
    good = [t for t in tried if t.within_budget and t.pages_every_incident]
    return min(good, key=lambda t: (t.worst_lateness, t.setting.threshold, t.setting.pending), default=None)


def _replay(
    config: Config,
    spec: RuleSpec,
    rule: Rule,
    settings: Sequence[Setting],
    ticks: Callable[[], Iterable[Snapshot]],
    incidents: Sequence[Incident],
    end: datetime,
) -> list[Tried]:
    """One pass over the history, every setting's replay fed the same tick."""
    replays = [Replay(candidate_config(config, spec, rule, s)) for s in settings]
    levels = [_thresholds(rule, s) for s in settings]
    applies: dict[str, bool] = {}
    for snapshot in ticks():
        peak_time = peak_size = 0.0
        blind = False
        for runner_type in snapshot.runner_types:
            name = runner_type.name
            if not applies.setdefault(name, rule.applies_to(name)):
                continue
            waited, queued = runner_type.value(SignalName.QUEUE_TIME), runner_type.value(SignalName.QUEUE_SIZE)
            blind = blind or waited is None or queued is None
            peak_time, peak_size = max(peak_time, waited or 0.0), max(peak_size, queued or 0.0)
        for replay, (time_limit, size_limit) in zip(replays, levels, strict=True):
            # A candidate holding no alert state, on a tick breaching neither of its thresholds anywhere and
            # blind nowhere, would plan nothing: skipping it is what makes replaying the whole ladder affordable.
            below = [
                peak <= limit for peak, limit in ((peak_time, time_limit), (peak_size, size_limit)) if limit is not None
            ]
            calm = any(below) if rule.breach_when == "all" else all(below)
            if calm and not blind and not replay.state.instances and not replay.state.groups:
                continue
            replay.tick(snapshot, snapshot.collected_at)
    return [
        judge(s, [e for e in r.episodes if e.rule == rule.name], incidents, end)
        for s, r in zip(settings, replays, strict=True)
    ]


def _thresholds(rule: Rule, setting: Setting) -> tuple[int | None, int | None]:
    """The candidate's (queue time, queue size) thresholds."""
    if setting.on_queue_time:
        return setting.threshold, rule.queue_size_threshold
    return rule.queue_time_threshold, setting.threshold


def suggestion_lines(
    answers: Sequence[RuleSuggestion],
    budget: Budget,
    incidents: Sequence[Incident],
    start: datetime,
    end: datetime,
    held_from: datetime | None = None,
) -> list[str]:
    held = max(start, held_from or start)
    span = (end - held).total_seconds()
    allowed = budget.allowed(span)
    lines = [
        f"suggest from {moment(held)} to {moment(end)}: budget {budget.text}, so at most "
        f"{_count(allowed)} page(s) over {format_duration(span)} besides the {len(incidents)} listed incident(s)"
    ]
    if held > start:
        lines.append(
            f"  (the history holds jobs from {moment(held)}, not from --from {moment(start)}: "
            f"the budget is over the {format_duration(span)} it holds)"
        )
    if span < budget.per_seconds:
        lines.append("  (the range is shorter than the budget's span: the budget is scaled down to it)")
    if not incidents:
        lines.append(
            "  no --incidents: the choice only minimises pages, it cannot tell an outage from noise; list the "
            "times the fleet really needed the on-call to have them paged"
        )
    for answer in answers:
        lines.append(
            f"rule {answer.rule} (now {answer.current.describe()}): {len(answer.tried)} candidate(s) replayed, "
            f"{len(answer.incidents)} incident(s) on runner types it watches"
        )
        for tried in answer.tried:
            lines.append(f"    {_tried_line(tried, allowed)}")
        chosen = answer.chosen
        if chosen is None:
            lines.append(
                f"  no setting tried meets both the budget and the incidents: none is within {_count(allowed)} "
                f"page(s) and pages every incident"
                if answer.incidents
                else f"  no setting tried keeps within {_count(allowed)} page(s)"
            )
            continue
        lines.append(
            f"  chosen: {chosen.setting.describe()}: {len(chosen.episodes)} page(s), "
            f"{chosen.noise} besides the incidents"
        )
        for incident in answer.incidents:
            late = chosen.lateness[incident.line]
            lines.append(f"    {incident.label()}: paged {format_duration(late or 0.0)} after its start")
        for episode in chosen.episodes:
            names = ", ".join(sorted(episode.runner_types))
            lines.append(f"    page {moment(episode.started_at)} -> {_when(episode.resolved_at)}  {names}")
        if answer.leaves_worst_unpaged(end) and answer.worst is not None:
            worst = answer.worst
            lines.append(
                f"  warning: the range's longest wait, {format_duration(worst.peak_queue_time or 0.0)} on "
                f"{', '.join(sorted(worst.runner_types))} from {moment(worst.started_at)}, is not paged "
                f"by the chosen setting: if it was an outage, list it in --incidents"
            )
    return lines


def _count(pages: float) -> str:
    return f"{pages:g}" if pages == int(pages) else f"{pages:.2f}"


def _when(at: datetime | None) -> str:
    return moment(at) if at else "still firing"


def _tried_line(tried: Tried, allowed: float) -> str:
    missed = [line for line, late in tried.lateness.items() if late is None]
    incidents = ""
    if tried.lateness:
        incidents = (
            f"; misses the incident(s) of line {', '.join(map(str, missed))}"
            if missed
            else f"; pages every incident, the latest {format_duration(tried.worst_lateness)} after its start"
        )
    budget = "within budget" if tried.within_budget else f"over budget ({_count(allowed)})"
    pages = f"{len(tried.episodes)} page(s), {tried.noise} besides incidents"
    return f"{tried.setting.describe()}: {pages}, {budget}{incidents}"


MAX_HELD = 20_000_000
"""Runner type readings a minute held between passes at most (a reference each, 8 bytes: 160 MB); past it the
history is read again for each pass."""


class HeldTicks:
    """The history read once and held for the passes that follow, when it is small enough; else read afresh."""

    def __init__(self, read: Callable[[], Iterable[Snapshot]], minutes: int) -> None:
        self.read = read
        self.minutes = minutes
        self.held: list[Snapshot] | None = None

    def __call__(self) -> Iterable[Snapshot]:
        return self.held if self.held is not None else self._first()

    def _first(self) -> Iterator[Snapshot]:
        kept: list[Snapshot] | None = None
        for snapshot in self.read():
            if kept is None:
                kept = [] if len(snapshot.runner_types) * self.minutes <= MAX_HELD else None
            if kept is not None:
                kept.append(snapshot)
            yield snapshot
        self.held = kept


def run_suggest(
    args: argparse.Namespace,
    config: Config,
    ticks: Callable[[], Iterable[Snapshot]],
    start: datetime,
    end: datetime,
    out: Callable[[str], None] = print,
    held_from: datetime | None = None,
    jobs: Sequence[JobRecord] | None = None,
) -> int:
    """`backtest --suggest`: 0 when every rule has a setting meeting the budget and the incidents, 1 when one
    has none, 2 for bad input. With SLOs, an objective for each from the tracked `jobs` (slo_suggest.py)."""
    try:
        budget = parse_budget(args.budget or "1/week")
        incidents = read_incidents(args.incidents) if args.incidents else []
        if args.compare:
            raise QueuewatchError("--suggest replays one config: drop --compare")
        outside = [i for i in incidents if i.end <= start or i.start >= end]
        if outside:
            raise QueuewatchError(
                f"--incidents {args.incidents}, line {outside[0].line}: {outside[0].label()} is outside the range "
                f"{moment(start)} to {moment(end)}"
            )
        answers = suggest(config, ticks, start, end, budget, incidents, held_from)
    except QueuewatchError as error:
        print(f"backtest: {error}", file=sys.stderr)
        return 2
    out("\n".join(suggestion_lines(answers, budget, incidents, start, end, held_from)))
    if config.slos and jobs is None:
        out("slos: no objective proposed: it is read from the tracked jobs' queue times (--jobs-table)")
    elif config.slos and jobs is not None:
        out("\n".join(objective_lines(propose(config, jobs, held_from or start, end), held_from or start, end)))
    return 0 if all(a.chosen is not None for a in answers) else 1
