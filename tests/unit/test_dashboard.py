"""The stack's CloudWatch dashboard (template.yaml's QueuewatchDashboard): a body CloudWatch takes, whose every
metric is one the evaluator and tracker emit, by name, namespace and exact dimension set."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from aws_lambda_powertools.metrics import Metrics
from support import T0, load_template, runner_type, snapshot

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.config.load import load_config
from queuewatch.evaluate import EvaluationResult
from queuewatch.evaluate.forecast_metrics import record_forecasts
from queuewatch.evaluate.telemetry import record_tick
from queuewatch.model.forecast.board import ForecastBoard, RunnerTypeForecast
from queuewatch.track.stage import TrackResult
from queuewatch.track.telemetry import record_job
from queuewatch_cli.commands.build.build import draw_thresholds

REPO = Path(__file__).resolve().parents[2]
STACK = "qw-test"
REGION = "eu-west-1"
PSEUDO = {"AWS::StackName": STACK, "AWS::Region": REGION, "AWS::AccountId": "123456789012", "AWS::Partition": "aws"}

# CloudWatch's limits on a dashboard (Dashboard Body Structure and Syntax; the CloudWatch quotas).
MAX_WIDGETS = 500
MAX_METRICS = 2500
SEARCH_SERIES = 500  # what one SEARCH may return and graph, unless a SORT keeps fewer
BODY_BUDGET = 100_000  # bytes: our own bound, far below what CloudFormation and CloudWatch take
GRID_WIDTH = 24

WIDGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["widgets"],
    "additionalProperties": False,
    "properties": {
        "start": {"type": "string", "pattern": r"^-P(T?\d+[MHDW])+$"},
        "end": {"type": "string"},
        "periodOverride": {"enum": ["auto", "inherit"]},
        "widgets": {
            "type": "array",
            "maxItems": MAX_WIDGETS,
            "items": {
                "type": "object",
                "required": ["type", "x", "y", "width", "height", "properties"],
                "additionalProperties": False,
                "properties": {
                    "type": {"enum": ["metric", "text", "log", "alarm", "explorer"]},
                    "x": {"type": "integer", "minimum": 0, "maximum": GRID_WIDTH - 1},
                    "y": {"type": "integer", "minimum": 0},
                    "width": {"type": "integer", "minimum": 1, "maximum": GRID_WIDTH},
                    "height": {"type": "integer", "minimum": 1, "maximum": 1000},
                    "properties": {"type": "object"},
                },
            },
        },
    },
}
METRIC_PROPERTIES: dict[str, Any] = {
    "type": "object",
    "required": ["metrics", "region", "title"],
    "properties": {
        "region": {"const": REGION},
        "view": {"enum": ["timeSeries", "singleValue", "bar", "pie", "gauge", "table"]},
        "stat": {"type": "string"},
        "period": {"type": "integer", "multipleOf": 60},
        "metrics": {"type": "array", "minItems": 1, "items": {"type": "array", "minItems": 1}},
        "annotations": {
            "type": "object",
            "properties": {
                "horizontal": {
                    "type": "array",
                    "items": {"type": "object", "required": ["value"], "properties": {"value": {"type": "number"}}},
                }
            },
        },
    },
}
STAT = re.compile(r"^(Maximum|Minimum|Average|Sum|SampleCount|p\d{1,2}(\.\d+)?)$")
# SEARCH('{Namespace,Dim,...} MetricName="M" Dim="v" ...', 'Stat', period)
SEARCH_CALL = re.compile(r"SEARCH\('(?P<term>[^']*)', '(?P<stat>[^']+)', (?P<period>\d+)\)")
SCHEMA = re.compile(r"^\{(?P<parts>[^{}]+)\}")
TERM = re.compile(r'(?P<key>\w+)="(?P<value>[^"]*)"')
EXPRESSION = re.compile(r"^(SORT\(|FILL\(|SEARCH\(|, |\d+\)|0\)|MAX|MIN|DESC|ASC|\)|\s)+")


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def substitute(text: str, template: dict[str, Any]) -> str:
    """Fn::Sub as CloudFormation does it, with made-up physical names; fails on a name the template lacks."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name.startswith("!"):
            return "${" + name[1:] + "}"  # ${!Literal} is written as ${Literal}
        if name in PSEUDO:
            return PSEUDO[name]
        if name in template["Parameters"]:
            return str(template["Parameters"][name]["Default"])
        resource, _, attribute = name.partition(".")
        assert resource in template["Resources"], f"${{{name}}} names nothing in the template"
        if attribute == "Arn" and template["Resources"][resource]["Type"] == "AWS::CloudWatch::Alarm":
            return f"arn:aws:cloudwatch:{REGION}:123456789012:alarm:{resource}"
        assert not attribute, name
        return f"{STACK}-{resource}-ABC123"

    return re.sub(r"\$\{([^}]+)\}", value, text)


