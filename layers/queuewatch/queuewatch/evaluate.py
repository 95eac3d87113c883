"""The evaluate stage: judge a snapshot (or a failed collection), move alert state, page.

Order of work in one tick, chosen so that a page is never lost or doubled:
1. Read the whole state partition once.
2. Re-publish pages left unsent by an earlier tick whose claim has lapsed.
3. Ignore the observation if a newer one was applied already. The same one may
   be applied again: Lambda's retry of a tick that failed halfway finishes it,
   and applying a snapshot a second time changes nothing a second time.
4. Step every (rule, runner type) instance; decide each group's page.
5. If anything changed: claim the tick (conditional cursor write), write
   instances, then per group write the page into its outbox (conditional on the
   version read), publish, and clear the outbox. A lost race writes and
   publishes nothing; a failed publish stays in the outbox for the next tick.
   Writes carry this evaluation's token, so a retried write that had taken
   effect is not mistaken for a lost race (adapters/state_table.py).
"""

from __future__ import annotations

import fnmatch
import hashlib
import uuid
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import AwareDatetime, BaseModel, Field

from queuewatch.adapters.errors import describe
from queuewatch.adapters.sns import publish
from queuewatch.adapters.state_table import (
    ALERT_TOPIC,
    CHAT_TOPIC,
    GroupRecord,
    Outbox,
    SilenceRecord,
    StoredState,
    WriteConflict,
    advance_cursor,
    delete_group,
    delete_instance,
    load_state,
    put_group,
    put_instance,
)
from queuewatch.alert import (
    Alert,
    RunnerTypeFigures,
    Silence,
    dedup_key,
    silence_command,
    sqs_console_url,
    worst,
)
from queuewatch.alert_state import GroupDecision, InstanceState, PageKind, Status, decide_group, step
from queuewatch.config import COLLECTOR_INSTANCE, RESERVED_RULE, Config, Rule, SignalName
from queuewatch.destination import DestinationRecord, FunctionError
from queuewatch.durations import format_duration
from queuewatch.notifications import Origin, render
from queuewatch.rules import Verdict, judge
from queuewatch.schedule import scheduled_time
from queuewatch.snapshot import RunnerTypeSnapshot, Snapshot, decode_snapshot
from queuewatch.triage import triage

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient

HEALTH_RULE = RESERVED_RULE
COLLECTOR = COLLECTOR_INSTANCE  # the health instance that stands for collection itself
DISCOVERY = "discovery"  # health instances "discovery:<region>" stand for each region's queue listing
MAX_LISTED = 50  # runner types listed in one page; SNS takes 256 KiB at most


@dataclass(frozen=True)
class CollectorFailure:
    """The collector's failure destination record: what failed, and when."""

    at: datetime
    error_type: str
    error_message: str
    request_id: str


@dataclass(frozen=True)
class Target:
    """Where pages go and how they name the stack."""

    table: str
    topic_arn: str
    stack: str
    region: str
    outbox_lease_seconds: int = 60
    chat_topic_arn: str | None = None  # AWS Chatbot's topic: gets the custom notification body
    metrics_namespace: str = "Queuewatch"
    account_id: str = ""

    def topic(self, destination: str) -> str | None:
        return self.topic_arn if destination == ALERT_TOPIC else self.chat_topic_arn

    @property
    def scope(self) -> str:
        """Where the stack runs: with its name, it tells one stack's alerts from another's."""
        return f"{self.account_id}/{self.region}"


