"""Maintenance windows in the real evaluator (moto): pages held back while one is open, and sent at its end if
the queue still breaches, as a silence's end sends them; the page's silence hint names the next window."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ClientError
from support import Inbox, StackInMoto, minutes, runner_type, snapshot

from queuewatch.alerting.alert import Alert
from queuewatch.config.load import parse_config
from queuewatch.model.snapshot import CollectorFailure
from queuewatch.notifications import email_text
from queuewatch_cli.commands.status.status import status
from queuewatch_cli.main import build_parser

# T0 is Saturday 2026-11-21 18:00 UTC, 19:00 in Berlin: the window runs 19:00-19:30 local, 18:00-18:30 UTC.
CONFIG = """
version: 1
defaults:
  rule: {team: ci-infra, keep_firing_for: 0s}
runner_types:
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds}}
  - {name: windows-x64, queue: {name: gh-ci-windows-x64-queued-builds}}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 5m}
monitor: {for: 0s}
maintenance_windows:
  - {name: patching, time_zone: Europe/Berlin, weekdays: [saturday], start: "19:00", end: "19:30", match: [linux-*]}
"""


@pytest.fixture
def world(aws: None) -> tuple[StackInMoto, Inbox]:
    moto = StackInMoto.create()
    return moto, Inbox(moto.sns)


def test_a_window_holds_back_what_it_names_and_the_page_goes_out_at_its_end(world: tuple[StackInMoto, Inbox]) -> None:
    moto, inbox = world
    config = parse_config(CONFIG, source="t.yaml")
    moto.evaluate(snapshot(minutes(5), runner_type("linux-x64", 4, 600)), config)
    assert inbox.drain() == []  # in the window
    moto.evaluate(snapshot(minutes(29), runner_type("linux-x64", 4, 1800)), config)
    assert inbox.drain() == []
    moto.evaluate(snapshot(minutes(30), runner_type("linux-x64", 4, 1860)), config)  # the window ends
    (page,) = inbox.drain()
    assert (page["status"], page["page"], page["runner_types"][0]["runner_type"]) == ("firing", "new", "linux-x64")
    # The hint names the window's next occurrence, a week on.
    assert page["silence"]["next_window"]["name"] == "patching"
    assert page["silence"]["next_window"]["local"] == "Sat 2026-11-28 19:00-19:30 Europe/Berlin"
    email = email_text(Alert.model_validate({k: v for k, v in page.items() if not k.startswith("_")}))
    assert "The next maintenance window that holds it back: patching, Sat 2026-11-28 19:00-19:30" in email


def test_a_window_leaves_what_it_does_not_name_and_never_hides_the_watchers_own_page(
    world: tuple[StackInMoto, Inbox],
) -> None:
    moto, inbox = world
    config = parse_config(CONFIG, source="t.yaml")
    moto.evaluate(snapshot(minutes(5), runner_type("linux-x64", 4, 600), runner_type("windows-x64", 2, 600)), config)
    (page,) = inbox.drain()
    assert [f["runner_type"] for f in page["runner_types"]] == ["windows-x64"]
    everything = parse_config(CONFIG.replace(", match: [linux-*]", ""), source="t.yaml")  # a window for all
    moto.evaluate(CollectorFailure(at=minutes(6), error_type="E", error_message="x", request_id="r"), everything)
    assert [p["rule"] for p in inbox.drain()] == ["queuewatch-health"]


def test_status_without_the_config_shows_the_window_open_now_and_the_next_as_the_evaluator_published_them(
    world: tuple[StackInMoto, Inbox], capsys: pytest.CaptureFixture[str]
) -> None:
    moto, _ = world
    config = parse_config(CONFIG.replace("maintenance_windows:\n", WEEKLY_PLUS), source="t.yaml")
    moto.evaluate(snapshot(minutes(5), runner_type("linux-x64", 4, 600)), config)
    args = build_parser().parse_args(["status", "--table", "state", "--region", "us-east-1", "--no-figures"])
    assert status(args, now=minutes(10)) == 0  # Saturday 19:10 in Berlin: patching is open, until 19:30
    # (a queue-only stack's status ends by saying what it cannot see: test_tracking_mode.py)
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("queue-only")]
    assert lines[-2:] == [
        "maintenance window open now: patching Sat 2026-11-21 19:00-19:30 Europe/Berlin, holds runner types "
        "linux-* (ends in 20m)",
        "next maintenance window: db-upgrade Tue 2026-11-24 02:00-04:00 America/New_York, holds rules "
        "jobs-queueing; teams ci-infra (in 60h50m)",
    ]
    args = build_parser().parse_args(["status", "--table", "state", "--region", "us-east-1", "--no-figures", "--json"])
    assert status(args, now=minutes(40)) == 0  # patching is over: its next is a week on, db-upgrade is sooner
    [upcoming] = json.loads(capsys.readouterr().out)["maintenance_windows"]
    assert upcoming.startswith("next maintenance window: db-upgrade Tue 2026-11-24 02:00-04:00")


WEEKLY_PLUS = """maintenance_windows:
  - {name: db-upgrade, time_zone: America/New_York, weekdays: [tuesday], start: "02:00", end: "04:00",
     rules: [jobs-queueing], teams: [ci-infra]}
