"""Planning one tick, pure: stored state + an observation -> every state change and page it implies.

Nothing here writes, publishes or renders: the stage (stage.py) words the pages
(page.py) and delivers them (delivery.py) once the plan is made. A backtest drives
the same function over recorded history.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal, cast

from queuewatch.alert_state import (
    GroupDecision,
    GroupRecord,
    GroupStatus,
    InstanceKey,
    InstanceState,
    PageKind,
    Status,
    StoredState,
    decide_group,
    step,
)
from queuewatch.config import Config
from queuewatch.config.maintenance import MaintenanceWindow
from queuewatch.durations import format_duration
from queuewatch.evaluate.blindness import blind_signals, untracked, untracked_text
from queuewatch.evaluate.slo import PREFIX as SLO_PREFIX
from queuewatch.evaluate.slo import judge_slos, slo_rules
from queuewatch.evaluate.unjudged import unjudged_text
from queuewatch.github_status import GitHubStatus
from queuewatch.job_sources import MATCHER_SOURCE, matcher_text, quiet_for, quiet_text
from queuewatch.rules import (
    COLLECTOR,
    HEALTH_RULE,
    JOB_SOURCE,
    UNJUDGED,
    UNSERVED_JOBS,
    UNTRACKED_JOBS,
    Priority,
    Rule,
    Verdict,
    judge,
)
from queuewatch.signals import SignalName
from queuewatch.silences import GITHUB_HOLD, SUPERSEDED_BY
from queuewatch.snapshot import CollectorFailure, Observation, RunnerTypeSnapshot, Snapshot, UnmatchedJobs
from queuewatch.wording import plural

GroupBy = Literal["all", "team", "runner_type"]
DISCOVERY = "discovery"  # health instances "discovery:<region>" stand for each region's queue listing
UNWATCHED = "unwatched"  # and "unwatched:<region>:<queue>" for a queue a listing found and nothing watches


def health_rule(config: Config) -> Rule:
    """The reserved rule of queuewatch's own page, from the config's `monitor` section."""
    monitor = config.monitor
    return Rule(
        name=HEALTH_RULE,
        match=("*",),
        exclude=(),
        queue_time_threshold=None,
        queue_size_threshold=None,
        breach_when="any",
        pending_for=monitor.for_,
        keep_firing_for=0,
        repeat_interval=monitor.repeat_interval,
        priority=monitor.priority,
        team=monitor.team or config.resolved_rules[0].team,
        runbook_url=monitor.runbook_url,
        dashboard_url=None,
        group_by="all",
    )


HELD_LISTED = 10  # holders kept on an instance: the history names the first ten


@dataclass(frozen=True)
class InstanceChange:
    key: InstanceKey
    previous: InstanceState | None  # None: it was OK
    new: InstanceState | None  # None: it is OK now (its item goes)


@dataclass(frozen=True)
class GroupPlan:
    """One group's next record; `page` says a page is due, whose outbox the stage fills in."""

    rule: Rule
    record: GroupRecord
    expected_version: int  # the version read: the write is conditional on it
    page: PageKind | None
    decision: GroupDecision


