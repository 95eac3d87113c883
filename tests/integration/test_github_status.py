"""GitHub's own outages: the status page read over loopback from recorded Statuspage documents, and pages in the
real evaluator (moto) that say so first, wait, or go out lower, as the config chooses."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import urllib3
from support import T0, Inbox, StackInMoto, arriving_now, minutes, runner_type, snapshot

from queuewatch.adapters.github_status import read_github_status
from queuewatch.config.load import parse_config
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.github_status import GitHubStatus, parse_summary

RECORDED = Path(__file__).parent / "githubstatus"
ACTIONS_UP = {"name": "Actions", "status": "operational"}
OPEN = {"name": "Incident with Actions", "status": "investigating"}
# JSON, but not the Statuspage shape where a list is expected: garbage a proxy or a changed API might answer.
MANGLED = {
    "incidents_not_a_list": {"components": [ACTIONS_UP], "incidents": 5},
    "components_not_a_list": {"components": [ACTIONS_UP], "incidents": [{**OPEN, "components": 5}]},
    "updates_not_a_list": {"components": [ACTIONS_UP], "incidents": [{**OPEN, "incident_updates": {"a": 1}}]},
    "affected_not_a_list": {
        "components": [ACTIONS_UP],
        "incidents": [{**OPEN, "incident_updates": [{"affected_components": 3}]}],
    },
}


def recorded(name: str) -> GitHubStatus:
    return parse_summary(json.loads((RECORDED / f"{name}.json").read_text()), T0)


class StatusPage(BaseHTTPRequestHandler):
    """githubstatus.com on loopback: each path answers as the test says."""

    def do_GET(self) -> None:
        name = self.path.strip("/")
        if name == "silent":  # accepts, then never answers: the client's timeout must end it
            self.server.release.wait()  # type: ignore[attr-defined]
            return
        if name == "drip":  # a real incident, sent a few bytes at a time: each read is quick, the whole is not
            self._drip((RECORDED / "summary_actions_incident.json").read_bytes())
            return
        status, body = (500, b"oops") if name == "error" else (200, b"<html>not json</html>")
        if name in MANGLED:
            body = json.dumps(MANGLED[name]).encode()
        if (RECORDED / f"{name}.json").exists():
            status, body = 200, (RECORDED / f"{name}.json").read_bytes()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def _drip(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        for start in range(0, len(body), 64):
            if self.server.release.wait(0.05):  # type: ignore[attr-defined]
                return
            self.wfile.write(body[start : start + 64])
            self.wfile.flush()

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture
def status_page() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StatusPage)
    server.release = threading.Event()  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.release.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def test_the_adapter_reads_an_actions_incident_with_its_link(status_page: str) -> None:
    status = read_github_status(urllib3.PoolManager(), T0, f"{status_page}/summary_actions_incident")
    assert status.degraded and status.actions == "partial_outage" and status.error is None
    # Only the incident that names Actions; the other one is GitHub's business, not the fleet's.
    assert [(i.name, i.url) for i in status.incidents] == [("Incident with Actions", "https://stspg.io/x1f3c5m0q8kd")]
    quiet = read_github_status(urllib3.PoolManager(), T0, f"{status_page}/summary_other_incident")
    assert not quiet.degraded and quiet.actions == "operational"


@pytest.mark.parametrize("path", ["error", "garbage", "silent", *MANGLED])
def test_a_status_it_cannot_read_is_unknown_and_quick(status_page: str, path: str) -> None:
    status = read_github_status(urllib3.PoolManager(), T0, f"{status_page}/{path}", timeout=0.2)
    assert status.actions == "unknown" and not status.degraded and status.error


def test_a_status_page_that_answers_a_little_at_a_time_is_unknown_once_the_timeout_is_spent(status_page: str) -> None:
    # Every socket read returns well within the timeout; only a bound on the whole read stops it.
    status = read_github_status(urllib3.PoolManager(), T0, f"{status_page}/drip", timeout=0.3)
    assert status.actions == "unknown" and not status.degraded
    assert "did not answer within 0.3 s" in (status.error or "")


def test_a_status_page_nobody_answers_on_is_unknown() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed when the block ends: nothing listens there
    status = read_github_status(urllib3.PoolManager(), T0, f"http://127.0.0.1:{port}/summary.json", timeout=0.5)
    assert status.actions == "unknown" and "127.0.0.1" in (status.error or "")


CONFIG = """
version: 1
defaults:
  rule: {team: ci-infra, keep_firing_for: 0s}
