"""What `make build` and `make deploy` run: `stage-config`, `stage-dashboard` (build.py, with the receivers'
subscriptions of subscriptions.py) and `deploy-parameters`."""

from __future__ import annotations

from queuewatch_cli.commands.build.build import (
    add_dashboard_arguments,
    add_parameters_arguments,
    add_stage_arguments,
    run,
)
from queuewatch_cli.common.command import Command

STAGE_CONFIG = Command(
    "stage-config",
    "check a config and stage exactly those bytes for the build's ConfigLayer (make build CONFIG=...)",
    add_stage_arguments,
    run,
)
STAGE_DASHBOARD = Command(
    "stage-dashboard",
    "draw the staged config's thresholds on the built template's dashboard, and subscribe its receivers",
    add_dashboard_arguments,
    run,
)
DEPLOY_PARAMETERS = Command(
    "deploy-parameters",
    "print the stack parameters a config decides (AutoscalerPrefix, AutoscalerMatcherConfigPath, "
    "WatchedAccountIds) as make deploy passes them",
    add_parameters_arguments,
    run,
)
COMMANDS = (STAGE_CONFIG, STAGE_DASHBOARD, DEPLOY_PARAMETERS)
