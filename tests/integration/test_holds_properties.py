"""I1-I5 of docs/guarantees.md over random sequences of ticks, through the real evaluate stage (moto's DynamoDB)
and a fake SNS that hands each page to the receivers whose filter policy takes it.

Steps, in any order: ticks, breaches and clears, escalations, SLO burns, silences added and expired, a
maintenance window opening as time passes, GitHub's status known, unknown or in incident, rule changes, and each
runner type's forecast turning late, falling back or going unread (both queue rules have `forecast: 10m`).
The invariants are checked after every step on everything the receivers got and the state left behind; with
the forecast, also: a forecast episode the queue then joins is one episode (one first page), and a resolve says
"did not happen" exactly where the episode stood on forecasts alone (never a plain one, never a superseded one).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, cast

import boto3
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from moto import mock_aws
from support import T0, runner_type, shipped_pager_priorities, snapshot

from queuewatch.adapters.state_table.alerts import load_state, put_silence, set_silence_end
from queuewatch.alerting.silences import GITHUB_HOLD, SilenceRecord
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate import Stack
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.forecast.outlook import Outlook, outlook
from queuewatch.model.github_status import GitHubIncident, GitHubStatus
from queuewatch.model.rules import HEALTH_RULE
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, SloReading, SloWindowCount, Snapshot
from queuewatch_cli.devkit.moto_tables import create_state_table

STEPS = 20  # steps per sequence; the examples per run are the profile's (tests/conftest.py)
RUNNER_TYPES = ("linux-x64", "gpu", "fast")  # `fast` shares its name with an SLO's burn pair
SLOS = ("deploys", "builds")
SPANS = (300, 1800, 3600, 21600, 259200)
BURN = {3600: 200, 300: 200}  # 20% late over 1h and 5m: the fast pair pages
CONFIG = """
version: 1
defaults: {rule: {team: ci-infra, keep_firing_for: 0s, for: 0s, repeat_interval: 3m}}
runner_types:
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds}, team: TEAM}
  - {name: gpu, queue: {name: gh-ci-gpu-queued-builds}, team: gpu-team}
  - {name: fast, queue: {name: gh-ci-fast-queued-builds}}
rules:
  - {name: queueing, thresholds: {queue_time: 5m}, priority: LOW, forecast: 10m}
  - {name: escalated, thresholds: {queue_time: 30m}, priority: P1, forecast: 10m}
slos:
  - {name: deploys, objective: 99%, queue_time_under: 2m, priority: P1, team: deploy-team}
  - {name: builds, objective: 99%, queue_time_under: 2m, priority: P2, team: build-team}
maintenance_windows:
  - {name: patching, time_zone: UTC, weekdays: [saturday], start: "18:08", end: "18:20", rules: [queueing]}