runner_types:
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}, priority: P2}
github_status: {on_incident: ON}
"""


def tick(on_incident: str, *statuses: GitHubStatus | None) -> list[list[dict[str, Any]]]:
    """One tick a minute with linux-x64 queued 30m, GitHub's status as given; what each tick paged."""
    moto = StackInMoto.create()
    inbox = Inbox(moto.sns)
    config = parse_config(CONFIG.replace("ON", on_incident), source="t.yaml")
    sent = []
    for at, github in enumerate(statuses):
        observation = snapshot(minutes(at), runner_type("linux-x64", 12, 1800))
        evaluate(
            observation, config, moto.dynamodb, moto.sns, moto.stack, clock=arriving_now(observation), github=github
        )
        sent.append(inbox.drain())
    return sent


@pytest.mark.usefixtures("aws")
def test_a_page_during_an_actions_incident_says_so_first_with_its_link() -> None:
    (pages,) = tick("note", recorded("summary_actions_incident"))
    (page,) = pages
    assert page["summary"].startswith(
        "GitHub is investigating an Actions incident: Incident with Actions (https://stspg.io/x1f3c5m0q8kd). "
        "1 runner type queueing"
    )
    assert page["github_incident"]["url"] == "https://stspg.io/x1f3c5m0q8kd" and page["priority"] == "P2"


@pytest.mark.usefixtures("aws")
@pytest.mark.parametrize("status", ["summary_other_incident", "unknown", None])
def test_without_an_actions_incident_the_page_is_as_ever(status: str | None) -> None:
    github = None if status is None else recorded(status) if status != "unknown" else GitHubStatus.unknown(T0, "x")
    ((page,),) = tick("hold", github)  # even a team that holds pages back during incidents
    assert page["github_incident"] is None and page["summary"].startswith("1 runner type queueing")


@pytest.mark.usefixtures("aws")
def test_hold_waits_for_github_and_pages_when_it_recovers() -> None:
    incident, fine = recorded("summary_actions_incident"), recorded("summary_operational")
    sent = tick("hold", incident, incident, GitHubStatus.unknown(T0, "timeout"), fine)
    # An unknown read is neither an incident nor its end: the hold stays until a known read ends it.
    assert [len(pages) for pages in sent] == [0, 0, 0, 1]
    assert sent[3][0]["page"] == "new"


@pytest.mark.usefixtures("aws")
def test_lower_pages_below_the_pager_then_again_at_its_own_priority_once_github_recovers() -> None:
    incident, fine = recorded("summary_actions_incident"), recorded("summary_operational")
    sent = tick("lower", incident, incident, fine, fine)
    assert [[(p["priority"], p["page"]) for p in pages] for pages in sent] == [
        [("P3", "new")],
        [],
        [("P2", "repeat")],
        [],
    ]


def with_incident_status(status: str) -> GitHubStatus:
    """The recorded Actions incident, as GitHub posts it at `status`."""
    document = json.loads((RECORDED / "summary_actions_incident.json").read_text())
    for incident in document["incidents"]:
        incident["status"] = status
    return parse_summary(document, T0)