@dataclass(frozen=True)
class Context:
    """What one tick judges: the stored state, the observation and the rules, with the lookups on them."""

    config: Config
    state: StoredState
    now: datetime
    snapshot: Snapshot | None
    failure: CollectorFailure | None
    health: Rule
    rules: dict[str, Rule]
    by_name: dict[str, RunnerTypeSnapshot]
    windows_open: tuple[MaintenanceWindow, ...] = ()  # the config's maintenance windows open at `now`
    github: GitHubStatus | None = None  # GitHub's status page, where the stack reads it
    # Under `queue_selection_strategy: all` one job's request sits in every matching queue while the job is tracked
    # under one runner type: a request with no job of its own is blindness only if no job is tracked queued at all.
    requests_shared: bool = False

    @classmethod
    def of(
        cls,
        config: Config,
        state: StoredState,
        observation: Observation,
        now: datetime,
        github: GitHubStatus | None = None,
    ) -> Context:
        snapshot = observation if isinstance(observation, Snapshot) else None
        health = health_rule(config)
        return cls(
            config=config,
            state=state,
            now=now,
            snapshot=snapshot,
            failure=observation if isinstance(observation, CollectorFailure) else None,
            health=health,
            rules={rule.name: rule for rule in (*config.resolved_rules, *config.path_rules, health)}
            | slo_rules(config),
            by_name={rt.name: rt for rt in (snapshot.runner_types if snapshot else [])},
            windows_open=tuple(w for w in config.maintenance_windows if w.open_at(now)),
            github=github,
            requests_shared=config.defaults.queue_selection_strategy == "all"
            and any(rt.value(SignalName.JOBS_QUEUED) for rt in (snapshot.runner_types if snapshot else [])),
        )

    @property
    def github_incident(self) -> bool:
        return self.github is not None and self.github.degraded

    def github_adjusted(self, rule: Rule) -> Rule:
        """The rule as it pages during a GitHub Actions incident, with `github_status.on_incident: lower`."""
        settings = self.config.github_status
        if not self.github_incident or settings.on_incident != "lower" or rule.name == HEALTH_RULE:
            return rule
        return replace(rule, priority=max(rule.priority, settings.lower_to))

    def lowered_before(self, rule: Rule, record: GroupRecord | None) -> bool:
        """The group paged at a priority lowered for a GitHub incident that is known to be over: it pages again
        at its own priority, rather than stay below the pager until its repeat."""
        if self.config.github_status.on_incident != "lower" or record is None or record.paged_as is None:
            return False
        over = self.github is not None and self.github.actions != "unknown" and not self.github.degraded
        return over and record.paged_as.priority != rule.priority.value

    def rule(self, name: str) -> Rule:
        """The rule by name; one removed from the config lives on just long enough to resolve its alerts."""
        if name in self.rules:
            return self.rules[name]
        return replace(self.health, name=name, pending_for=0, keep_firing_for=0, runbook_url=None)

    def team(self, rule: Rule, runner_type: str) -> str:
        """The runner type's team as observed; on a tick that does not see it, as it was last observed."""
        found = self.by_name.get(runner_type)
        if found is not None:
            return found.team or rule.team
        remembered = self.state.instances.get(InstanceKey(rule.name, runner_type))
        return (remembered.team if remembered else None) or rule.team

    def as_paged(self, rule: Rule, record: GroupRecord | None) -> Rule:
        """The rule as the group's last page carried it: a resolve closes that page, whatever the config says now."""
        paged = record.paged_as if record else None
        if paged is None:
            return rule
        return replace(
            rule,
            priority=Priority(paged.priority),
            team=paged.team,
            group_by=cast(GroupBy, paged.group_by),
            runbook_url=paged.runbook_url,
            dashboard_url=paged.dashboard_url,
        )

    def gone(self, runner_type: str, rule: Rule) -> bool:
        if self.snapshot is None:
            return False
        if runner_type in self.by_name:
            return not rule.applies_to(runner_type) if rule.name != HEALTH_RULE else False
        # A failed discovery listing may have hidden it: only a clean listing proves it is gone.
        return not self.snapshot.failed_discovery_regions

    def group_of(self, rule: Rule, runner_type: str) -> str:
        if rule.group_by == "runner_type":
            return runner_type
        if rule.group_by == "team":
            if runner_type not in self.by_name:
                # Not seen this tick (a failed collection): it stays in the team page it was listed in,
                # rather than moving to the rule's default team, which would resolve one page and open another.
                for record in self.state.groups.values():
                    if record.rule == rule.name and runner_type in record.members:
                        return record.group
            return self.team(rule, runner_type)
        return "all"

    def silenced(self, rule: Rule, runner_type: str) -> bool:
        """Held back by a silence or an open maintenance window: both end the same way, a page if it still fires."""
        team = self.team(rule, runner_type)
        if any(s.matches(rule.name, runner_type, team, self.now) for s in self.state.silences):
            return True
        if self.github_incident and self.config.github_status.on_incident == "hold" and rule.name != HEALTH_RULE:
            return True  # the team chose to wait GitHub's incident out: its end pages what still fires
        return any(w.holds_back(rule.name, runner_type, team) for w in self.windows_open)

    def holding(self, rule: Rule, runner_type: str) -> tuple[str, ...]:
        """What holds it back now, as the alert's history names it: silence ids, `window:<name>`, `github-incident`."""
        team = self.team(rule, runner_type)
        held = [s.silence_id for s in self.state.silences if s.matches(rule.name, runner_type, team, self.now)]
        if self.github_incident and self.config.github_status.on_incident == "hold" and rule.name != HEALTH_RULE:
            held.append(GITHUB_HOLD)
        held += [f"window:{w.name}" for w in self.windows_open if w.holds_back(rule.name, runner_type, team)]
        return tuple(sorted(held)[:HELD_LISTED])


