"""How the holds combine, through the real evaluate stage on moto (docs/guarantees.md): an SLO's page never holds
back another's (I3), a resolve goes out at the highest priority its episode paged (I1), and an unknown GitHub
status never lifts a hold, so a held alert keeps its one episode (I2, I4)."""

from __future__ import annotations

from typing import Any

import pytest
from support import (
    T0,
    Inbox,
    StackInMoto,
    arriving_now,
    minutes,
    runner_type,
    shipped_pager_priorities,
    snapshot,
    with_signals,
)

from queuewatch.adapters.state_table.alerts import put_silence
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.github_status import GitHubIncident, GitHubStatus
from queuewatch.model.snapshot import Reading, SloReading, SloWindowCount, Snapshot

SPANS = (300, 1800, 3600, 21600, 259200)
FAST = {3600: 200, 300: 200}  # 20% late over 1h and 5m: burn 20, past the fast pair's 14.4

TWO_SLOS = """
version: 1
defaults: {rule: {team: ci-infra}}
runner_types:
  - {name: fast, queue: {name: gh-ci-fast-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 30m}, priority: P3}
slos:
  - {name: deploys, objective: 99%, queue_time_under: 2m, priority: P1, team: deploy-team}
  - {name: builds, objective: 99%, queue_time_under: 2m, priority: P2, team: build-team}
"""


def pager_filter() -> list[str]:
    """The priorities the shipped config's routes let through to its pager."""
    return shipped_pager_priorities()


def burning(minute: float, *names: str, queue_time: float = 0) -> Snapshot:
    """Each SLO named burns fast; the others are fine. The runner type `fast` queues `queue_time` seconds."""
    readings = [
        SloReading(
            name=name,
            windows=[
                SloWindowCount(
                    seconds=s, good=1000 - FAST.get(s, 0) * (name in names), bad=FAST.get(s, 0) * (name in names)
                )
                for s in SPANS
            ],
        )
        for name in ("deploys", "builds")
    ]
    base = snapshot(minutes(minute), runner_type("fast", 3 if queue_time else 0, queue_time))
    return base.model_copy(update={"slos": readings})


def run(
    config: Config, *observations: Snapshot, github: list[GitHubStatus | None] | None = None
) -> list[list[dict[str, Any]]]:
    moto = StackInMoto.create()
    inbox = Inbox(moto.sns)
    sent = []
    for index, observation in enumerate(observations):
        status = github[index] if github else None
        evaluate(
            observation, config, moto.dynamodb, moto.sns, moto.stack, clock=arriving_now(observation), github=status
        )
        sent.append(inbox.drain())
    return sent


@pytest.mark.usefixtures("aws")
def test_two_slos_burning_together_each_page_their_own_team() -> None:
    sent = run(parse_config(TWO_SLOS), *(burning(m, "deploys", "builds", queue_time=3600) for m in range(4)))
    pages = [(p["rule"], p["team"], p["status"], p["page"]) for p in sent[0]]
    assert sorted(pages) == [
        ("jobs-queueing", "ci-infra", "firing", "new"),  # the runner type named `fast` is its own problem too
        ("slo:builds", "build-team", "firing", "new"),
        ("slo:deploys", "deploy-team", "firing", "new"),
    ]
    assert all(not pages for pages in sent[1:])


@pytest.mark.usefixtures("aws")
def test_an_slo_that_starts_burning_later_never_supersedes_another() -> None:
    observations = [burning(0, "builds"), *(burning(m, "deploys", "builds") for m in range(1, 4))]
    sent = run(parse_config(TWO_SLOS), *observations)
    assert [(p["rule"], p["status"]) for p in sent[0]] == [("slo:builds", "firing")]
    assert [(p["rule"], p["status"]) for p in sent[1]] == [("slo:deploys", "firing")]
    assert all(not pages for pages in sent[2:])  # builds burns on: no "superseded" resolve


