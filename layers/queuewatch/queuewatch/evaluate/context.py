"""What one tick judges: the config, the stored state, the observation and the rules, with their lookups (pure)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Literal, cast

from queuewatch.alerting.alert_state import GroupRecord, InstanceKey, StoredState
from queuewatch.alerting.silences import GITHUB_HOLD
from queuewatch.alerting.triage import fleet_dropped, held_by_copies
from queuewatch.config import Config
from queuewatch.config.maintenance import MaintenanceWindow
from queuewatch.evaluate.blindness import shared_requests
from queuewatch.evaluate.forecasts import outlooks
from queuewatch.evaluate.holds import HoldInputs, held_by
from queuewatch.evaluate.slo import slo_rules
from queuewatch.model.forecast.launch import LaunchCeilings
from queuewatch.model.forecast.outlook import NoOutlook, Outlook
from queuewatch.model.github_status import GitHubStatus
from queuewatch.model.rules import HEALTH_RULE, Priority, Rule
from queuewatch.model.snapshot import CollectorFailure, Observation, RunnerTypeSnapshot, Snapshot

GroupBy = Literal["all", "team", "runner_type"]


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
    # The runner types whose requests may stand for a job tracked under another (`all` dispatch): blindness.py.
    requests_shared: frozenset[str] = frozenset()

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
            requests_shared=shared_requests(config, snapshot.runner_types if snapshot else []),
        )

    @cached_property
    def fleet_dropped(self) -> float | None:
        """Under `all` dispatch, the fleet's dropped requests (triage.fleet_dropped), read once a tick."""
        if self.config.defaults.queue_selection_strategy != "all" or self.snapshot is None:
            return None
        return fleet_dropped(self.snapshot.runner_types)

    @cached_property
    def outlooks(self) -> dict[str, Outlook | NoOutlook]:
        """Each runner type a forecast rule selects: its outlook over the largest horizon of those rules, computed
        once a tick (evaluate/forecasts.py)."""
        if self.snapshot is None:
            return {}
        return outlooks(self.config.resolved_rules, self.snapshot.runner_types, self.now, LaunchCeilings())

    @cached_property
    def held_by_copies(self) -> dict[str, float | None]:
        """Per runner type key, the requests its copies elsewhere hold (triage.held_by_copies), read once a tick."""
        return held_by_copies(self.snapshot.runner_types) if self.snapshot is not None else {}

    @property
    def github_incident(self) -> bool:
        return self.github is not None and self.github.degraded

    def github_adjusted(self, rule: Rule, record: GroupRecord | None = None) -> Rule:
        """The rule as it pages during a GitHub Actions incident, with `github_status.on_incident: lower`. A status
        read that failed keeps a group lowered as its last page was: unknown never reverses what was known."""
        settings = self.config.github_status
        if settings.on_incident != "lower" or rule.name == HEALTH_RULE:
            return rule
        lowered = replace(rule, priority=max(rule.priority, settings.lower_to))
        if self.github_incident:
            return lowered
        unknown = self.github is not None and self.github.actions == "unknown"
        last = record.paged_as.priority if record is not None and record.paged_as is not None else None
        return lowered if unknown and last == lowered.priority.value != rule.priority.value else rule

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
            priority=Priority(paged.episode_priority or paged.priority),
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

    @cached_property
    def hold_inputs(self) -> HoldInputs:
        """What every instance's holds are judged on, built once a tick: whether GitHub held any alert reads every
        stored instance, which per instance would make a tick quadratic in the fleet."""
        return HoldInputs(
            now=self.now,
            silences=tuple(self.state.silences),
            windows_open=self.windows_open,
            github=self.github,
            github_settings=self.config.github_status,
            github_held=any(GITHUB_HOLD in i.held_by for i in self.state.instances.values()),
        )

    def holding(self, rule: Rule, runner_type: str) -> tuple[str, ...]:
        """What holds it back now (holds/), after inhibition: silence ids, `window:<name>`, `github-incident`."""
        stored = self.state.instances.get(InstanceKey(rule.name, runner_type))
        before = stored.held_by if stored else ()
        return held_by(self.hold_inputs, rule.name, runner_type, self.team(rule, runner_type), before)

    def silenced(self, rule: Rule, runner_type: str) -> bool:
        """Held back by a silence, an open maintenance window or GitHub's incident: each ends the same way, a page
        of the same episode if it still fires."""
        return bool(self.holding(rule, runner_type))