github_status: {on_incident: HOW}
"""
THRESHOLDS = {"queueing": 300, "escalated": 1800}
HORIZON = 600
# A pool about to fill (its jobs will wait past both rules' queue time) and a quiet one (none will).
LATE = ForecastInputs(
    window_seconds=600, arrived=42, run_seconds=2400, running=47, running_seconds=60, runners=47, maximum=50
)
CALM = ForecastInputs(window_seconds=600, arrived=1, run_seconds=600, running=0, runners=0, maximum=50)
FORECASTS = {"late": LATE, "calm": CALM, "unread": None}
INCIDENT = [GitHubIncident(name="Incident with Actions", status="investigating", impact="major", url="https://x")]


def pager_priorities() -> list[str]:
    return shipped_pager_priorities()


@dataclass(frozen=True)
class Receiver:
    """A subscription: its filter policy on the message attributes (an absent key: any value)."""

    name: str
    policy: dict[str, list[str]]

    def takes(self, attributes: dict[str, Any]) -> bool:
        for key, allowed in self.policy.items():
            found = attributes.get(key)
            if found is None:
                return False
            values = json.loads(found["StringValue"]) if found["DataType"] == "String.Array" else [found["StringValue"]]
            if not set(values) & set(allowed):
                return False
        return True


@dataclass
class FakeSns:
    """SNS as the stage uses it: Publish; each message goes to the receivers whose policy takes it."""

    receivers: list[Receiver]
    got: list[tuple[dict[str, Any], frozenset[str]]] = field(default_factory=list)  # (alert, receivers)

    def publish(self, **kwargs: Any) -> dict[str, str]:
        message = kwargs["Message"]
        if kwargs.get("MessageStructure") == "json":
            message = json.loads(message)["default"]
        attributes = kwargs["MessageAttributes"]
        self.got.append((json.loads(message), frozenset(r.name for r in self.receivers if r.takes(attributes))))
        return {"MessageId": uuid.uuid4().hex}


@dataclass
class Episode:
    priorities: list[str] = field(default_factory=list)
    reached: set[str] = field(default_factory=set)
    rule: str = ""
    first_forecast: bool = False  # its first page was a forecast
    forecast_only: bool = False  # the model's: it opened on forecasts alone and no plain breach joined since


def late_within(inputs: ForecastInputs | None, threshold: int, waiting: int, oldest: float) -> bool:
    """What the steps mean by a forecast: checked against the forecast itself (test_the_steps_forecasts)."""
    if inputs is None:
        return False
    found = outlook(inputs, waiting=waiting, oldest_seconds=oldest, at=T0, horizon_seconds=HORIZON)
    late = found.lateness(threshold) if isinstance(found, Outlook) else None
    return late is not None and late.queued_in_seconds <= HORIZON


class World(RuleBasedStateMachine):
    """The queues, the forecasts, silences and ticks, with what every receiver got checked as it arrives."""

    def __init__(self) -> None:
        super().__init__()
        self.pager = pager_priorities()  # before the mock starts: nothing here may leave it running
        self.mock = mock_aws()
        self.mock.start()
        self.dynamodb = boto3.client("dynamodb", region_name="us-east-1")
        create_state_table(self.dynamodb, "state")
        teams = ("ci-infra", "gpu-team", "deploy-team", "build-team")
        self.sns = FakeSns(
            [Receiver("e-mail", {}), *(Receiver(f"pager:{t}", {"priority": self.pager, "teams": [t]}) for t in teams)]
        )
        self.stack = Stack(
            name="t", table="state", topic_arn="arn:aws:sns:us-east-1:123456789012:alerts", region="us-east-1"
        )
        self.now = T0
        self.queue_time = dict.fromkeys(RUNNER_TYPES, 0.0)
        self.burning = dict.fromkeys(SLOS, False)
        self.github: GitHubStatus | None = GitHubStatus(checked_at=T0, actions="operational")
        self.variant = (False, "P2")  # (linux-x64 moved to gpu-team, the queueing rule's priority)
        self.silences: list[str] = []
        self.added = 0
        self.held_at_tick = False  # a silence or GitHub hold could hold back a page on the last tick
        self.open: dict[str, Episode] = {}  # dedup key -> its episode, while open
        self.checked = 0
        self.held_before: dict[str, tuple[str, ...]] = {}
        self.forecast = dict.fromkeys(RUNNER_TYPES, "unread")
        # The model of each (rule, runner type) alert: alive (breached), and whether its plain condition breached.
        self.happened: dict[tuple[str, str], bool] = {}
        self.tainted: set[str] = set()  # rules with a plain breach among their alerts, before or after this tick

    def teardown(self) -> None:
        self.mock.stop()

    @initialize(how=st.sampled_from(["hold", "lower"]), forecast=st.sampled_from(sorted(FORECASTS)))
    def choose(self, how: str, forecast: str) -> None:
        self.how = how
        self.forecast = dict.fromkeys(RUNNER_TYPES, forecast)

    def config(self) -> Config:
        moved, low = self.variant
        text = CONFIG.replace("HOW", self.how).replace("LOW", low).replace("TEAM", "gpu-team" if moved else "ci-infra")
        return parse_config(text, source="holds.yaml")

    def observation(self) -> Snapshot:
        types = []
        for name in RUNNER_TYPES:
            seconds = self.queue_time[name]
            found = runner_type(name, 4 if seconds else 0, seconds)
            signals = {**found.signals, SignalName.JOBS_QUEUED: Reading.of(4 if seconds else 0)}
            inputs = FORECASTS[self.forecast[name]]
            types.append(found.model_copy(update={"signals": signals, "forecast": inputs}))
        slos = [
            SloReading(
                name=name,
                windows=[
                    SloWindowCount(
                        seconds=s,
                        good=1000 - BURN.get(s, 0) * self.burning[name],
                        bad=BURN.get(s, 0) * self.burning[name],
                    )
                    for s in SPANS
                ],
            )
            for name in SLOS
        ]
        return snapshot(self.now, *types).model_copy(update={"slos": slos, "jobs_tracked": True})

    # Steps that change the world; only a tick judges it.
    @rule(name=st.sampled_from(RUNNER_TYPES), seconds=st.sampled_from([0.0, 600.0, 3600.0]))
    def queue(self, name: str, seconds: float) -> None:
        self.queue_time[name] = seconds  # 600: the P2 rule; 3600: the P1 rule too (an escalation)

    @rule(name=st.sampled_from([*RUNNER_TYPES, "*"]), forecast=st.sampled_from(sorted(FORECASTS)))
    def forecast_turns(self, name: str, forecast: str) -> None:
        # late: predicted to queue; calm: falls back; unread: no forecast. `*`: the whole fleet at once.
        for each in RUNNER_TYPES if name == "*" else (name,):
            self.forecast[each] = forecast

    @rule(match=st.sampled_from([*RUNNER_TYPES, "*"]), rule_name=st.sampled_from([None, "queueing", "slo:builds"]))
    def silence(self, match: str, rule_name: str | None) -> None:
        self.added += 1
        silence_id = f"s-{self.added}"
        record = SilenceRecord(
            silence_id, (match,), rule_name, None, self.now, self.now + timedelta(minutes=5), "t", "t"
        )
        put_silence(self.dynamodb, "state", record)
        self.silences.append(silence_id)

    @rule()
    def expire_silence(self) -> None:
        if self.silences:
            set_silence_end(self.dynamodb, "state", self.silences.pop(0), self.now)

    @rule(minutes=st.sampled_from([1, 1, 1, 4]))
    def tick(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)
        github_unsure = self.github is None or self.github.actions != "operational"
        self.held_at_tick = bool(self.silences) or (self.how == "hold" and github_unsure)
        state = load_state(self.dynamodb, "state")
        self.held_before = {str(k): i.held_by for k, i in state.instances.items()}
        start = len(self.sns.got)
        self.judge_forecasts()
        evaluate(
            self.observation(),
            self.config(),
            self.dynamodb,
            cast(Any, self.sns),
            self.stack,
            clock=lambda: self.now,
            github=self.github,
        )
        for alert, reached in self.sns.got[start:]:
            self.account(alert, reached)
        self.check_unknown_kept_holds(self.sns.got[start:])
        self.check_known_read_decides_the_hold()

    def judge_forecasts(self) -> None:
        """The model of the rules' forecast verdicts: a plain breach, else a forecast one where late. An alert's
        plain breach marks its rule's open episodes for good, as it does before and after the tick that ends it."""
        self.tainted = set()
        for rule_name, threshold in THRESHOLDS.items():
            for name in RUNNER_TYPES:
                seconds = self.queue_time[name]
                plain = seconds > threshold
                late = late_within(FORECASTS[self.forecast[name]], threshold, 4 if seconds else 0, seconds)
                before = self.happened.pop((rule_name, name), None)
                if before:
                    self.tainted.add(rule_name)
                if plain or late:
                    self.happened[(rule_name, name)] = bool(before) or plain
                    if plain:
                        self.tainted.add(rule_name)
        for episode in self.open.values():
            if episode.rule in self.tainted:
                episode.forecast_only = False

    def account(self, alert: dict[str, Any], reached: frozenset[str]) -> None:
        key = alert["dedup_key"]
        if alert["status"] == "resolved":
            episode = self.open.pop(key, None)
            assert episode is not None, f"a resolve of no open episode: {key}"
            if alert["rule"] in THRESHOLDS:
                # A forecast that fell back resolves as not happened; a plain or superseded episode never does.
                expected = episode.forecast_only and not alert["superseded_by"]
                assert alert["did_not_happen"] == expected, (key, alert["did_not_happen"], expected)
                assert not (episode.first_forecast is False and alert["did_not_happen"]), key
            else:
                assert not alert["did_not_happen"], key
            # I1: the resolve reaches every receiver any page of its episode reached, at its highest priority.
            assert alert["priority"] == min(episode.priorities), (alert["priority"], episode.priorities)
            assert episode.reached <= reached, (episode.reached - reached, alert["rule"])
            # I3: only a page of the same problem supersedes: queue rules, never an SLO's page.
            if alert["superseded_by"]:
                assert not alert["rule"].startswith("slo:"), alert["rule"]
            return
        if alert["page"] == "new":
            # I2: an episode opens only where none is open: no hold's end opens a second one, and no queue that
            # forms after its forecast paged.
            assert key not in self.open, f"a second episode of {key} opened while one was open"
            rule_name = alert["rule"]
            self.open[key] = Episode(
                rule=rule_name,
                first_forecast=alert["forecast"],
                forecast_only=rule_name in THRESHOLDS and rule_name not in self.tainted,
            )
        else:
            assert key in self.open, f"a {alert['page']} page of no open episode: {key}"
        episode = self.open[key]
        episode.priorities.append(alert["priority"])
        episode.reached |= reached
        # I5: the page counts each tracked job once: 4 per runner type listed that queues (one on a forecast
        # alone may list none).
        if alert.get("jobs_queued") is not None and not alert["rule"].startswith("slo:"):
            queueing = [f for f in alert["runner_types"] if f["queue_size"]]
            assert alert["jobs_queued"] == 4 * len(queueing), alert["jobs_queued"]
        # A page says it is a forecast only where nothing it lists has queued past the threshold (as judged).
        if alert["forecast"]:
            threshold = THRESHOLDS[alert["rule"]]
            for row in alert["runner_types"]:
                assert self.queue_time[row["runner_type"]] <= threshold, (key, row["runner_type"])

    def check_unknown_kept_holds(self, sent: list[tuple[dict[str, Any], frozenset[str]]]) -> None:
        """I4: on a status read that failed, what GitHub's incident held back stays held back."""
        if self.github is None or self.github.actions != "unknown" or self.how != "hold":
            return
        after = {str(k): i for k, i in load_state(self.dynamodb, "state").instances.items()}
        for key, held in self.held_before.items():
            if GITHUB_HOLD in held and key in after and not key.startswith(HEALTH_RULE):
                assert GITHUB_HOLD in after[key].held_by, f"{key} released by an unknown read"
        paged = [a for a, _ in sent if a["status"] == "firing" and a["rule"] != HEALTH_RULE]
        assert not (paged and any(GITHUB_HOLD in h for h in self.held_before.values())), paged

    def check_known_read_decides_the_hold(self) -> None:
        """Under `hold`, a known read decides GitHub's hold afresh at its tick: an incident holds every alert but
        queuewatch's own, an operational read (or none) holds none. The tick's read, never an earlier tick's."""
        if self.how != "hold" or (self.github is not None and self.github.actions == "unknown"):
            return
        incident = self.github is not None and self.github.degraded
        for key, instance in load_state(self.dynamodb, "state").instances.items():
            if key.rule != HEALTH_RULE:
                assert (GITHUB_HOLD in instance.held_by) == incident, (str(key), instance.held_by, self.github)