class EvaluatorMemory:
    """What this process remembers between ticks: the pages SNS accepted, and the newest tick it judged.

    Kept in the handler's module, this survives warm invocations (the evaluator runs one at a
    time, so usually in one container). Pages: if DynamoDB fails right after SNS accepted a
    page, the outbox still holds it; the next tick then clears the outbox without publishing.
    Newest tick: the state table's cursor advances only when a tick changes state (so steady
    ticks write nothing); remembering every judged tick here keeps a late snapshot from being
    applied over newer ones that changed nothing. After a cold start both are empty: that page
    goes out a second time, with the same notification_id and dedup_key, so pagers merge it,
    and a snapshot later than the cursor but older than the last unchanged tick still applies.
    """

    def __init__(self, limit: int = 256) -> None:
        self._keys: OrderedDict[str, None] = OrderedDict()
        self._limit = limit
        self.newest_tick: datetime | None = None

    def judged(self, tick: datetime) -> None:
        if self.newest_tick is None or tick > self.newest_tick:
            self.newest_tick = tick

    @staticmethod
    def _key(outbox: Outbox, destination: str) -> str:
        # The message carries evaluated_at, so a later page with the same sequence differs.
        return hashlib.sha256(f"{destination}\n{outbox.notification_id}\n{outbox.message}".encode()).hexdigest()

    def remember(self, outbox: Outbox, destination: str = ALERT_TOPIC) -> None:
        self._keys[self._key(outbox, destination)] = None
        while len(self._keys) > self._limit:
            self._keys.popitem(last=False)

    def holds(self, outbox: Outbox, destination: str = ALERT_TOPIC) -> bool:
        return self._key(outbox, destination) in self._keys


class EvaluationResult(BaseModel):
    outcome: Literal["applied", "unchanged", "stale", "conflict"]
    evaluated_at: AwareDatetime
    observation: str
    firing: list[str] = Field(default_factory=list, description="rule#runner_type now firing")
    pending: list[str] = Field(default_factory=list)
    degraded: list[str] = Field(default_factory=list, description="runner types with signals missing")
    pages_sent: list[str] = Field(default_factory=list)
    pages_failed: list[str] = Field(default_factory=list)
    pages_retried: list[str] = Field(default_factory=list)
    writes: int = 0
    read_units: float = 0.0


def observation_from(record: DestinationRecord) -> Snapshot | CollectorFailure:
    """A success record carries the Snapshot; any other condition is a failed collection."""
    if record.succeeded:
        try:
            return decode_snapshot(record.response_payload)
        except ValueError as error:  # pydantic's ValidationError is one too
            raise ValueError(f"the Success record's responsePayload is not a queuewatch Snapshot: {error}") from error
    payload = record.response_payload if isinstance(record.response_payload, dict) else {}
    failure = FunctionError.model_validate(payload)
    return CollectorFailure(
        at=_scheduled_time(record) or record.timestamp,
        error_type=failure.error_type,
        error_message=failure.error_message or record.request_context.condition,
        request_id=record.request_context.request_id,
    )


def _scheduled_time(record: DestinationRecord) -> datetime | None:
    """The failed tick's own time, so failures and snapshots order on one clock."""
    return scheduled_time(record.request_payload)


def health_rule(config: Config) -> Rule:
    monitor = config.monitor
    team = monitor.team or config.resolved_rules[0].team
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
        team=team,
        runbook_url=monitor.runbook_url,
        dashboard_url=None,
        group_by="all",
    )


