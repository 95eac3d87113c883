"""The names a config makes known to the operator commands: its rules, its teams, its runner types, and its
maintenance windows (status shows the next one without the config).

`silence add --team gpu-infra` must be accepted before that team ever pages, so the evaluator publishes
these names from the config it runs (adapters/state_table/known_names.py), and the commands check against them.
Pure: the config's schema in, names out.
"""

from __future__ import annotations

from dataclasses import dataclass

from queuewatch.config.maintenance import MaintenanceWindow
from queuewatch.config.schema import Config
from queuewatch.model.rules import HEALTH_RULE


@dataclass(frozen=True)
class KnownNames:
    rules: frozenset[str]  # queuewatch's own rule included
    teams: frozenset[str]
    runner_types: frozenset[str]  # the configured names (discovered ones are known from the alerts)
    windows: tuple[MaintenanceWindow, ...] = ()


def config_teams(config: Config) -> set[str]:
    """Every team the config can page: the rules' (defaults applied), the runner types', discovery's, the monitor's."""
    teams = {rule.team for rule in (*config.resolved_rules, *config.path_rules)}
    teams |= {spec.team for spec in config.runner_types if spec.team}
    teams |= {found.team for found in config.discovery if found.team}
    return teams | ({config.monitor.team} if config.monitor.team else set())


def known_names(config: Config) -> KnownNames:
    return KnownNames(
        # job-retry and dead-letter page too (demand_paths.py): a silence may name them
        rules=frozenset({rule.name for rule in (*config.resolved_rules, *config.path_rules)} | {HEALTH_RULE}),
        teams=frozenset(config_teams(config)),
        runner_types=frozenset(spec.name for spec in config.runner_types),
        windows=tuple(config.maintenance_windows),
    )
