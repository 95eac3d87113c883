"""What `make build` deploys: exactly the config check-config passed, and the dashboard's lines drawn from it.

`stage-config` reads the user's file once, checks those bytes, and writes the same bytes to the one place
the template's ConfigLayer ships from, under the one name the functions read (/opt/queuewatch.yaml): there
is no parameter left that could point the functions at a file nobody checked. `stage-dashboard` writes the
deployed config's thresholds into the built template's dashboard, so that its lines cannot drift from the
rules that page; it also subscribes the config's receivers with their routes' filter policies (subscriptions.py).
`deploy-parameters` prints the stack parameters the staged config decides, which `make deploy` passes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from queuewatch.base.durations import format_duration
from queuewatch.config.load import CheckedConfig, ConfigError, ConfigProblem, check_config_bytes, load_config
from queuewatch.config.reach import config_reach
from queuewatch.config.schema import Config
from queuewatch_cli.commands.build.subscriptions import add_subscriptions
from queuewatch_cli.common.template import TemplateLoader, expand_loops

DEPLOYED_NAME = "queuewatch.yaml"
"""The staged config's name: the layer mounts it at /opt/queuewatch.yaml, QUEUEWATCH_CONFIG in template.yaml."""
THRESHOLD_GRAPHS = {"queuetime": 0, "jobqueuetime": 0, "queuesize": 1}
"""The dashboard's graphs that draw thresholds, by their expression's id: 0 queue time lines, 1 queue size lines."""
MAX_LINES = 10  # a graph with more horizontal lines than this says nothing
DERIVED_PARAMETERS = ("AutoscalerPrefix", "AutoscalerMatcherConfigPath", "WatchedAccountIds")
"""The stack parameters the config decides: `make deploy` passes each, so no deploy asks them."""


def config_file(given: Path) -> Path:
    """A config file, or a folder of the user's holding queuewatch.yaml."""
    return given / DEPLOYED_NAME if given.is_dir() else given


def stage_config(given: Path, into: Path) -> CheckedConfig:
    """Check the config and make `into` hold its very bytes as queuewatch.yaml, and nothing else.

    All or nothing: the bytes are written to a fresh folder beside `into` and swapped in by renames, so `into`
    is only ever the whole old config or the whole new one; on any problem `into` is removed, so that nothing
    a build could ship (the layer's ContentUri) is left behind a config that failed.
    """
    path = config_file(given)
    try:
        try:
            raw = path.read_bytes()
        except OSError as error:
            raise ConfigError(str(path), [ConfigProblem("", f"cannot read the file: {error.strerror}")]) from error
        checked = check_config_bytes(raw, str(path))
    except ConfigError:
        shutil.rmtree(into, ignore_errors=True)
        raise
    into.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{into.name}.new-", dir=into.parent))
    try:
        (fresh / DEPLOYED_NAME).write_bytes(raw)
        fresh.chmod(0o755)  # mkdtemp's 0700 would be the layer's folder mode
        _swap_in(fresh, into)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.rmtree(into, ignore_errors=True)
        raise
    return checked


def _swap_in(fresh: Path, into: Path) -> None:
    """Put the folder `fresh` where `into` is: the old one is renamed aside first (a rename cannot replace a
    folder that holds files), so at every instant `into` is absent, the whole old folder or the whole new one."""
    if not into.exists():
        fresh.rename(into)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{into.name}.old-", dir=into.parent))
    aside.rmdir()
    into.rename(aside)
    fresh.rename(into)
    shutil.rmtree(aside, ignore_errors=True)


def threshold_lines(config: Config) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each rule's queue time and queue size thresholds, as the dashboard's horizontal annotations."""
    time_lines: list[dict[str, Any]] = []
    size_lines: list[dict[str, Any]] = []
    for rule in config.resolved_rules[:MAX_LINES]:
        if rule.queue_time_threshold is not None:
            label = (
                f"rule {rule.name} ({rule.priority.value}): queue time > {format_duration(rule.queue_time_threshold)}"
            )
            time_lines.append({"label": label, "value": rule.queue_time_threshold})
        if rule.queue_size_threshold is not None:
            label = f"rule {rule.name} ({rule.priority.value}): queue size > {rule.queue_size_threshold}"
            size_lines.append({"label": label, "value": rule.queue_size_threshold})
    return time_lines, size_lines


def draw_thresholds(template: dict[str, Any], config: Config) -> None:
    """Set the threshold lines of the template's dashboard to the config's rules.

    The body is a Fn::Sub whose placeholders all sit inside JSON strings, so it reads as JSON as it stands;
    each graph of THRESHOLD_GRAPHS gets its lines, and a graph missing is an error, not a dashboard without.
    """
    properties = template["Resources"]["QueuewatchDashboard"]["Properties"]
    body = json.loads(properties["DashboardBody"]["Fn::Sub"])
    lines = threshold_lines(config)
    drawn = set()
    for widget in body["widgets"]:
        metrics = widget["properties"].get("metrics") or [[{}]]
        graph = metrics[0][0].get("id") if isinstance(metrics[0][0], dict) else None
        if graph in THRESHOLD_GRAPHS:
            widget["properties"]["annotations"] = {"horizontal": lines[THRESHOLD_GRAPHS[graph]]}
            drawn.add(graph)
    if drawn != set(THRESHOLD_GRAPHS):
        raise ValueError(f"the dashboard has no graph {', '.join(sorted(set(THRESHOLD_GRAPHS) - drawn))} to draw on")
    properties["DashboardBody"]["Fn::Sub"] = json.dumps(body, indent=1)


class NoAliases(yaml.SafeDumper):
    """CloudFormation refuses YAML aliases: a value the template holds twice is written out twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def stage_dashboard(template_path: Path, config: Config) -> None:
    """Draw the config's thresholds on the built template's dashboard, and subscribe its receivers.

    The built template's Fn::ForEach loops are written out too: `sam deploy` and `sam local invoke` then read
    it as any SAM template, without the SAM CLI's opt-in for AWS::LanguageExtensions, and CloudFormation gets
    the resources the loops make, one logical id each.
    """
    template = without_language_extensions(
        expand_loops(yaml.load(template_path.read_text(encoding="utf-8"), Loader=TemplateLoader))
    )
    draw_thresholds(template, config)
    add_subscriptions(template, config)
    template_path.write_text(yaml.dump(template, Dumper=NoAliases, sort_keys=False, width=10_000), encoding="utf-8")