class Holds(World):
    """Every hold at once: SLO burns, GitHub's status and rule changes beside the queues and forecasts."""

    @rule(name=st.sampled_from(SLOS), burning=st.booleans())
    def burn(self, name: str, burning: bool) -> None:
        self.burning[name] = burning

    @rule(status=st.sampled_from(["operational", "unknown", "incident", "none"]))
    def github_reads(self, status: str) -> None:
        if status == "none":
            self.github = None
        elif status == "unknown":
            self.github = GitHubStatus.unknown(self.now, "timeout")
        elif status == "incident":
            self.github = GitHubStatus(checked_at=self.now, actions="partial_outage", incidents=INCIDENT)
        else:
            self.github = GitHubStatus(checked_at=self.now, actions="operational")

    @rule(moved=st.booleans(), low=st.sampled_from(["P2", "P3"]))
    def change_rules(self, moved: bool, low: str) -> None:
        self.variant = (moved, low)

    @invariant()
    def slos_never_hold_each_other_back(self) -> None:
        """I3: an SLO burning, with nothing that could hold it, has its own page open."""
        if self.held_at_tick or not self.sns.got:
            return  # something could hold it back on the tick that judged it
        for name in SLOS:
            if self.burning[name] and self.last_tick_judged_burn(name):
                assert any(e for k, e in self.open.items() if self.rule_of.get(k) == f"slo:{name}"), name

    def last_tick_judged_burn(self, name: str) -> bool:
        state = load_state(self.dynamodb, "state")
        return any(k.rule == f"slo:{name}" and i.status.value == "firing" for k, i in state.instances.items())

    @property
    def rule_of(self) -> dict[str, str]:
        return {a["dedup_key"]: a["rule"] for a, _ in self.sns.got}


