"""The on-call's commands against what the stack knows and did: the deployed config's teams and rules,
scheduled silences, one meaning for a pattern, short silence ids, and each alert's state history."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import boto3
import pytest
from support import StackInMoto, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import load_state, put_silence
from queuewatch.adapters.state_table.known_names import read_known
from queuewatch.adapters.state_table.transition_log import Transition, put_transition, read_transitions
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.evaluate.delivery import EvaluatorMemory
from queuewatch_cli.commands.status.status import StatusView, status_document, text_lines
from queuewatch_cli.main import main

BASE = ["--table", "state", "--region", "us-east-1"]
CONFIG = """\
version: 1
defaults:
  rule: {team: ci-infra, keep_firing_for: 0s}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds, region: us-west-2}}
  - {name: gpu.a100, queue: {name: gh-ci-gpu-a100-queued-builds}, team: gpu-infra}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m, queue_size: 0}, for: 2m}
  - {name: gpu-waiting, match: ['gpu.*'], thresholds: {queue_time: 30m}, priority: P3}
"""


@pytest.fixture
def moto(aws: None, monkeypatch: pytest.MonkeyPatch) -> StackInMoto:
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    return StackInMoto.create("state")


def now_minute() -> datetime:
    return datetime.now(UTC).replace(second=0, microsecond=0)


def quiet_tick(
    moto: StackInMoto, at: datetime, memory: EvaluatorMemory | None = None, config: Config | None = None
) -> None:
    config = config or parse_config(CONFIG, source="qw.yaml")
    moto.evaluate(snapshot(at, runner_type("linux.2xlarge"), runner_type("gpu.a100", team="gpu-infra")), config, memory)


def add(*flags: str) -> int:
    return main(["silence", "add", *BASE, *flags])


def silences() -> list[SilenceRecord]:
    return load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").silences


# --- teams and rules the stack knows -------------------------------------------------------------------------------


def test_a_team_the_deployed_config_names_is_accepted_before_it_ever_pages(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--all", "--team", "gpu-infra", "--rule", "gpu-waiting", "--for", "2h", "--comment", "A100 maintenance"]
    assert add(*flags) == 2  # the evaluator has not run: nothing to check against but the (empty) alerts
    assert "its evaluator has published no config yet" in capsys.readouterr().err
    quiet_tick(moto, now_minute())  # nothing queues: no alert, no team paging
    assert add(*flags) == 0
    [silence] = silences()
    assert (silence.team, silence.rule) == ("gpu-infra", "gpu-waiting")
    assert add("--all", "--team", "gpu-infar", "--for", "2h", "--comment", "typo") == 2
    err = capsys.readouterr().err
    assert "--team: found 'gpu-infar', which is not in the config us-east-1" not in err
    assert "which is not in the config queuewatch@us-east-1 runs" in err and "ci-infra, gpu-infra" in err


def test_the_evaluator_publishes_the_names_when_they_change_and_a_steady_tick_writes_nothing(
    moto: StackInMoto,
) -> None:
    puts: list[str] = []
    moto.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.PutItem", lambda params, **_: puts.append(params["Item"]["pk"]["S"])
    )
    config = parse_config(CONFIG, source="qw.yaml")
    quiet_tick(moto, now_minute(), EvaluatorMemory(), config)
    published = read_known(moto.dynamodb, "state")
    assert published is not None
    names, _ = published
    assert names.teams == {"ci-infra", "gpu-infra"}
    assert names.rules == {"jobs-queueing", "gpu-waiting", "job-retry", "dead-letter", "queuewatch-health"}
    assert names.runner_types == {"linux.2xlarge", "linux-x64", "gpu.a100"}
    assert puts == ["known", "queuewatch"]  # the names, then the marker the evaluator's Query reads
    puts.clear()
    quiet_tick(moto, now_minute() + timedelta(minutes=1), EvaluatorMemory(), config)  # a new container, same names
    assert puts == []
    deployed = parse_config(CONFIG.replace("team: gpu-infra", "team: gpu-platform"), source="qw.yaml")
    quiet_tick(moto, now_minute() + timedelta(minutes=2), EvaluatorMemory(), deployed)
    assert puts == ["known", "queuewatch"]
    published = read_known(moto.dynamodb, "state")
    assert published is not None and published[0].teams == {"ci-infra", "gpu-platform"}


# --- scheduled silences ---------------------------------------------------------------------------------------------


def test_a_scheduled_silence_previews_what_it_would_hold_back_at_its_start_and_lists_apart(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    at = now_minute()
    config = parse_config(CONFIG, source="qw.yaml")
    moto.evaluate(snapshot(at, runner_type("linux.2xlarge", 9, 900)), config)
    capsys.readouterr()
    assert add("--match", "linux.*", "--start", "+2h", "--for", "1h", "--comment", "AMI rollout") == 0
    out = capsys.readouterr().out.splitlines()
    [silence] = silences()
    assert abs(silence.starts_at - (datetime.now(UTC) + timedelta(hours=2))) < timedelta(minutes=1)
    assert silence.ends_at - silence.starts_at == timedelta(hours=1)
    assert out[0].startswith(f"silence {silence.silence_id} from {silence.starts_at:%Y-%m-%d %H:%M} UTC until")
    assert (
        out[1]
        == f"  starts {silence.starts_at:%Y-%m-%d %H:%M} UTC; of the alerts firing or pending now, it would hold back:"
    )
    assert out[2] == "  matches jobs-queueing pending on 1 runner type(s): linux.2xlarge"
    assert out[3] == "  covers 1 runner type(s) the stack knows: linux.2xlarge"
    start = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0).isoformat()
    assert add("--all", "--start", start, "--for", "4h", "--comment", "weekend patching") == 0
    active = SilenceRecord("s-now", ("gpu.*",), None, None, at, at + timedelta(hours=1), "bob", "now")
    put_silence(moto.dynamodb, "state", active)
    capsys.readouterr()
    assert main(["silence", "list", *BASE]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert (rows[0][0], rows[0][1]) == ("s-now", "active")
    assert [row[1] for row in rows[1:]] == ["scheduled", "scheduled"]  # apart, after the active, by start
    assert rows[1][0] == silence.silence_id
    assert main(["status", *BASE, "--no-figures"]) == 0
    status = capsys.readouterr().out
    assert "active silences: 1" in status and "scheduled silences: 2" in status
    assert f"  {silence.silence_id}  by " in status and f"from {silence.starts_at:%Y-%m-%d %H:%M}" in status


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        ("2020-01-01T00:00", "--start: found '2020-01-01T00:00', 2020-01-01 00:00 UTC, in the past"),
        ("+40d", "--start: found '+40d', more than 30d from now"),
        ("tomorrow", "--start: found 'tomorrow', expected an ISO time such as 2026-05-01T09:00"),
        ("+2", "--start: 2: add a unit"),
    ],
)
def test_a_bad_start_is_refused_and_nothing_is_written(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str], start: str, expected: str
) -> None:
    assert add("--all", "--start", start, "--for", "1h", "--comment", "x") == 2
    assert expected in capsys.readouterr().err
    assert silences() == []


def test_the_evaluator_holds_an_alert_back_only_within_the_silences_start_and_end(moto: StackInMoto) -> None:
    inbox = moto.subscribe_queue("pager")
    sqs = boto3.client("sqs", region_name="us-east-1")
    config = parse_config(CONFIG.replace("for: 2m", "for: 0s"), source="qw.yaml")
    at = now_minute()
    scheduled = SilenceRecord("s-later", ("linux.*",), None, None, at + timedelta(minutes=3), at + timedelta(minutes=5),
                              "bob", "patching")  # fmt: skip
    put_silence(moto.dynamodb, "state", scheduled)
    moto.evaluate(snapshot(at, runner_type("linux.2xlarge", 9, 900)), config)
    assert len(sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages", [])) == 1


# --- one meaning for a pattern --------------------------------------------------------------------------------------


def test_a_pattern_without_a_region_means_the_key_in_every_region_as_in_a_rule(moto: StackInMoto) -> None:
    at = now_minute()
    everywhere = SilenceRecord("s", ("linux-x64",), None, None, at, at + timedelta(hours=1), "a", "b")
    one_copy = SilenceRecord("s", ("linux-x64@us-west-2",), None, None, at, at + timedelta(hours=1), "a", "b")
    assert everywhere.matches("jobs-queueing", "linux-x64@us-west-2", "ci-infra", at)
    assert everywhere.matches("jobs-queueing", "linux-x64", "ci-infra", at)
    assert one_copy.matches("jobs-queueing", "linux-x64@us-west-2", "ci-infra", at)
    assert not one_copy.matches("jobs-queueing", "linux-x64@eu-west-1", "ci-infra", at)
    # The evaluator holds back the copy in us-west-2 under a silence for the plain key.
    inbox = moto.subscribe_queue("pager")
    config = parse_config(CONFIG.replace("for: 2m", "for: 0s"), source="qw.yaml")
    put_silence(moto.dynamodb, "state", everywhere)
    moto.evaluate(snapshot(at, runner_type("linux-x64@us-west-2", 9, 900, region="us-west-2")), config)
    sqs = boto3.client("sqs", region_name="us-east-1")
    assert sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages", []) == []


def test_a_preview_that_finds_nothing_suggests_the_closest_names(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    quiet_tick(moto, now_minute())
    assert add("--match", "linux-x46", "--for", "1h", "--comment", "typo") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == [
        "  matches nothing firing or pending now",
        "  covers no runner type the stack knows; closest: linux-x64",
    ]


# --- short silence ids ----------------------------------------------------------------------------------------------


def test_a_silence_is_named_by_a_unique_prefix_of_its_id_and_one_wording_when_none_or_several(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    at = datetime.now(UTC)
    for silence_id in ("abcdef123456", "abcdef456789"):
        put_silence(
            moto.dynamodb, "state", SilenceRecord(silence_id, (), None, None, at, at + timedelta(hours=1), "a", "b")
        )
    assert main(["silence", "extend", *BASE, "abcdef12", "--by", "1h"]) == 0
    assert "silence abcdef123456 (active) now ends" in capsys.readouterr().out
    for action in (["expire"], ["extend", "--by", "1h"]):
        assert main(["silence", action[0], *BASE, "abcdef", *action[1:]]) == 2  # short: never a guess
        assert "silence id 'abcdef': give at least 8 characters of it" in capsys.readouterr().err
        assert main(["silence", action[0], *BASE, "abcdef9999", *action[1:]]) == 1
        assert capsys.readouterr().err == "no silence 'abcdef9999' in state\n"
    put_silence(
        moto.dynamodb, "state", SilenceRecord("abcdef45aaaa", (), None, None, at, at + timedelta(hours=1), "a", "b")
    )
    assert main(["silence", "expire", *BASE, "abcdef45"]) == 1
    assert (
        capsys.readouterr().err
        == "silence id 'abcdef45' is the start of 2 silences: abcdef456789, abcdef45aaaa; give more of it\n"
    )
    assert main(["silence", "expire", *BASE, "abcdef456"]) == 0
    assert {s.silence_id for s in silences() if s.ends_at <= datetime.now(UTC)} == {"abcdef456789"}


# --- an alert's state history ---------------------------------------------------------------------------------------


def test_history_of_an_alert_lists_each_change_with_its_figures_and_silences(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    config = parse_config(CONFIG, source="qw.yaml")
    start = now_minute() - timedelta(minutes=30)

    def tick(minute: int, size: float, seconds: float) -> None:
        moto.evaluate(snapshot(start + timedelta(minutes=minute), runner_type("linux.2xlarge", size, seconds)), config)

    tick(0, 3, 400)  # pending
    tick(1, 5, 460)
    tick(2, 9, 520)  # firing: pending for 2m
    silence = SilenceRecord("s-ami", ("linux.*",), None, None, start + timedelta(minutes=3),
                            start + timedelta(minutes=10), "bob", "AMI rollout")  # fmt: skip
    put_silence(moto.dynamodb, "state", silence)
    tick(3, 9, 580)  # held back from here on
    tick(3, 9, 580)  # the same tick again (Lambda's retry): nothing recorded twice
    tick(4, 0, 0)  # resolved
    tick(4, 0, 0)
    changes = read_transitions(moto.dynamodb, "state", "jobs-queueing", "linux.2xlarge")
    assert [(c.previous, c.status) for c in changes] == [
        ("ok", "pending"),
        ("pending", "firing"),
        ("firing", "silenced"),
        ("firing", "resolved"),
    ]
    assert (changes[1].queue_size, changes[1].queue_time, changes[1].breached) == (9, 520, ("queue_size", "queue_time"))
    assert changes[2].silenced_by == changes[3].silenced_by == ("s-ami",)
    capsys.readouterr()
    assert main(["history", *BASE, "--since", "1h", "--alert", "jobs-queueing/linux.2xlarge"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("state history of jobs-queueing / linux.2xlarge on queuewatch@us-east-1")
    assert [line.split()[3] for line in lines[1:]] == ["pending", "firing", "silenced", "resolved"]
    assert lines[2].endswith("firing     queue size 9, queue time 8m (over: queue_size, queue_time)")
    assert lines[3].endswith("held back by silence s-ami by bob: AMI rollout; queue size 9, queue time 9m "
                             "(over: queue_size, queue_time)")  # fmt: skip
    # A runner type alone: every rule's history of it.
    assert main(["history", *BASE, "--since", "1h", "--alert", "linux.2xlarge"]) == 0
    assert "jobs-queueing" in capsys.readouterr().out
    # status --history: the same, over the last day.
    assert main(["status", *BASE, "--history", "jobs-queueing/linux.2xlarge"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == lines[1:]


def test_an_alert_held_back_by_a_window_then_released_by_a_silences_end_is_two_changes_each_once(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    """A silence or a window that starts or stops holding back a firing alert is its own row; a steady held tick
    writes nothing, and one that only moves from one holder to the next records the new holder."""
    start = now_minute() - timedelta(minutes=30)
    window = (
        "maintenance_windows:\n"
        f"  - {{name: patching, time_zone: UTC, weekdays: [{start:%A}], start: '{start:%H:%M}', ".replace(
            f"{start:%A}", f"{start:%A}".lower()
        )
        + f"end: '{start + timedelta(minutes=4):%H:%M}'}}\n"
    )
    config = parse_config(CONFIG.replace("rules:", window + "rules:"), source="qw.yaml")

    def tick(minute: int) -> None:
        moto.evaluate(snapshot(start + timedelta(minutes=minute), runner_type("linux.2xlarge", 9, 600)), config)

    tick(0)  # pending, held back by the window from the start
    tick(2)  # firing, still held
    puts: list[str] = []
    moto.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.PutItem", lambda params, **_: puts.append(params["Item"]["pk"]["S"])
    )
    tick(3)
    assert puts == []  # a steady held tick writes nothing
    put_silence(moto.dynamodb, "state", SilenceRecord("s-db", (), None, None, start + timedelta(minutes=4),
                start + timedelta(minutes=6), "ann", "DB failover"))  # fmt: skip
    tick(4)  # the window ends as the silence starts: held by the silence now
    tick(5)
    tick(6)  # the silence ends: released, and it pages
    tick(6)
    changes = read_transitions(moto.dynamodb, "state", "jobs-queueing", "linux.2xlarge")
    assert [(c.status, c.silenced_by) for c in changes] == [
        ("pending", ("window:patching",)),
        ("firing", ("window:patching",)),
        ("silenced", ("s-db",)),
        ("unsilenced", ("s-db",)),
    ]
    assert main(["history", *BASE, "--since", "1h", "--alert", "jobs-queueing/linux.2xlarge"]) == 0
    out = capsys.readouterr().out
    assert "pending    queue size 9, queue time 10m (over: queue_size, queue_time); held back by window patching" in out
    assert "unsilenced released by silence s-ami" not in out
    assert "unsilenced released by silence s-db by ann: DB failover; queue size 9" in out


def test_an_escalation_is_in_the_lower_alerts_history_held_back_then_released_each_once(
    moto: StackInMoto, capsys: pytest.CaptureFixture[str]
) -> None:
    """The P2 alert keeps firing while the P1 page supersedes its page: its history says so, and says when the P1
    page's end released it (and its page came back), each once; the steady escalated ticks write nothing."""
    config = parse_config(
        CONFIG + "  - {name: jobs-stuck, thresholds: {queue_time: 30m}, priority: P1, group_by: runner_type}\n",
        source="qw.yaml",
    )
    start = now_minute() - timedelta(minutes=30)

    def tick(minute: int, seconds: float) -> None:
        moto.evaluate(snapshot(start + timedelta(minutes=minute), runner_type("linux.2xlarge", 5, seconds)), config)

    tick(0, 600)
    tick(2, 720)  # the P2 rule fires
    tick(3, 1900)  # past 30m: the P1 page supersedes the P2 one
    puts: list[str] = []
    moto.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.PutItem", lambda params, **_: puts.append(params["Item"]["pk"]["S"])
    )
    tick(4, 1960)
    tick(4, 1960)  # the same tick again
    assert puts == []  # still escalated: nothing to write
    tick(5, 900)  # below 30m: the P1 page resolves, the P2 page comes back
    tick(6, 960)
    changes = read_transitions(moto.dynamodb, "state", "jobs-queueing", "linux.2xlarge")
    assert [(c.previous, c.status, c.silenced_by) for c in changes] == [
        ("ok", "pending", ()),
        ("pending", "firing", ()),
        ("firing", "silenced", ("superseded-by:jobs-stuck",)),
        ("firing", "unsilenced", ("superseded-by:jobs-stuck",)),
    ]
    assert (changes[2].queue_size, changes[2].queue_time) == (5, 1900)
    assert main(["history", *BASE, "--since", "1h", "--alert", "jobs-queueing/linux.2xlarge"]) == 0
    out = capsys.readouterr().out
    assert "silenced   held back by the higher-priority page of jobs-stuck; queue size 5, queue time 31m (over" in out
    assert "unsilenced released by the higher-priority page of jobs-stuck; queue size 5, queue time 15m (over" in out


def test_a_transition_is_recorded_once_however_often_it_is_written(moto: StackInMoto) -> None:
    change = Transition(now_minute(), "jobs-queueing", "linux.2xlarge", "firing", "pending", 9.0, 520.0)
    assert put_transition(moto.dynamodb, "state", change)
    assert not put_transition(moto.dynamodb, "state", change)
    assert read_transitions(moto.dynamodb, "state", "jobs-queueing", "linux.2xlarge") == [change]


@pytest.mark.parametrize("units", [1.0, 0.5, 2.0])
def test_status_keeps_its_read_units_in_the_json_not_in_the_on_calls_text(units: float) -> None:
    view = StatusView(None, [], [], [], units)
    assert "read unit" not in "\n".join(text_lines(view, "state", datetime(2026, 11, 25, tzinfo=UTC)))
    assert status_document(view)["read_units"] == units