@dataclass
class Plan:
    """Every state change one observation implies, computed before anything is written."""

    context: Context
    verdicts: dict[InstanceKey, Verdict] = field(default_factory=dict)
    instances: dict[InstanceKey, InstanceState] = field(default_factory=dict)  # after this tick; OK ones absent
    instance_changes: list[InstanceChange] = field(default_factory=list)
    groups: list[GroupPlan] = field(default_factory=list)
    degraded: set[str] = field(default_factory=set)
    findings: dict[InstanceKey, str] = field(default_factory=dict)  # an SLO instance's burn rates, in words
    # Per runner type, the highest-priority rule paging it this tick: it holds back lower-priority rules' pages.
    holders: dict[str, Rule] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.instance_changes or self.groups)

    def with_status(self, status: Status) -> list[InstanceKey]:
        return sorted(key for key, state in self.instances.items() if state.status is status)


def plan(
    config: Config, state: StoredState, observation: Observation, now: datetime, github: GitHubStatus | None = None
) -> Plan:
    """Step every (rule, runner type) instance on the observation, then decide each group's page."""
    result = Plan(Context.of(config, state, observation, now, github))
    seen = _step_observed(result)
    for key, previous in state.instances.items():
        if key in seen:
            continue
        known = result.context.rule(previous.rule)
        if previous.rule not in result.context.rules or result.context.gone(previous.runner_type, known):
            # The runner type (or the rule) no longer exists: its alert still resolves.
            _step(result, known, previous.runner_type, False)
        else:
            result.instances[key] = previous  # unknown this tick: hold
    _decide_groups(result)
    _mark_superseded(result)
    return result


def _mark_superseded(result: Plan) -> None:
    """A firing alert whose page a higher-priority rule holds back keeps that among what holds it
    (`superseded-by:<rule>`), as it keeps a silence: its history shows the escalation held it back, and the
    higher page's end released it, each once. Only a change of holder writes; a steady escalation writes nothing."""
    changes = {change.key: change for change in result.instance_changes}
    for key, state in result.instances.items():
        rule = result.context.rules.get(key.rule)
        holder = result.holders.get(key.runner_type)
        if rule is None or holder is None or state.status is not Status.FIRING or not inhibits(holder, rule):
            continue
        marker = SUPERSEDED_BY + holder.name
        if marker in state.held_by:
            continue  # held over from a tick that did not see the runner type
        new = replace(state, held_by=tuple(sorted((*state.held_by, marker)))[:HELD_LISTED])
        result.instances[key] = new
        changes[key] = InstanceChange(key, result.context.state.instances.get(key), new)
    result.instance_changes = [change for change in changes.values() if change.new != change.previous]