@pytest.fixture(scope="module")
def body(template: dict[str, Any]) -> dict[str, Any]:
    dashboard = template["Resources"]["QueuewatchDashboard"]["Properties"]
    return json.loads(substitute(dashboard["DashboardBody"]["Fn::Sub"], template))  # type: ignore[no-any-return]


def metric_widgets(body: dict[str, Any]) -> Iterator[dict[str, Any]]:
    return (w["properties"] for w in body["widgets"] if w["type"] == "metric")


def searches(properties: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for entry in properties["metrics"]:
        if isinstance(entry[0], dict) and "expression" in entry[0]:
            expression = entry[0]["expression"]
            for call in SEARCH_CALL.finditer(expression):
                yield expression, call.group("term")


def test_the_body_is_a_dashboard_cloudwatch_takes(template: dict[str, Any], body: dict[str, Any]) -> None:
    raw = substitute(template["Resources"]["QueuewatchDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"], template)
    assert len(raw.encode()) <= BODY_BUDGET
    jsonschema.validate(body, WIDGET_SCHEMA)
    for widget in body["widgets"]:
        assert widget["x"] + widget["width"] <= GRID_WIDTH, widget
        if widget["type"] == "metric":
            jsonschema.validate(widget["properties"], METRIC_PROPERTIES)
            assert STAT.match(widget["properties"]["stat"])
    cells = [
        (x, y)
        for w in body["widgets"]
        for x in range(w["x"], w["x"] + w["width"])
        for y in range(w["y"], w["y"] + w["height"])
    ]
    assert len(cells) == len(set(cells)), "widgets overlap"


def test_each_metric_entry_is_a_metric_or_a_well_formed_expression(body: dict[str, Any]) -> None:
    total = 0
    for properties in metric_widgets(body):
        ids = []
        for entry in properties["metrics"]:
            if isinstance(entry[0], dict):
                [math] = entry
                assert set(math) <= {"expression", "id", "label", "period", "visible", "color", "yAxis"}
                assert re.match(r"^[a-z][A-Za-z0-9_]*$", math["id"]), math["id"]
                ids.append(math["id"])
                expression = math["expression"]
                assert expression.count("(") == expression.count(")"), expression
                # Only SORT, FILL and SEARCH around the search term; a SORT keeps a bounded number.
                outside = SEARCH_CALL.sub("", expression)
                assert EXPRESSION.fullmatch(outside), outside
                kept = re.search(r"(?:DESC|ASC), (\d+)\)$", expression)
                total += int(kept.group(1)) if kept else SEARCH_SERIES
                for call in SEARCH_CALL.finditer(expression):
                    assert STAT.match(call.group("stat")) and int(call.group("period")) % 60 == 0
            else:
                names = [part for part in entry if not isinstance(part, dict)]
                rendering = [part for part in entry if isinstance(part, dict)]
                assert len(rendering) <= 1 and (not rendering or entry[-1] is rendering[0])
                namespace, metric, *dimensions = names
                assert namespace and metric and len(dimensions) % 2 == 0 and len(dimensions) <= 60, entry
                total += 1
        assert len(ids) == len(set(ids))
    assert 0 < total <= MAX_METRICS


def emitted_metrics(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, service: str
) -> set[tuple[str, str, frozenset[tuple[str, str]]]]:
    """What the evaluator and the tracker print as EMF on a busy tick: (namespace, name, dimensions)."""
    monkeypatch.setenv("POWERTOOLS_SERVICE_NAME", service)
    capsys.readouterr()
    metrics = Metrics(namespace="Queuewatch")
    tick = snapshot(T0, runner_type("linux.2xlarge", 14, 6840), runner_type("linux.4xlarge", 0, 0))
    firing = InstanceKey("jobs-queueing", "linux.2xlarge")
    result = EvaluationResult(
        outcome="applied", evaluated_at=T0, observation=tick.snapshot_id, firing=[firing], pages_sent=["p"]
    )
    record_tick(metrics, tick, result, "queued", stack=STACK)
    metrics.flush_metrics()
    filling = RunnerTypeForecast(name="linux.2xlarge", horizon_seconds=600, runners_left=3, maximum=50,
                                 full_in_seconds=360)  # fmt: skip
    record_forecasts(ForecastBoard(at=T0, forecasts=[filling]), "Queuewatch", stack=STACK)
    job = TrackResult(outcome="applied", action="in_progress", job_id=1, status="in_progress",
                      runner_type="linux.2xlarge", queue_seconds=42.0)  # fmt: skip
    record_job(job, "Queuewatch", stack=STACK)
    refused = TrackResult(outcome="refused", action="queued", job_id=2, reason="queued with no created_at")
    record_job(refused, "Queuewatch", stack=STACK)
    found = set()
    for line in capsys.readouterr().out.splitlines():
        blob = json.loads(line)
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            for dimension_set in directive["Dimensions"]:
                dimensions = frozenset((name, str(blob[name])) for name in dimension_set)
                for metric in directive["Metrics"]:
                    found.add((directive["Namespace"], metric["Name"], dimensions))
    return found


def test_every_metric_the_dashboard_graphs_is_one_the_functions_emit(
    template: dict[str, Any], body: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    service = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
    emitted = emitted_metrics(capsys, monkeypatch, service)
    functions = {
        f"{STACK}-{name}-ABC123"
        for name, r in template["Resources"].items()
        if r["Type"] == "AWS::Serverless::Function"
    }
    graphed: set[str] = set()
    for properties in metric_widgets(body):
        for entry in properties["metrics"]:
            if isinstance(entry[0], dict):
                continue
            namespace, metric, *flat = [part for part in entry if not isinstance(part, dict)]
            dimensions = frozenset(zip(flat[::2], flat[1::2], strict=True))
            if namespace == "AWS/Lambda":
                assert dict(dimensions)["FunctionName"] in functions, entry
                continue
            assert (namespace, metric, dimensions) in emitted, f"{entry} is not emitted: {sorted(emitted)}"
            graphed.add(metric)
        for expression, term in searches(properties):
            schema = SCHEMA.match(term)
            assert schema, term
            namespace, *dimension_names = schema.group("parts").split(",")
            terms = dict(TERM.findall(term[schema.end() :]))
            assert terms["Stack"] == STACK, expression  # this stack's metrics alone
            metric = terms.pop("MetricName")
            matches = [
                dims
                for ns, name, dims in emitted
                if ns == namespace and name == metric and {n for n, _ in dims} == set(dimension_names)
                and all(dict(dims).get(k) == v for k, v in terms.items())
            ]  # fmt: skip
            assert matches, f"{expression}: nothing emitted matches; emitted {sorted(emitted)}"
            graphed.add(metric)
    # What the issue asks the dashboard to show, by the names telemetry.py gives them.
    assert {"QueueTime", "QueueSize", "JobQueueTime", "AlertsFiring", "RunnerTypesDegraded", "PagesSent",
            "PagesFailed", "Heartbeat", "JobEventsRefused", "ForecastHeadroom", "RunnerTypesFullSoon",
            "RunnerTypesForecastLate", "RunnerTypesWithoutForecast"} <= graphed  # fmt: skip


def test_per_runner_type_metrics_are_per_stack(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two stacks side by side each see their own runner types: every metric carries the Stack dimension."""
    emitted = emitted_metrics(capsys, monkeypatch, "queuewatch")
    assert {"QueueTime", "QueueSize", "JobQueueTime"} <= {name for _, name, _ in emitted}
    assert all(dict(dims).get("Stack") == STACK for _, _, dims in emitted)


def test_the_alarm_widget_shows_the_stacks_own_alarms(template: dict[str, Any], body: dict[str, Any]) -> None:
    alarms = {name for name, r in template["Resources"].items() if r["Type"] == "AWS::CloudWatch::Alarm"}
    unconditional = {name for name in alarms if "Condition" not in template["Resources"][name]}
    [widget] = [w["properties"] for w in body["widgets"] if w["type"] == "alarm"]
    shown = {arn.rsplit(":", 1)[1] for arn in widget["alarms"]}
    # An alarm that exists only with a condition (tracking) would be a dangling reference without it.
    assert shown == unconditional


def test_threshold_lines_are_the_deployed_configs_rules(template: dict[str, Any]) -> None:
    config = load_config(REPO / "config" / "queuewatch.yaml")
    [default] = [rule for rule in config.resolved_rules if rule.match == ("*",) and not rule.exclude]
    assert "Threshold" not in " ".join(template["Parameters"])  # no number kept equal to the config by hand
    built = copy.deepcopy(template)
    draw_thresholds(built, config)  # what make build does to the built template
    drawn = json.loads(
        substitute(built["Resources"]["QueuewatchDashboard"]["Properties"]["DashboardBody"]["Fn::Sub"], built)
    )
    lines = {
        p["title"]: [a["value"] for a in p.get("annotations", {}).get("horizontal", [])] for p in metric_widgets(drawn)
    }
    assert lines["Queue time per runner type (oldest job, seconds)"] == [default.queue_time_threshold]
    assert lines["Queue size per runner type (jobs queued)"] == [default.queue_size_threshold]


def test_the_evaluator_is_told_the_dashboards_name(template: dict[str, Any]) -> None:
    resources = template["Resources"]
    name = resources["QueuewatchDashboard"]["Properties"]["DashboardName"]
    variables = resources["EvaluateFunction"]["Properties"]["Environment"]["Variables"]
    assert variables["DASHBOARD_NAME"] == name == {"Fn::Sub": "${AWS::StackName}-queuewatch"}