@pytest.mark.parametrize(
    ("status", "said"),
    [
        ("investigating", "GitHub is investigating an Actions incident: Incident with Actions"),
        ("identified", "GitHub has identified the cause of an Actions incident: Incident with Actions"),
        ("monitoring", "GitHub has fixed an Actions incident and is monitoring it: Incident with Actions"),
    ],
)
def test_each_incident_status_is_worded_as_github_posted_it(status: str, said: str) -> None:
    github = with_incident_status(status)
    assert github.first.sentence == f"{said} (https://stspg.io/x1f3c5m0q8kd)"


def test_a_scheduled_maintenance_under_way_is_said_as_maintenance_with_its_own_name_and_end() -> None:
    github = recorded("summary_actions_maintenance")
    assert github.degraded and github.actions == "under_maintenance"
    assert github.first.kind == "maintenance" and github.first.name == "Scheduled maintenance of Actions job dispatch"
    assert github.first.sentence == (
        "GitHub Actions is in scheduled maintenance: Scheduled maintenance of Actions job dispatch, scheduled until "
        "2026-11-21 19:30 UTC (https://stspg.io/m4k8w2r7t1zq)"
    )
    assert "incident" not in github.first.sentence


def test_a_maintenance_only_scheduled_or_completed_is_not_under_way() -> None:
    document = json.loads((RECORDED / "summary_actions_maintenance.json").read_text())
    for state in ("scheduled", "completed"):
        document["scheduled_maintenances"][0]["status"] = state
        document["components"][3]["status"] = "operational"
        assert not parse_summary(document, T0).degraded, state


def test_the_component_with_no_incident_posted_is_said_as_its_state_not_as_an_invented_incident() -> None:
    document = json.loads((RECORDED / "summary_actions_incident.json").read_text())
    document["incidents"] = []
    github = parse_summary(document, T0)
    assert github.degraded and github.first.kind == "component"
    assert github.first.sentence == (
        "GitHub's status page shows Actions partial outage, no incident posted (https://www.githubstatus.com)"
    )


def test_the_actions_component_is_found_by_its_id_whatever_its_name() -> None:
    document = json.loads((RECORDED / "summary_actions_incident.json").read_text())
    for component in document["components"]:
        if component["id"] == "br0l2tvcx85d":
            component["name"] = "GitHub Actions"  # renamed: the id is the same
    for incident in document["incidents"]:
        for component in incident["components"]:
            component["name"] = "GitHub Actions"
        for update in incident["incident_updates"]:
            for affected in update["affected_components"]:
                affected["name"] = "GitHub Actions"
    github = parse_summary(document, T0)
    assert github.actions == "partial_outage" and github.note is None
    assert [i.name for i in github.incidents] == ["Incident with Actions"]


def test_without_its_id_on_the_page_the_component_is_found_by_its_name_and_the_status_says_so() -> None:
    document = json.loads((RECORDED / "summary_actions_incident.json").read_text())
    document["components"] = [
        {**c, "id": "newid0000000"} if c["name"] == "Actions" else c for c in document["components"]
    ]
    github = parse_summary(document, T0)
    assert github.actions == "partial_outage"
    assert github.note == "the Actions component was found by its name: its id br0l2tvcx85d is not on the page"
    another = {**document, "components": [{**c, "name": "Renamed"} if c["name"] == "Actions" else c
                                          for c in document["components"]]}  # fmt: skip
    with pytest.raises(ValueError, match="no component 'br0l2tvcx85d'"):
        parse_summary(another, T0)


def test_an_abandoned_read_stops_when_the_tick_moves_on(status_page: str) -> None:
    """The drip answers for seconds; the read gives up at 0.3 s and its thread ends then, its connection shut,
    instead of reading on beside the next tick."""
    status = read_github_status(urllib3.PoolManager(), T0, f"{status_page}/drip", timeout=0.3)
    assert status.actions == "unknown"
    readers = [t for t in threading.enumerate() if t.name == "github-status-read"]
    for reader in readers:
        reader.join(1.0)  # a bound, not a wait: a stopped reader has ended already or ends at once
    assert not [t for t in readers if t.is_alive()], "the reader kept reading after the tick moved on"