def evaluate(
    observation: Snapshot | CollectorFailure,
    config: Config,
    dynamodb: DynamoDBClient,
    sns: SNSClient,
    target: Target,
    *,
    memory: EvaluatorMemory | None = None,
) -> EvaluationResult:
    memory = EvaluatorMemory() if memory is None else memory
    writer = uuid.uuid4().hex  # stamps this evaluation's writes: see adapters/state_table.py
    now = observation.collected_at if isinstance(observation, Snapshot) else observation.at
    label = observation.snapshot_id if isinstance(observation, Snapshot) else f"failure:{observation.request_id}"
    state = load_state(dynamodb, target.table)
    result = EvaluationResult(outcome="applied", evaluated_at=now, observation=label, read_units=state.read_units)
    delivery = _Delivery(dynamodb, sns, target, now, result, memory, writer)
    delivery.retry_unsent(state)
    newest = max((t for t in (state.applied_at, memory.newest_tick) if t is not None), default=None)
    if newest is not None and now < newest:
        result.outcome = "stale"
        return result

    plan = _Plan(config, state, observation, now, target)
    memory.judged(now)
    result.firing = sorted(k for k, s in plan.instances.items() if s.status is Status.FIRING)
    result.pending = sorted(k for k, s in plan.instances.items() if s.status is Status.PENDING)
    result.degraded = sorted(plan.degraded)
    if not plan.instance_changes and not plan.group_changes:
        result.outcome = "unchanged"
        return result
    try:
        advance_cursor(dynamodb, target.table, now, writer)
        result.writes += 1
        for key, previous, new in plan.instance_changes:
            if new is None:
                assert previous is not None
                delete_instance(dynamodb, target.table, key, previous.version, writer)
            else:
                put_instance(dynamodb, target.table, new, previous.version if previous else 0, now, writer)
            result.writes += 1
    except WriteConflict:
        result.outcome = "conflict"  # a concurrent or newer evaluation owns this tick
        return result
    for record, expected_version in plan.group_changes:
        try:
            put_group(dynamodb, target.table, record, expected_version, now, writer)
            result.writes += 1
        except WriteConflict:
            result.outcome = "conflict"
            continue
        if record.outbox is not None:
            delivery.send(record, expected_version + 1)
    return result


@dataclass
class _Delivery:
    """One evaluation's way to the state table and the topics, and the result it adds to."""

    dynamodb: DynamoDBClient
    sns: SNSClient
    target: Target
    now: datetime
    result: EvaluationResult
    memory: EvaluatorMemory
    writer: str  # stamps this evaluation's writes: see adapters/state_table.py

    def retry_unsent(self, state: StoredState) -> None:
        """Re-send each page whose sender's lease on its outbox has run out."""
        for key, record in list(state.groups.items()):
            outbox = record.outbox
            if outbox is None or (self.now - outbox.claimed_at).total_seconds() < self.target.outbox_lease_seconds:
                continue  # nothing unsent, or its sender may still be at work
            reclaimed = replace(record, outbox=replace(outbox, claimed_at=self.now))
            try:
                put_group(self.dynamodb, self.target.table, reclaimed, record.version, self.now, self.writer)
            except WriteConflict:
                continue
            self.result.writes += 1
            self.result.pages_retried.append(outbox.notification_id)
            stored = self.send(reclaimed, record.version + 1)
            if stored is None:
                del state.groups[key]
            else:
                state.groups[key] = stored

    def send(self, record: GroupRecord, version: int) -> GroupRecord | None:
        """Publish the outbox to every topic still pending; on success clear it, or drop a finished group.

        A topic that refuses keeps the page pending for it alone, so the next tick
        re-publishes there and not where it was accepted. Returns what is stored.
        """
        outbox = record.outbox
        assert outbox is not None
        accepted: list[str] = []
        for destination in outbox.pending:
            topic_arn = self.target.topic(destination)
            if topic_arn is None:  # the stack no longer has that topic
                accepted.append(destination)
                continue
            if self.memory.holds(outbox, destination):  # SNS has it already; only the clearing write was lost
                accepted.append(destination)
                continue
            chat = destination == CHAT_TOPIC
            try:
                publish(
                    self.sns,
                    topic_arn,
                    subject=outbox.subject,
                    message=(outbox.chat_message or "") if chat else outbox.message,
                    attributes=outbox.attributes,
                    message_structure=None if chat else outbox.message_structure,
                )
            except Exception as error:  # noqa: BLE001 - kept in the outbox; the next tick publishes it
                failure = f"{outbox.notification_id} to the {destination} topic: {describe(error)}"
                self.result.pages_failed.append(failure)
                continue
            self.memory.remember(outbox, destination)
            accepted.append(destination)
            if destination == ALERT_TOPIC:
                self.result.pages_sent.append(outbox.notification_id)
        pending = tuple(d for d in outbox.pending if d not in accepted)
        try:
            if pending:
                if not accepted:
                    return replace(record, version=version)
                narrowed = replace(record, outbox=replace(outbox, pending=pending))
                put_group(self.dynamodb, self.target.table, narrowed, version, self.now, self.writer)
                self.result.writes += 1
                return replace(narrowed, version=version + 1)
            if record.status is None:
                delete_group(self.dynamodb, self.target.table, record.key, version, self.writer)
                self.result.writes += 1
                return None
            cleared = replace(record, outbox=None)
            put_group(self.dynamodb, self.target.table, cleared, version, self.now, self.writer)
            self.result.writes += 1
            return replace(cleared, version=version + 1)
        except WriteConflict:
            return replace(record, version=version)