def _step(result: Plan, rule: Rule, runner_type: str, breached: bool | None) -> InstanceKey:
    key = InstanceKey(rule.name, runner_type)
    previous = result.context.state.instances.get(key)
    new = step(
        previous,
        breached,
        result.context.now,
        rule=rule.name,
        runner_type=runner_type,
        pending_for=rule.pending_for,
        keep_firing_for=rule.keep_firing_for,
    )
    observed = result.context.by_name.get(runner_type)
    if new is not None and observed is not None and new.team != observed.team:
        new = replace(new, team=observed.team)
    if new is not None and rule.name == HEALTH_RULE:
        new = replace(new, reason=_reason(result.verdicts.get(key), previous, new))
    if new is not None:
        new = replace(new, held_by=result.context.holding(rule, runner_type))
    if new is not None:
        result.instances[key] = new
    if new != previous:
        result.instance_changes.append(InstanceChange(key, previous, new))
    return key


REASON_LENGTH = 1000  # characters of the monitor's reason kept in the state: status shows it, a page has it all


def _reason(verdict: Verdict | None, previous: InstanceState | None, new: InstanceState) -> str | None:
    """What the monitor could not see and why, taken when the instance turns pending or firing, else kept."""
    if previous is not None and previous.status is new.status:
        return previous.reason
    missing = verdict.missing if verdict else {}
    text = "; ".join(f"{name}: {why}" for name, why in missing.items())
    return text[:REASON_LENGTH] or None


def _step_observed(result: Plan) -> set[InstanceKey]:
    """Step what this observation says something about; returns the instances it stepped."""
    context = result.context
    seen: set[InstanceKey] = set()
    blind_jobs: list[RunnerTypeSnapshot] = []
    for runner_type in context.snapshot.runner_types if context.snapshot else []:
        missing: dict[str, str] = {}
        verdicts = []
        for rule in context.config.rules_for(runner_type.name):
            verdict = judge(rule, runner_type)
            verdicts.append(verdict)
            result.verdicts[InstanceKey(rule.name, runner_type.name)] = verdict
            missing.update(verdict.missing)
            seen.add(_step(result, rule, runner_type.name, verdict.breached))
        # The autoscaler's other queues are judged beside the build queue (demand_paths.py), apart from the
        # cross-check of the build queue and the jobs below.
        for rule in context.config.path_rules:
            absent = rule.size_signal not in runner_type.signals
            if absent and InstanceKey(rule.name, runner_type.name) not in context.state.instances:
                continue  # no such queue, and no alert on it to resolve: nothing to step (5,000 stay cheap)
            verdict = judge(rule, runner_type)
            result.verdicts[InstanceKey(rule.name, runner_type.name)] = verdict
            missing.update(verdict.missing)
            seen.add(_step(result, rule, runner_type.name, verdict.breached))
        if verdicts:  # a cross-checked signal gone blind is said even while the other one pages
            missing.update({k: v for k, v in blind_signals(runner_type).items() if k not in missing})
        if untracked(runner_type, verdicts) and not context.requests_shared:
            blind_jobs.append(runner_type)
        if missing:
            result.degraded.add(runner_type.name)
        result.verdicts[InstanceKey(HEALTH_RULE, runner_type.name)] = Verdict(
            breached=bool(missing),
            breached_signals=("no_data",) if missing else (),
            queue_size=runner_type.value(SignalName.QUEUE_SIZE),
            queue_time=runner_type.value(SignalName.QUEUE_TIME),
            missing=missing,
        )
        seen.add(_step(result, context.health, runner_type.name, bool(missing)))
    failure = context.failure
    result.verdicts[InstanceKey(HEALTH_RULE, COLLECTOR)] = Verdict(
        breached=failure is not None,
        breached_signals=("collection_failed",) if failure else (),
        missing={"collection": f"{failure.error_type}: {failure.error_message}"} if failure else {},
    )
    seen.add(_step(result, context.health, COLLECTOR, failure is not None))
    if context.snapshot is not None:
        seen |= _step_discovery(result, context.snapshot)
        seen.add(_step_unserved(result, context.snapshot))
        seen.add(_step_unjudged(result, context.snapshot))
        seen.add(_step_untracked(result, blind_jobs))
        seen |= _step_sources(result, context.snapshot)
        seen |= _step_slos(result, context.snapshot)
    return seen


