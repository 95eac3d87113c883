"""`queuewatch routes test`: where an alert of a team, priority and kind goes, read from the config's routes.

It evaluates the very filter policies `make build` subscribes (config/routes.py), so its answer is what SNS
delivers; tests/integration/test_routes.py holds the two together through SNS.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
from collections.abc import Callable

from queuewatch.config.load import check_config_file
from queuewatch.config.routes import Routing
from queuewatch.model.rules import ALERT_KINDS, AlertKind, Priority
from queuewatch_cli.common.stacks import UsageError


def add_arguments(routes: argparse.ArgumentParser) -> None:
    actions = routes.add_subparsers(dest="action", required=True)
    test = actions.add_parser("test", help="where an alert of a team, priority and kind goes")
    test.add_argument(
        "--config",
        default=os.environ.get("QUEUEWATCH_CONFIG"),
        help="the config whose routes to read (default: $QUEUEWATCH_CONFIG)",
    )
    test.add_argument("--team", required=True, help="the alert's team")
    test.add_argument("--priority", required=True, choices=[p.value for p in Priority])
    test.add_argument("--kind", default="page", choices=ALERT_KINDS, help="page (default), ticket or monitor")


def route_lines(routing: Routing, team: str, priority: Priority, kind: AlertKind) -> list[str]:
    """The answer in words: each receiver reached and the route that sends it there, or that none is."""
    attributes: dict[str, str | list[str]] = {"team": team, "priority": priority.value, "kind": kind}
    reached = routing.destinations(attributes)
    head = f"a {kind} of team {team} at {priority.value}"
    if not reached:
        return [f"{head} reaches no receiver: nobody is told"]
    lines = [f"{head} goes to: {', '.join(receiver.name for receiver in reached)}"]
    for receiver in reached:
        policy = routing.filter_policy(receiver.name)
        lines.append(f"  {receiver.name} ({receiver.described}): {json.dumps(policy)}")
    lines.append("  its resolve goes to the same receivers: it carries its page's team, priority and kind")
    return lines


def run_routes(args: argparse.Namespace, out: Callable[[str], None] = print) -> int:
    if not args.config:
        raise UsageError("routes test: --config FILE (or QUEUEWATCH_CONFIG) names the config whose routes to read")
    config = check_config_file(args.config).config
    if args.team not in config.known_teams:
        near = difflib.get_close_matches(args.team, sorted(config.known_teams), n=1)
        hint = f"; did you mean {near[0]!r}?" if near else ""
        raise UsageError(
            f"--team: found {args.team!r}{hint} expected a team {args.config} names: "
            f"{', '.join(sorted(config.known_teams))}"
        )
    for line in route_lines(config.routing, args.team, Priority(args.priority), args.kind):
        out(line)
    return 0