class _Plan:
    """Every state change one observation implies, computed before anything is written."""

    def __init__(
        self,
        config: Config,
        state: StoredState,
        observation: Snapshot | CollectorFailure,
        now: datetime,
        target: Target,
    ) -> None:
        self.config = config
        self.state = state
        self.now = now
        self.target = target
        self.snapshot = observation if isinstance(observation, Snapshot) else None
        self.failure = observation if isinstance(observation, CollectorFailure) else None
        self.health = health_rule(config)
        self.rules = {rule.name: rule for rule in (*config.resolved_rules, self.health)}
        self.by_name: dict[str, RunnerTypeSnapshot] = {
            rt.name: rt for rt in (self.snapshot.runner_types if self.snapshot else [])
        }
        self.verdicts: dict[str, Verdict] = {}
        self.instances: dict[str, InstanceState] = {}
        self.instance_changes: list[tuple[str, InstanceState | None, InstanceState | None]] = []
        self.group_changes: list[tuple[GroupRecord, int]] = []
        self.degraded: set[str] = set()
        self._step_instances()
        self._decide_groups()

    def _step(self, rule: Rule, runner_type: str, breached: bool | None) -> None:
        key = f"{rule.name}#{runner_type}"
        previous = self.state.instances.get(key)
        new = step(
            previous,
            breached,
            self.now,
            rule=rule.name,
            runner_type=runner_type,
            pending_for=rule.pending_for,
            keep_firing_for=rule.keep_firing_for,
        )
        if new is not None:
            self.instances[key] = new
        if new != previous:
            self.instance_changes.append((key, previous, new))

    def _step_instances(self) -> None:
        seen: set[str] = set()
        if self.snapshot is not None:
            for runner_type in self.snapshot.runner_types:
                missing: dict[str, str] = {}
                for rule in self.config.rules_for(runner_type.name):
                    verdict = judge(rule, runner_type)
                    self.verdicts[f"{rule.name}#{runner_type.name}"] = verdict
                    missing.update(verdict.missing)
                    self._step(rule, runner_type.name, verdict.breached)
                    seen.add(f"{rule.name}#{runner_type.name}")
                if missing:
                    self.degraded.add(runner_type.name)
                self.verdicts[f"{HEALTH_RULE}#{runner_type.name}"] = Verdict(
                    breached=bool(missing),
                    breached_signals=("no_data",) if missing else (),
                    queue_size=runner_type.value(SignalName.QUEUE_SIZE),
                    queue_time=runner_type.value(SignalName.QUEUE_TIME),
                    missing=missing,
                )
                self._step(self.health, runner_type.name, bool(missing))
                seen.add(f"{HEALTH_RULE}#{runner_type.name}")
        failure = self.failure
        self.verdicts[f"{HEALTH_RULE}#{COLLECTOR}"] = Verdict(
            breached=failure is not None,
            breached_signals=("collection_failed",) if failure else (),
            missing={"collection": f"{failure.error_type}: {failure.error_message}"} if failure else {},
        )
        self._step(self.health, COLLECTOR, failure is not None)
        seen.add(f"{HEALTH_RULE}#{COLLECTOR}")
        if self.snapshot is not None:
            self._step_discovery(self.snapshot, seen)
        for key, previous in self.state.instances.items():
            if key in seen:
                continue
            known = self.rule(previous.rule)
            if previous.rule not in self.rules or self._gone(previous.runner_type, known):
                # The runner type (or the rule) no longer exists: its alert still resolves.
                self._step(known, previous.runner_type, False)
            else:
                self.instances[key] = previous  # unknown this tick: hold

    def _step_discovery(self, snapshot: Snapshot, seen: set[str]) -> None:
        """A failed queue listing hides the runner types it would find: report the region as degraded."""
        errors: dict[str, list[str]] = {}
        for listing in snapshot.discovery:
            failed = errors.setdefault(listing.region, [])  # every listed region steps, failed or not
            if listing.error:
                failed.append(f"{listing.pattern}: {listing.error}")
        for region, failed in sorted(errors.items()):
            name = f"{DISCOVERY}:{region}"
            self.verdicts[f"{HEALTH_RULE}#{name}"] = Verdict(
                breached=bool(failed),
                breached_signals=("no_data",) if failed else (),  # the listing, not a signal: no data
                missing={"discovery": "; ".join(failed)} if failed else {},
            )
            if failed:
                self.degraded.add(name)
            self._step(self.health, name, bool(failed))
            seen.add(f"{HEALTH_RULE}#{name}")

    def rule(self, name: str) -> Rule:
        """The rule by name; one removed from the config lives on just long enough to resolve its alerts."""
        if name in self.rules:
            return self.rules[name]
        return replace(self.health, name=name, pending_for=0, keep_firing_for=0, runbook_url=None)

    def _gone(self, runner_type: str, rule: Rule) -> bool:
        if self.snapshot is None:
            return False
        if runner_type in self.by_name:
            return not rule.applies_to(runner_type) if rule.name != HEALTH_RULE else False
        # A failed discovery listing may have hidden it: only a clean listing proves it is gone.
        return not self.snapshot.failed_discovery_regions

    def _team(self, rule: Rule, runner_type: str) -> str:
        found = self.by_name.get(runner_type)
        return (found.team if found and found.team else None) or rule.team

    def _group_of(self, rule: Rule, runner_type: str) -> str:
        if rule.group_by == "runner_type":
            return runner_type
        if rule.group_by == "team":
            if runner_type not in self.by_name:
                # Not seen this tick (a failed collection): it stays in the team page it was listed in,
                # rather than moving to the rule's default team, which would resolve one page and open another.
                for record in self.state.groups.values():
                    if record.rule == rule.name and runner_type in record.members:
                        return record.group
            return self._team(rule, runner_type)
        return "all"

    def _silenced(self, rule: Rule, runner_type: str) -> bool:
        team = self._team(rule, runner_type)
        return any(_silence_matches(s, rule.name, runner_type, team, self.now) for s in self.state.silences)

    def _decide_groups(self) -> None:
        firing: dict[tuple[str, str], set[str]] = defaultdict(set)
        for state in self.instances.values():
            if state.status is Status.FIRING:
                rule = self.rule(state.rule)
                firing[(rule.name, self._group_of(rule, state.runner_type))].add(state.runner_type)
        keys = set(firing) | {(r.rule, r.group) for r in self.state.groups.values()}
        for rule_name, group in sorted(keys):
            rule = self.rule(rule_name)
            record = self.state.groups.get(f"{rule_name}#{group}")
            if record is not None and record.outbox is not None and record.status is None:
                continue  # a resolve page is still unsent; it goes out first
            members = firing.get((rule_name, group), set())
            silenced = {name for name in members if self._silenced(rule, name)}
            decision = decide_group(
                record.status if record else None,
                record.started_at if record else None,
                record.members if record else (),
                record.last_notified_at if record else None,
                members,
                silenced,
                self.now,
                rule.repeat_interval,
            )
            self._plan_group(rule, group, record, decision)

    def _plan_group(self, rule: Rule, group: str, record: GroupRecord | None, decision: GroupDecision) -> None:
        sequence = record.sequence if record else 0
        last_notified = record.last_notified_at if record else None
        outbox = record.outbox if record else None
        if decision.page is not None:
            sequence += 1
            last_notified = self.now
            alert = self.build_alert(rule, group, decision, sequence)
            bodies = render(alert, Origin.of_topic(self.target.topic_arn, self.target.metrics_namespace))
            chat = self.target.chat_topic_arn is not None
            outbox = Outbox(
                notification_id=alert.notification_id,
                subject=bodies.subject,
                message=bodies.message,
                attributes=alert.message_attributes(),
                message_structure="json",
                claimed_at=self.now,
                chat_message=bodies.chat if chat else None,
                pending=(ALERT_TOPIC, CHAT_TOPIC) if chat else (ALERT_TOPIC,),
            )
        new = GroupRecord(
            rule=rule.name,
            group=group,
            status=decision.status,
            started_at=decision.started_at,
            members=decision.members,
            last_notified_at=last_notified,
            sequence=sequence,
            version=record.version if record else 0,
            outbox=outbox,
        )
        if record is None and decision.status is None and decision.page is None:
            return
        if new != record:
            self.group_changes.append((new, record.version if record else 0))

    def build_alert(self, rule: Rule, group: str, decision: GroupDecision, sequence: int) -> Alert:
        assert decision.page is not None and decision.started_at is not None
        resolved = decision.page is PageKind.RESOLVED
        figures = [self._figures(rule, name, resolved) for name in decision.members]
        figures.sort(key=lambda f: (-(f.queue_time_seconds or 0), -(f.queue_size or 0), f.runner_type))
        max_size, max_size_at = worst([(f.runner_type, f.queue_size) for f in figures])
        max_time, max_time_at = worst([(f.runner_type, f.queue_time_seconds) for f in figures])
        key = dedup_key(self.target.stack, rule.name, group, self.target.scope)
        title = _title(rule, group)
        likely = next(
            (
                f"{f.runner_type}: {f.triage.findings[0].title}: {f.triage.findings[0].detail}"
                for f in figures
                if f.triage and f.triage.findings
            ),
            None,
        )
        return Alert(
            status="resolved" if resolved else "firing",
            page=decision.page.value,
            priority=rule.priority.value,
            severity=rule.priority.severity,
            title=title,
            summary=_summary(rule, figures, resolved),
            rule=rule.name,
            team=rule.team if rule.group_by != "team" else group,
            group_by=rule.group_by,
            group=group,
            dedup_key=key,
            notification_id=f"{key}#{sequence}",
            sequence=sequence,
            started_at=decision.started_at,
            evaluated_at=self.now,
            resolved_at=self.now if resolved else None,
            runner_types=figures[:MAX_LISTED],
            runner_types_affected=len(figures),
            max_queue_size=max_size,
            max_queue_size_runner_type=max_size_at,
            max_queue_time_seconds=max_time,
            max_queue_time_runner_type=max_time_at,
            runbook_url=rule.runbook_url,
            dashboard_url=rule.dashboard_url,
            silence=Silence(
                command=silence_command(rule.name, list(decision.members), self.target.table, self.target.region),
                match=list(decision.members),
            ),
            source={
                "stack": self.target.stack,
                "region": self.target.region,
                "observation": self.snapshot.snapshot_id if self.snapshot else "collector-failure",
            },
            likely_cause=likely,
        )

    def _figures(self, rule: Rule, runner_type: str, resolved: bool) -> RunnerTypeFigures:
        found = self.by_name.get(runner_type)
        verdict = self.verdicts.get(f"{rule.name}#{runner_type}")
        instance = self.instances.get(f"{rule.name}#{runner_type}") or self.state.instances.get(
            f"{rule.name}#{runner_type}"
        )
        others: dict[str, float] = {}
        explanation = None
        if found is not None:
            others = {
                name.value: reading.value
                for name, reading in sorted(found.signals.items())
                if reading.value is not None and name not in (SignalName.QUEUE_SIZE, SignalName.QUEUE_TIME)
            }
            queueing = found.value(SignalName.QUEUE_SIZE) != 0  # an empty queue has nothing to explain
            if self.snapshot is not None and not resolved and rule.name != HEALTH_RULE and queueing:
                window, baseline = self.snapshot.triage_window_seconds, self.snapshot.baseline_seconds
                explanation = triage(found, window=window, baseline=baseline)
        return RunnerTypeFigures(
            runner_type=runner_type,
            region=found.region if found else self.target.region,
            queue=found.queue_name if found else "",
            team=self._team(rule, runner_type),
            status="resolved" if resolved or instance is None else "firing",
            since=instance.since if instance else None,
            queue_size=found.value(SignalName.QUEUE_SIZE) if found else None,
            queue_time_seconds=found.value(SignalName.QUEUE_TIME) if found else None,
            queue_size_threshold=rule.queue_size_threshold,
            queue_time_threshold_seconds=rule.queue_time_threshold,
            breached=list(verdict.breached_signals) if verdict and not resolved else [],
            missing=dict(verdict.missing) if verdict else {},
            console_url=sqs_console_url(found.region, found.queue_name) if found else None,
            signals=others,
            triage=explanation,
        )