class ForecastEpisodes(World):
    """The forecast's episodes alone (queues, forecasts, silences, ticks): more of its turns per sequence."""

    @rule(
        name=st.sampled_from([*RUNNER_TYPES, "*"]),
        forecast=st.sampled_from(sorted(FORECASTS)),
        seconds=st.sampled_from([0.0, 0.0, 600.0, 3600.0]),
    )
    def turn_then_tick(self, name: str, forecast: str, seconds: float) -> None:
        """A runner type's forecast and queue move, and the next tick judges them: episodes open and close."""
        self.forecast_turns(name, forecast)
        for each in RUNNER_TYPES if name == "*" else (name,):
            self.queue(each, seconds)
        self.tick(1)


Holds.TestCase.settings = settings(stateful_step_count=STEPS)
test_holds_compose = pytest.mark.usefixtures("aws_env")(Holds.TestCase)
ForecastEpisodes.TestCase.settings = settings(stateful_step_count=STEPS)
test_forecast_episodes = pytest.mark.usefixtures("aws_env")(ForecastEpisodes.TestCase)


def test_githubs_hold_follows_each_known_read_through_an_incident_and_an_unknown_read() -> None:
    """The machine's steps in the order its default run seldom draws: an incident under `hold` while queues
    breach, a read that fails while another queue breaches, GitHub's recovery, each checked by the machine (I2, I4
    and the read deciding the hold) at its tick."""
    machine = Holds()
    try:
        machine.choose("hold", "unread")
        machine.queue(RUNNER_TYPES[0], 600.0)
        machine.queue(RUNNER_TYPES[1], 3600.0)
        machine.tick(1)
        held_by_github = 0
        for status in ("incident", "unknown", "incident", "operational", "unknown", "operational"):
            machine.github_reads(status)
            if status == "unknown":
                # A queue that breaches while the read fails: the last known read decides whether it is held.
                machine.queue(RUNNER_TYPES[2], 600.0 if machine.queue_time[RUNNER_TYPES[2]] == 0 else 0.0)
            machine.tick(1)
            machine.tick(4)
            stored = load_state(machine.dynamodb, "state").instances.values()
            held_by_github += sum(GITHUB_HOLD in instance.held_by for instance in stored)
        assert held_by_github, "the incident held the breaching queues back: the checks had something to judge"
        assert any(a["status"] == "firing" for a, _ in machine.sns.got), "the queues paged once GitHub recovered"
    finally:
        machine.teardown()


@pytest.mark.parametrize(("waiting", "oldest"), [(0, 0.0), (4, 600.0), (4, 3600.0)])
def test_the_steps_forecasts_mean_what_they_say(waiting: int, oldest: float) -> None:
    for threshold in THRESHOLDS.values():
        assert late_within(LATE, threshold, waiting, oldest) or oldest > threshold
        assert not late_within(CALM, threshold, waiting, oldest) or oldest > threshold