"""


def test_status_without_get_item_shows_the_rest_and_says_the_windows_were_not_read(
    world: tuple[StackInMoto, Inbox], capsys: pytest.CaptureFixture[str]
) -> None:
    """An operator role granted before status read the windows (Query alone) still gets its status."""
    moto, _ = world
    moto.evaluate(snapshot(minutes(5), runner_type("linux-x64", 4, 600)), parse_config(CONFIG, source="t.yaml"))

    def denied(**_: object) -> None:
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no"}}, "GetItem")

    moto.dynamodb.meta.events.register("before-call.dynamodb.GetItem", denied)
    args = build_parser().parse_args(["status", "--table", "state", "--region", "us-east-1", "--no-figures"])
    assert status(args, client=lambda service, region: moto.dynamodb, now=minutes(10)) == 0
    out = capsys.readouterr().out
    assert "alerts last changed: 2026-11-21 18:05 UTC" in out
    assert [line for line in out.splitlines() if not line.startswith("queue-only")][-1] == (
        "maintenance windows: not read (status needs dynamodb:GetItem on the state table, or --config)"
    )


def test_a_window_across_the_fall_back_keeps_its_local_hours_in_the_evaluator(
    world: tuple[StackInMoto, Inbox],
) -> None:
    """New York's clocks go back at 02:00 EDT on Sunday 2026-11-01: 01:30 happens twice. The window opens at its
    first occurrence (05:30 UTC) and runs to 02:30 EST (07:30 UTC), through the repeated hour, as the zone's
    wall clock says; the page goes out at its end, and the hint names next Sunday's, on standard time."""
    moto, inbox = world
    window = '{name: patching, time_zone: America/New_York, weekdays: [sunday], start: "01:30", end: "02:30"}'
    config = parse_config(CONFIG.replace(CONFIG.splitlines()[-1], "  - " + window), source="t.yaml")

    def tick(hour: int, minute: int) -> list[dict[str, Any]]:
        at = datetime(2026, 11, 1, hour, minute, tzinfo=UTC)
        moto.evaluate(snapshot(at, runner_type("linux-x64", 4, 900)), config)
        return inbox.drain()

    assert tick(5, 35) == []  # 01:35 EDT: open
    assert tick(6, 35) == []  # 01:35 EST, the repeated hour: still open
    assert tick(7, 29) == []  # 02:29 EST
    (page,) = tick(7, 30)  # 02:30 EST: the window ends, the queue still breaches
    assert page["page"] == "new"
    assert page["silence"]["next_window"]["local"] == "Sun 2026-11-08 01:30-02:30 America/New_York"
    assert page["silence"]["next_window"]["starts_at"].startswith("2026-11-08T06:30")