def _silence_matches(silence: SilenceRecord, rule: str, runner_type: str, team: str, now: datetime) -> bool:
    if not (silence.starts_at <= now < silence.ends_at):
        return False
    if silence.rule and silence.rule != rule:
        return False
    if silence.team and silence.team != team:
        return False
    return not silence.matchers or any(fnmatch.fnmatchcase(runner_type, m) for m in silence.matchers)


def _title(rule: Rule, group: str) -> str:
    if rule.name == HEALTH_RULE:
        return "queuewatch monitor degraded"
    title = f"Jobs are queueing ({rule.name})"
    if rule.group_by == "team":
        title += f" team {group}"
    elif rule.group_by == "runner_type":
        title += f" on {group}"
    return title


def _summary(rule: Rule, figures: Iterable[RunnerTypeFigures], resolved: bool) -> str:
    listed = list(figures)
    if rule.name == HEALTH_RULE:
        parts = [f"{f.runner_type}: {'; '.join(f'{k} {v}' for k, v in f.missing.items()) or 'no data'}" for f in listed]
        head = "queuewatch can see again" if resolved else "queuewatch cannot see"
        return f"{head}: " + " | ".join(parts[:5]) + (f" and {len(parts) - 5} more" if len(parts) > 5 else "")
    thresholds = []
    if rule.queue_size_threshold is not None:
        thresholds.append(f"queue size > {rule.queue_size_threshold}")
    if rule.queue_time_threshold is not None:
        thresholds.append(f"queue time > {format_duration(rule.queue_time_threshold)}")
    joiner = " and " if rule.breach_when == "all" else " or "
    lines = []
    for f in listed[:5]:
        size = "no data" if f.queue_size is None else f"{f.queue_size:g} queued"
        age = "no data" if f.queue_time_seconds is None else f"oldest {format_duration(f.queue_time_seconds)}"
        lines.append(f"{f.runner_type}: {size}, {age}")
    more = f" and {len(listed) - 5} more" if len(listed) > 5 else ""
    verb = "recovered" if resolved else "queueing"
    return f"{len(listed)} runner type(s) {verb} ({joiner.join(thresholds)}): " + "; ".join(lines) + more