def _step_slos(result: Plan, snapshot: Snapshot) -> set[InstanceKey]:
    """Each SLO's burn pairs and ceiling (evaluate/slo.py); an SLO whose figures could not be read holds its
    alerts and is a degraded signal of its own, `slo:<name>`, on the monitor page."""
    context = result.context
    judged, blind = judge_slos(context.config, snapshot)
    seen: set[InstanceKey] = set()
    for judgement in judged:
        key = InstanceKey(judgement.rule, judgement.instance)
        result.verdicts[key] = judgement.verdict
        if judgement.finding:
            result.findings[key] = judgement.finding
        seen.add(_step(result, context.rules[judgement.rule], judgement.instance, judgement.verdict.breached))
    for slo in context.config.resolved_slos:
        name, why = f"{SLO_PREFIX}{slo.name}", blind.get(slo.name)
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=why is not None, breached_signals=("no_data",) if why else (), missing={"slo": why} if why else {}
        )
        if why:
            result.degraded.add(name)
        seen.add(_step(result, context.health, name, why is not None))
    return seen


def _step_sources(result: Plan, snapshot: Snapshot) -> set[InstanceKey]:
    """A job source quiet past its own normal gaps (job_sources.py) is blind: `source:<name>` on the monitor.
    A heartbeat read that failed leaves each source's state as it was, and says so under `source:heartbeats`."""
    floor = result.context.config.monitor.job_source_quiet_after
    seen: set[InstanceKey] = set()
    for beat in snapshot.job_sources:
        quiet = quiet_for(beat, result.context.now, floor) if floor is not None else None
        name = f"{JOB_SOURCE}:{beat.source}"
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=quiet is not None,
            breached_signals=("source_quiet",) if quiet is not None else (),
            missing={"events": quiet_text(beat, quiet)} if quiet is not None else {},
        )
        if quiet is not None:
            result.degraded.add(name)
        seen.add(_step(result, result.context.health, name, quiet is not None))
    if snapshot.job_sources and snapshot.job_sources_error is None:
        seen.add(_step_matcher(result, snapshot))
    if snapshot.job_sources_error is not None or InstanceKey(HEALTH_RULE, f"{JOB_SOURCE}:heartbeats") in (
        result.context.state.instances
    ):
        failed = snapshot.job_sources_error
        name = f"{JOB_SOURCE}:heartbeats"
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=failed is not None,
            breached_signals=("no_data",) if failed else (),
            missing={"heartbeats": failed} if failed else {},
        )
        if failed:
            result.degraded.add(name)
            for key, previous in result.context.state.instances.items():  # unknown is neither quiet nor heard: hold
                if key.rule == HEALTH_RULE and key.runner_type.startswith(f"{JOB_SOURCE}:") and key not in seen:
                    result.instances[key] = previous
                    seen.add(key)
        seen.add(_step(result, result.context.health, name, failed is not None))
    return seen


def _step_matcher(result: Plan, snapshot: Snapshot) -> InstanceKey:
    """The autoscaler's matcher config unread where the track stage expects it: its routing is blind,
    `source:matcher-config` on the monitor, for as long as a heartbeat carries the error."""
    failed = next((beat.matcher_error for beat in snapshot.job_sources if beat.matcher_error), None)
    name = f"{JOB_SOURCE}:{MATCHER_SOURCE}"
    result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
        breached=failed is not None,
        breached_signals=("no_data",) if failed else (),
        missing={"matcher_config": matcher_text(failed)} if failed else {},
    )
    if failed:
        result.degraded.add(name)
    return _step(result, result.context.health, name, failed is not None)


