"""Routes in the config: each receiver's filter policy, the checks that refuse a route that cannot work, the
subscriptions `make build` writes, `queuewatch routes test`, and the docs' two-teams recipe as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import load_template

from queuewatch.config.load import ConfigError, parse_config
from queuewatch.config.routes import Receiver, RouteSpec, Routing, policy_matches
from queuewatch.model.rules import ALERT_KINDS, Priority
from queuewatch_cli.commands.build.subscriptions import add_subscriptions
from queuewatch_cli.main import main

ROOT = Path(__file__).parents[2]
BASE = """\
version: 1
defaults: {rule: {team: ci-infra}}
runner_types:
  - {name: linux.2xlarge, queue: {name: ci-queued-builds}}
  - {name: linux.gpu, queue: {name: gpu-queued-builds}, team: gpu-infra}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}, group_by: team}
"""
ROUTED = (
    BASE
    + """\
receivers:
  - {name: ci-pager, pager: "https://pager.example.com/ci"}
  - {name: gpu-pager, pager: "https://pager.example.com/gpu"}
  - {name: audit, sqs: "arn:aws:sqs:us-east-1:123456789012:audit"}
  - {name: chat, chat: true}
routes:
  - {receiver: ci-pager, teams: [ci-infra], priority: P2}
  - {receiver: gpu-pager, teams: [gpu-infra], priority: P1}
  - {receiver: gpu-pager, teams: [gpu-infra], kinds: [ticket]}
  - {receiver: audit, kinds: [page, ticket, monitor]}
  - {receiver: chat}
"""
)


def reached(routing: Routing, team: str, priority: str, kind: str) -> list[str]:
    return [r.name for r in routing.destinations({"team": team, "priority": priority, "kind": kind})]


def test_each_receiver_gets_its_routes_filter_policy() -> None:
    routing = parse_config(ROUTED).routing
    assert routing.filter_policy("ci-pager") == {
        "kind": ["page", "monitor"],
        "priority": ["P0", "P1", "P2"],
        "team": ["ci-infra"],
    }
    assert routing.filter_policy("gpu-pager") == {
        "$or": [
            {"kind": ["page", "monitor"], "priority": ["P0", "P1"], "team": ["gpu-infra"]},
            {"kind": ["ticket"], "team": ["gpu-infra"]},
        ]
    }
    assert reached(routing, "gpu-infra", "P1", "page") == ["gpu-pager", "audit", "chat"]
    assert reached(routing, "gpu-infra", "P2", "page") == ["audit", "chat"]
    assert reached(routing, "gpu-infra", "P3", "ticket") == ["gpu-pager", "audit"]
    assert reached(routing, "ci-infra", "P3", "ticket") == ["audit"]  # no route names ticket for ci's pager


def test_without_routes_every_alert_goes_to_chat_and_nothing_pages() -> None:
    routing = parse_config(BASE).routing
    for kind in ALERT_KINDS:
        assert reached(routing, "ci-infra", "P0", kind) == ["chat"]


BROKEN = [
    ("  - {receiver: ci-pagr}\n", "routes[5].receiver: found 'ci-pagr', expected one of: ci-pager, gpu-pager"),
    ("  - {receiver: chat, teams: [gpu-infa]}\n", "routes[5].teams: found 'gpu-infa'; did you mean 'gpu-infra'?"),
]


@pytest.mark.parametrize(("added", "message"), BROKEN)
def test_a_route_that_cannot_work_is_refused_with_its_fix(added: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(ROUTED + added)
    assert message in str(raised.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BASE + "receivers:\n  - {name: mail, email: a@example.com}\n", "receivers without routes"),
        (
            BASE + "receivers:\n  - {name: mail, email: a@example.com}\n  - {name: idle, email: b@example.com}\n"
            "routes:\n  - {receiver: mail}\n",
            "'idle' has no route, so it would get nothing; add - {receiver: idle} under routes",
        ),
        (
            BASE + "receivers:\n  - {name: mail, email: a@example.com, pager: 'https://x.example.com'}\n"
            "routes:\n  - {receiver: mail}\n",
            "found pager and email, expected exactly one of pager, email, sqs, chat",
        ),
        (
            BASE + "receivers:\n  - {name: p, pager: 'http://x.example.com'}\nroutes:\n  - {receiver: p}\n",
            "found 'http://x.example.com', expected an https:// URL",
        ),
        (
            BASE + "receivers:\n  - {name: a-1b, email: a@example.com}\n  - {name: a1b, email: b@example.com}\n"
            "routes:\n  - {receiver: a-1b}\n  - {receiver: a1b}\n",
            "two names make one resource name",
        ),
    ],
)
def test_receivers_that_cannot_work_are_refused(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config(text)
    assert message in str(raised.value)


def test_a_filter_policy_past_snss_150_combinations_is_refused_at_check_config() -> None:
    teams = [f"team-{n}" for n in range(26)]
    text = BASE.replace("runner_types:\n", "runner_types:\n" + "".join(
        f"  - {{name: r{n}, queue: {{name: q{n}}}, team: {team}}}\n" for n, team in enumerate(teams)
    ))  # fmt: skip

    def routed(count: int) -> str:  # each team x 2 kinds (page, monitor) x 3 priorities (P0 to P2)
        listed = ", ".join(teams[:count])
        route = f"{{receiver: mail, priority: P2, teams: [{listed}]}}"
        return f"receivers:\n  - {{name: mail, email: a@example.com}}\nroutes:\n  - {route}\n"

    parse_config(text + routed(25))
    with pytest.raises(ConfigError, match=r"makes 156 combinations .* over SNS's 150"):
        parse_config(text + routed(26))


def test_the_build_subscribes_each_receiver_but_chat_with_its_filter_policy() -> None:
    template = load_template()
    config = parse_config(ROUTED)
    add_subscriptions(template, config)
    resources = template["Resources"]
    made = {name: r["Properties"] for name, r in resources.items() if name.startswith("Receiver")}
    assert set(made) == {
        "ReceiverCiPagerSubscription",
        "ReceiverCiPagerHeartbeatSubscription",
        "ReceiverGpuPagerSubscription",
        "ReceiverGpuPagerHeartbeatSubscription",
        "ReceiverAuditSubscription",
    }
    gpu = made["ReceiverGpuPagerSubscription"]
    assert (gpu["Protocol"], gpu["Endpoint"]) == ("https", "https://pager.example.com/gpu")
    assert gpu["FilterPolicy"] == config.routing.filter_policy("gpu-pager")
    assert made["ReceiverAuditSubscription"]["Protocol"] == "sqs"
    # Pages go to the stack's AlertTopic, or the shared topic in its own region, as the evaluator publishes.
    env = resources["EvaluateFunction"]["Properties"]["Environment"]["Variables"]
    assert gpu["TopicArn"] == env["ALERT_TOPIC_ARN"]
    heartbeat = made["ReceiverGpuPagerHeartbeatSubscription"]
    assert heartbeat["TopicArn"] == {"Ref": "MonitorTopic"} and "FilterPolicy" not in heartbeat
    for name in made:
        assert name in resources and resources[name]["Type"] == "AWS::SNS::Subscription"


def test_the_template_subscribes_nothing_by_hand() -> None:
    template = load_template()
    assert not {"PagerEndpoint", "PagerFilterPolicy", "AlertEmail", "EmailFilterPolicy"} & set(template["Parameters"])
    assert not [n for n, r in template["Resources"].items() if r["Type"] == "AWS::SNS::Subscription"]


@given(
    floors=st.lists(st.sampled_from([None, *Priority]), min_size=1, max_size=4),
    teams=st.lists(st.sampled_from([[], ["ci-infra"], ["gpu-infra"], ["ci-infra", "gpu-infra"]]), min_size=4),
    paged=st.lists(st.sampled_from(list(Priority)), min_size=1, max_size=5),
    team=st.sampled_from(["ci-infra", "gpu-infra"]),
)
def test_no_route_by_priority_strands_a_resolve(
    floors: list[Priority | None], teams: list[list[str]], paged: list[Priority], team: str
) -> None:
    """An episode pages at some priorities (an escalation, a repeat lowered during a GitHub incident); its
    resolve carries the episode's highest (docs/guarantees.md, I1). Every receiver any page reached gets it."""
    receivers = [Receiver(name=f"r{n}", email=f"r{n}@example.com") for n in range(len(floors))]
    routes = [RouteSpec(receiver=f"r{n}", priority=floor, teams=teams[n]) for n, floor in enumerate(floors)]
    routing = Routing(receivers=receivers, routes=routes)
    got_a_page = {r for p in paged for r in reached(routing, team, p.value, "page")}
    highest = min(paged, key=list(Priority).index)
    resolved = set(reached(routing, team, highest.value, "page"))
    assert got_a_page <= resolved
    # and the resolve reaches no receiver that took no page of the episode
    assert resolved <= got_a_page