def without_language_extensions(template: dict[str, Any]) -> dict[str, Any]:
    """The written-out template without the AWS::LanguageExtensions transform: its loops and defaulted FindInMaps
    are expanded already, and the SAM CLI, given that transform, drops the environment overrides of functions
    under a condition (`sam local invoke --env-vars`)."""
    transforms = template.get("Transform")
    if isinstance(transforms, list):
        kept = [t for t in transforms if t != "AWS::LanguageExtensions"]
        template = {**template, "Transform": kept[0] if len(kept) == 1 else kept}
    return template


def deploy_parameters(config: Config) -> dict[str, str]:
    """The config's answer to each of DERIVED_PARAMETERS, empty ones included: a deploy that left a parameter out
    would keep its previous value (SAM passes UsePreviousValue), so a prefix dropped from the config must reach
    the stack as empty. A matcher config of several parameters stays the config's alone: the stack's parameter
    names one base name, and the track function reads the deploy's before the config's."""
    spec = config.autoscaler
    matcher = spec.matcher_config if spec is not None else None
    return {
        "AutoscalerPrefix": spec.prefix if spec is not None else "",
        "AutoscalerMatcherConfigPath": matcher[0] if matcher is not None and len(matcher) == 1 else "",
        "WatchedAccountIds": ",".join(config_reach(config).named_accounts),
    }


def parameter_overrides(parameters: dict[str, str]) -> str:
    """As `sam deploy --parameter-overrides` reads them from one shell word each: an empty value written `""`."""
    return " ".join(f"{name}={value or '""'}" for name, value in parameters.items())


def add_stage_arguments(stage: argparse.ArgumentParser) -> None:
    stage.add_argument(
        "config", type=Path, metavar="FILE_OR_FOLDER", help=f"a config file, or a folder with {DEPLOYED_NAME}"
    )
    stage.add_argument("--into", type=Path, required=True, metavar="DIR", help="the ConfigLayer's ContentUri")


def add_dashboard_arguments(dashboard: argparse.ArgumentParser) -> None:
    dashboard.add_argument("template", type=Path, metavar="BUILT_TEMPLATE")
    dashboard.add_argument("--config", type=Path, required=True, metavar="STAGED_FILE")


def add_parameters_arguments(derived: argparse.ArgumentParser) -> None:
    derived.add_argument(
        "config", type=Path, metavar="FILE_OR_FOLDER", help=f"a config file, or a folder with {DEPLOYED_NAME}"
    )


def run(args: argparse.Namespace) -> int:
    try:
        if args.command == "stage-config":
            checked = stage_config(args.config, args.into)
            for warning in checked.render_warnings():
                print(warning, file=sys.stderr)
            print(f"{checked.source}: OK: staged as {args.into / DEPLOYED_NAME}")
            print("\n".join(config_reach(checked.config).lines()))
            return 0
        if args.command == "deploy-parameters":
            print(parameter_overrides(deploy_parameters(load_config(config_file(args.config)))))
            return 0
        stage_dashboard(args.template, load_config(args.config))
        print(f"{args.template}: the dashboard draws the thresholds of {args.config}, and its receivers are subscribed")
        return 0
    except ConfigError as error:
        stops = (
            "the deploy stops here"
            if args.command == "deploy-parameters"
            else "nothing was staged: the build stops here"
        )
        print(f"{error.checked()}\n{stops}", file=sys.stderr)
        return 1
    except (OSError, ValueError, KeyError) as error:
        print(f"{args.template if args.command == 'stage-dashboard' else args.config}: {error}", file=sys.stderr)
        return 1