def _step_untracked(result: Plan, blind: list[RunnerTypeSnapshot]) -> InstanceKey:
    """Scale-up requests paging on the queue alone while no job is tracked queued: the jobs are blind."""
    result.verdicts[InstanceKey(HEALTH_RULE, UNTRACKED_JOBS)] = Verdict(
        breached=bool(blind),
        breached_signals=("untracked_jobs",) if blind else (),
        missing={"jobs": untracked_text(blind)} if blind else {},
    )
    if blind:
        result.degraded.add(UNTRACKED_JOBS)
    return _step(result, result.context.health, UNTRACKED_JOBS, bool(blind))


def _step_unserved(result: Plan, snapshot: Snapshot) -> InstanceKey:
    """Tracked jobs waiting for labels no watched runner type serves: nobody will run them, and no rule
    can page about them, so the monitor says so once they have waited `monitor.unserved_after`."""
    after = result.context.config.monitor.unserved_after
    waiting = [u for u in snapshot.unmatched_jobs if after is not None and u.oldest_seconds >= after]
    result.verdicts[InstanceKey(HEALTH_RULE, UNSERVED_JOBS)] = Verdict(
        breached=bool(waiting),
        breached_signals=("unserved_jobs",) if waiting else (),
        missing={"queued": unserved_text(waiting)} if waiting else {},
    )
    if waiting:
        result.degraded.add(UNSERVED_JOBS)
    return _step(result, result.context.health, UNSERVED_JOBS, bool(waiting))


def _step_unjudged(result: Plan, snapshot: Snapshot) -> InstanceKey:
    """Watched runner types no rule selects, and rule globs that nearly select one: nothing pages for them."""
    finding = unjudged_text(result.context.config, snapshot)
    result.verdicts[InstanceKey(HEALTH_RULE, UNJUDGED)] = Verdict(
        breached=finding is not None,
        breached_signals=("unjudged",) if finding else (),
        missing={"rules": finding} if finding else {},
    )
    if finding:
        result.degraded.add(UNJUDGED)
    return _step(result, result.context.health, UNJUDGED, finding is not None)


def unserved_text(waiting: list[UnmatchedJobs]) -> str:
    """The finding in words, the most waiting first: 3 jobs for 40m for labels [gpu-a100, self-hosted]; ..."""
    listed = [
        f"{plural(u.count, 'job')} for {format_duration(u.oldest_seconds)} "
        f"for labels [{', '.join(u.label_set.split(','))}]"
        for u in waiting[:5]
    ]
    more = f" and {len(waiting) - 5} more label sets" if len(waiting) > 5 else ""
    return "; ".join(listed) + more + ", that no runner type serves"


def _step_discovery(result: Plan, snapshot: Snapshot) -> set[InstanceKey]:
    """A failed queue listing hides the runner types it would find: report the region as degraded. A queue a
    listing found and nothing watches is degraded under its own name, `unwatched:<region>:<queue>`."""
    errors: dict[str, list[str]] = {}
    seen: set[InstanceKey] = set()
    for listing in snapshot.discovery:
        failed = errors.setdefault(listing.region, [])  # every listed region steps, failed or not
        if listing.error:
            failed.append(f"{listing.pattern}: {listing.error}")
        unwatched = listing.unwatched
        if listing.skipped > len(listing.skipped_queues) and len(unwatched) == len(listing.skipped_queues):
            unlisted = listing.skipped - len(listing.skipped_queues)
            failed.append(f"{listing.pattern}: {unlisted} more queues skipped, not listed in the snapshot")
        for queue in unwatched:
            name = f"{UNWATCHED}:{listing.region}:{queue.queue}"
            result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
                breached=True, breached_signals=("no_data",), missing={"discovery": queue.reason}
            )
            result.degraded.add(name)
            seen.add(_step(result, result.context.health, name, True))
    for region, failed in sorted(errors.items()):
        name = f"{DISCOVERY}:{region}"
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=bool(failed),
            breached_signals=("no_data",) if failed else (),  # the listing, not a signal: no data
            missing={"discovery": "; ".join(failed)} if failed else {},
        )
        if failed:
            result.degraded.add(name)
        seen.add(_step(result, result.context.health, name, bool(failed)))
    return seen