def test_a_list_attribute_matches_on_any_item() -> None:
    assert policy_matches({"teams": ["rocm"]}, {"teams": ["ci-infra", "rocm"]})
    assert not policy_matches({"team": ["rocm"]}, {"teams": ["rocm"]})


def test_routes_test_answers_from_the_same_policies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(ROUTED, encoding="utf-8")
    assert main(["routes", "test", "--config", str(path), "--team", "gpu-infra", "--priority", "P1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "a page of team gpu-infra at P1 goes to: gpu-pager, audit, chat"
    assert main(["routes", "test", "--config", str(path), "--team", "gpu-infr", "--priority", "P1"]) == 2
    assert "did you mean 'gpu-infra'?" in capsys.readouterr().err


RECIPE = re.compile(r"<!-- recipe: two-teams-two-pagers -->\n```yaml\n(?P<config>.*?)```", re.S)
CONSOLE = re.compile(r"```console\n(?P<session>\$ queuewatch routes test.*?)```", re.S)


def test_the_two_teams_two_pagers_recipe_works_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = (ROOT / "docs" / "alerts.md").read_text(encoding="utf-8")
    recipe, console = RECIPE.search(doc), CONSOLE.search(doc)
    assert recipe and console, "docs/alerts.md: the two-teams-two-pagers recipe and its session"
    (tmp_path / "fleet.yaml").write_text(recipe["config"], encoding="utf-8")
    commands = re.split(r"^\$ ", console["session"], flags=re.M)[1:]
    assert len(commands) == 2
    for block in commands:
        command, *expected = block.rstrip("\n").splitlines()
        argv = command.replace("--config fleet.yaml", f"--config {tmp_path / 'fleet.yaml'}").split()[1:]
        assert main(argv) == 0
        assert capsys.readouterr().out.splitlines() == expected, command
    built = load_template()
    add_subscriptions(built, parse_config(recipe["config"]))
    pagers = {r["Properties"]["Endpoint"] for n, r in built["Resources"].items() if n.startswith("Receiver")}
    assert {p for p in pagers if "pagerduty" in p} == {
        "https://events.pagerduty.com/integration/CI_KEY/enqueue",
        "https://events.pagerduty.com/integration/GPU_KEY/enqueue",
    }