LOWER = """
version: 1
defaults: {rule: {team: ci-infra, keep_firing_for: 0s}}
runner_types:
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}, priority: P1, repeat_interval: 2m}
github_status: {on_incident: HOW}
"""
INCIDENT = GitHubStatus(
    checked_at=T0,
    actions="partial_outage",
    incidents=[GitHubIncident(name="Incident with Actions", status="investigating", impact="major", url="https://x")],
)
FINE = GitHubStatus(checked_at=T0, actions="operational")
UNKNOWN = GitHubStatus.unknown(T0, "timeout")


def queued(minute: float, seconds: float) -> Snapshot:
    return snapshot(minutes(minute), runner_type("linux-x64", 12 if seconds else 0, seconds))


@pytest.mark.usefixtures("aws")
def test_a_resolve_after_a_lowered_repeat_goes_out_at_the_episodes_priority_and_reaches_the_pager() -> None:
    config = parse_config(LOWER.replace("HOW", "lower"))
    sent = run(
        config,
        queued(0, 1800),
        queued(2, 1800),  # the repeat, lowered during GitHub's incident
        queued(3, 0),  # cleared: the resolve
        github=[FINE, INCIDENT, INCIDENT],
    )
    said = [[(p["status"], p["page"], p["priority"]) for p in pages] for pages in sent]
    assert said == [[("firing", "new", "P1")], [("firing", "repeat", "P3")], [("resolved", "resolved", "P1")]]
    pager = pager_filter()
    resolve = sent[2][0]
    assert resolve["priority"] in pager and resolve["dedup_key"] == sent[0][0]["dedup_key"]


@pytest.mark.usefixtures("aws")
def test_an_unknown_status_never_lifts_a_hold_and_the_held_alert_keeps_its_one_episode() -> None:
    config = parse_config(LOWER.replace("HOW", "hold"))
    statuses: list[GitHubStatus | None] = [FINE, INCIDENT, UNKNOWN, INCIDENT, UNKNOWN, UNKNOWN, INCIDENT, FINE]
    sent = run(config, *(queued(m, 1800) for m in range(len(statuses))), github=statuses)
    said = [[(p["page"], p["started_at"]) for p in pages] for pages in sent]
    first = sent[0][0]["started_at"]
    assert said == [[("new", first)], [], [], [], [], [], [], [("repeat", first)]]


DEAD_LETTERS = """
version: 1
defaults:
  rule: {team: ci-infra}
  dead_letter: {priority: P1}
runner_types:
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}, priority: P2}
"""


@pytest.mark.usefixtures("aws")
def test_a_dead_letter_page_never_holds_back_a_queue_time_page_of_the_same_runner_type() -> None:
    both = with_signals(runner_type("linux-x64", 12, 1800), dead_lettered=Reading.of(3), dead_letter_age=Reading.of(60))
    sent = run(parse_config(DEAD_LETTERS), snapshot(minutes(0), both), snapshot(minutes(1), both))
    assert sorted((p["rule"], p["priority"], p["status"]) for p in sent[0]) == [
        ("dead-letter", "P1", "firing"),
        ("jobs-queueing", "P2", "firing"),
    ]
    assert sent[1] == []


@pytest.mark.usefixtures("aws")
def test_a_silence_that_ends_while_an_slo_burns_resumes_its_episode() -> None:
    # Found by test_holds_properties before the fix: the silence's end opened a second episode of the open one.
    moto = StackInMoto.create()
    inbox = Inbox(moto.sns)
    config = parse_config(TWO_SLOS)
    silence = SilenceRecord("s-1", ("*",), "slo:builds", None, minutes(1), minutes(3), "bob", "deploying")
    moto.evaluate(burning(0, "builds"), config)
    put_silence(moto.dynamodb, moto.stack.table, silence)
    for minute in (1, 2, 3):
        moto.evaluate(burning(minute, "builds"), config)
    pages = inbox.drain()
    first = pages[0]["started_at"]
    assert [(p["page"], p["started_at"]) for p in pages] == [("new", first), ("repeat", first)]