def health_place(name: str) -> tuple[str, str] | None:
    """The region and queue a listing's health instance stands for (`discovery:<region>`: no queue)."""
    kind, _, rest = name.partition(":")
    if kind == UNWATCHED:
        region, _, queue = rest.partition(":")
        return region, queue
    return (rest, "") if kind == DISCOVERY else None


def _holders(context: Context, instances: dict[InstanceKey, InstanceState]) -> dict[str, Rule]:
    """Per runner type, the highest-priority rule firing on it and not silenced (the health rule aside: the
    monitor's page says what queuewatch cannot see, and neither holds back nor is held back by a queue's page)."""
    holders: dict[str, Rule] = {}
    for state in instances.values():
        rule = context.rules.get(state.rule)
        if rule is None or rule.name == HEALTH_RULE or state.status is not Status.FIRING:
            continue
        if context.silenced(rule, state.runner_type):
            continue  # a silence holds back what it names, and only that: it never quiets a lower rule too
        held = holders.get(state.runner_type)
        if held is None or (rule.priority, rule.name) < (held.priority, held.name):
            holders[state.runner_type] = rule
    return holders


def inhibits(holder: Rule | None, rule: Rule) -> bool:
    """Whether the rule paging a runner type at `holder`'s priority holds back `rule`'s page of it."""
    return holder is not None and rule.name != HEALTH_RULE and holder.priority < rule.priority


def _decide_groups(result: Plan) -> None:
    context = result.context
    result.holders = _holders(context, result.instances)
    firing: dict[tuple[str, str], set[str]] = defaultdict(set)
    for state in result.instances.values():
        if state.status is Status.FIRING:
            rule = context.rule(state.rule)
            firing[(rule.name, context.group_of(rule, state.runner_type))].add(state.runner_type)
    keys = set(firing) | {(r.rule, r.group) for r in context.state.groups.values()}
    for rule_name, group in sorted(keys):
        rule = context.rule(rule_name)
        record = context.state.groups.get(f"{rule_name}#{group}")
        if record is not None and record.outbox is not None and record.status is None:
            continue  # a resolve page is still unsent; it goes out first
        members = firing.get((rule_name, group), set())
        silenced = {name for name in members if context.silenced(rule, name)}
        inhibited = {name for name in members if inhibits(result.holders.get(name), rule)}
        decision = decide_group(
            record.status if record else None,
            record.started_at if record else None,
            record.members if record else (),
            record.last_notified_at if record else None,
            members,
            silenced,
            context.now,
            rule.repeat_interval,
            inhibited,
        )
        if decision.page is None and decision.status is GroupStatus.FIRING and context.lowered_before(rule, record):
            decision = replace(decision, page=PageKind.REPEAT)
        resolving = decision.page is PageKind.RESOLVED
        rule = context.as_paged(rule, record) if resolving else context.github_adjusted(rule)
        planned = _plan_group(context.now, rule, group, record, decision)
        if planned is not None:
            result.groups.append(planned)
    # The higher page first, then the close of what it supersedes: the pager never sees the problem unpaged.
    result.groups.sort(key=lambda g: g.decision.superseded)


def _plan_group(
    now: datetime, rule: Rule, group: str, record: GroupRecord | None, decision: GroupDecision
) -> GroupPlan | None:
    if record is None and decision.status is None and decision.page is None:
        return None
    paging = decision.page is not None
    new = GroupRecord(
        rule=rule.name,
        group=group,
        status=decision.status,
        started_at=decision.started_at,
        members=decision.members,
        last_notified_at=now if paging else (record.last_notified_at if record else None),
        sequence=(record.sequence if record else 0) + (1 if paging else 0),
        version=record.version if record else 0,
        outbox=None if paging else (record.outbox if record else None),  # a due page's outbox: see the stage
        paged_as=record.paged_as if record else None,  # a due page's: see the stage
    )
    if not paging and new == record:
        return None
    return GroupPlan(rule, new, record.version if record else 0, decision.page, decision)
