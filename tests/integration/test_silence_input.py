"""`queuewatch silence add|list|expire` refuses what would silence the wrong thing, or nothing, or
crash: each refusal names its flag, what was found and what was expected, and writes nothing."""

from __future__ import annotations

import json
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import pytest
from support import arriving_now, minutes

from queuewatch.adapters.state_table.alerts import load_state, put_instance, put_silence
from queuewatch.alerting.alert import silence_for
from queuewatch.alerting.alert_state import InstanceState, Status
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.config.load import parse_config
from queuewatch.evaluate import Stack
from queuewatch.evaluate.stage import evaluate
from queuewatch.model.rules import HEALTH_RULE
from queuewatch.model.snapshot import CollectorFailure
from queuewatch_cli.devkit.moto_tables import create_state_table
from queuewatch_cli.main import main

BASE = ["--table", "state", "--region", "us-east-1"]
CONFIG = """\
version: 1
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}
monitor: {for: 2m}
"""


@pytest.fixture
def table(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    create_state_table(boto3.client("dynamodb", region_name="us-east-1"), "state")


def silences() -> list[SilenceRecord]:
    return load_state(boto3.client("dynamodb", region_name="us-east-1"), "state").silences


def add(*flags: str) -> int:
    return main(["silence", "add", *BASE, *flags])


def test_add_without_match_is_refused(table: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert add("--for", "2h", "--comment", "AMI rollout") == 2
    err = capsys.readouterr().err
    assert "--match: none given; expected --match GLOB (repeatable) naming the runner types to silence, or --all" in err
    assert "nothing was written" in err and silences() == []


def test_add_all_silences_every_runner_type_but_not_the_monitor_page(table: None) -> None:
    assert add("--all", "--for", "2h", "--comment", "fleet maintenance") == 0
    [silence] = silences()
    assert silence.matchers == () and silence.rule is None
    now = silence.starts_at
    assert silence.matches("jobs-queueing", "linux.2xlarge", "ci-infra", now)
    assert not silence.matches(HEALTH_RULE, "collector", "ci-infra", now)


@pytest.mark.parametrize(
    ("silence", "pages"),
    [
        (SilenceRecord("s", (), None, None, minutes(-1), minutes(60), "a", "all"), 1),
        (SilenceRecord("s", ("*",), None, None, minutes(-1), minutes(60), "a", "every glob"), 1),
        (SilenceRecord("s", (), HEALTH_RULE, None, minutes(-1), minutes(60), "a", "named"), 0),
    ],
    ids=["all", "star", "names-the-health-rule"],
)
def test_only_a_silence_naming_the_health_rule_holds_back_the_monitor_page(
    aws: None, silence: SilenceRecord, pages: int
) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    sns = boto3.client("sns", region_name="us-east-1")
    sqs = boto3.client("sqs", region_name="us-east-1")
    create_state_table(dynamodb, "state")
    topic = sns.create_topic(Name="alerts")["TopicArn"]
    inbox = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=inbox, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    put_silence(dynamodb, "state", silence)
    config, stack = parse_config(CONFIG), Stack(table="state", topic_arn=topic, name="prod", region="us-east-1")
    for minute in range(5):
        failure = CollectorFailure(at=minutes(minute), error_type="Timeout", error_message="x", request_id="r")
        evaluate(failure, config, dynamodb, sns, stack, clock=arriving_now(failure))
    received = sqs.receive_message(QueueUrl=inbox, MaxNumberOfMessages=10).get("Messages", [])
    bodies = [json.loads(json.loads(m["Body"])["Message"]) for m in received]
    assert [(b["rule"], b["status"]) for b in bodies] == [(HEALTH_RULE, "firing")] * pages


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--all", "--match", "linux.*"], "--all: given with --match linux.*; expected one or the other"),
        (["--match", ""], "--match: found an empty pattern"),
        (["--match", "["], "--match: found '[': '[' opens a set that never closes"),
        (["--match", "linux\\..*"], "--match: found 'linux\\\\..*', which can match no runner type"),
        (["--match", "^gpu$"], "it looks like a regular expression"),
        (["--match", "linux.*", "--comment", "  "], "--comment: found an empty comment, expected why"),
        (["--match", "linux.*", "--for", "99999999999d"], "--for: found '99999999999d', expected at most 366d"),
        (["--match", "linux.*", "--for", "31d"], "--for: found '31d', expected above zero and at most 30d"),
        (["--match", "linux.*", "--for", "0s"], "--for: found '0s', expected above zero"),
        (["--match", "linux.*", "--for", "90"], "--for: 90: add a unit, such as 90s or 90m"),
        (["--match", "linux.*", "--rule", "Jobs Queueing"], "--rule: found 'Jobs Queueing', expected a rule name"),
        (["--match", "linux.*", "--team", ""], "--team: found an empty team"),
    ],
    ids=["all-and-match", "empty", "unclosed", "regex", "anchors", "empty-comment", "overflow", "past-a-month", "zero",
         "no-unit",
         "malformed-rule", "empty-team"],
)  # fmt: skip
def test_bad_flags_are_refused_and_nothing_is_written(
    table: None, capsys: pytest.CaptureFixture[str], flags: list[str], expected: str
) -> None:
    defaults = {"--for": "2h", "--comment": "why"}
    extra = [part for flag, value in defaults.items() if flag not in flags for part in (flag, value)]
    assert add(*flags, *extra) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    assert silences() == []


def test_the_silence_command_a_page_prints_is_accepted(
    table: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("QUEUEWATCH_CONFIG", raising=False)
    template = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}, "Outputs": {"StateTableName": {"Value": "state"}}}
    boto3.client("cloudformation", region_name="us-east-1").create_stack(
        StackName="queuewatch", TemplateBody=json.dumps(template)
    )
    # queuewatch's own page names a region's queue listing as discovery:<region>, which no runner type can be.
    members = ["collector", "discovery:us-east-1"]
    command = silence_for(HEALTH_RULE, "all", "all", members, "queuewatch", "us-east-1").command
    assert main(shlex.split(command)[1:]) == 0
    [silence] = silences()
    assert silence.matches(HEALTH_RULE, "discovery:us-east-1", "ci-infra", silence.starts_at)
    assert add("--rule", "jobs-queueing", "--match", "discovery:us-east-1", "--for", "1h", "--comment", "x") == 2
    assert "--match: found 'discovery:us-east-1', which can match no runner type: ':'" in capsys.readouterr().err


def test_a_rule_not_in_the_config_is_refused(table: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "qw.yaml"
    config.write_text(CONFIG)
    flags = ["--match", "linux.*", "--for", "2h", "--comment", "why", "--config", str(config)]
    assert add(*flags, "--rule", "jobs-queuing") == 2
    assert (
        f"--rule: found 'jobs-queuing', which is not in the config {config}; expected one of dead-letter, "
        f"job-retry, jobs-queueing, {HEALTH_RULE}" in capsys.readouterr().err
    )
    assert silences() == []
    assert add(*flags, "--rule", "jobs-queueing") == 0
    assert add(*flags, "--rule", HEALTH_RULE) == 0
    assert sorted(s.rule or "" for s in silences()) == ["jobs-queueing", HEALTH_RULE]


def test_without_a_config_the_rule_must_be_one_the_table_has_alerts_for(
    table: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--match", "linux.*", "--for", "2h", "--comment", "why", "--rule", "jobs-queueing"]
    assert add(*flags) == 2
    assert "--rule: found 'jobs-queueing', which is not in the alerts in state" in capsys.readouterr().err
    # The environment's config, as the functions name it, is the default for --config.
    config = tmp_path / "qw.yaml"
    config.write_text(CONFIG)
    monkeypatch.setenv("QUEUEWATCH_CONFIG", str(config))
    assert add(*flags) == 0


def test_a_bad_config_is_named_and_nothing_is_written(
    table: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "qw.yaml"
    config.write_text(CONFIG.replace("1m", "soon"))
    assert add("--match", "x", "--for", "2h", "--comment", "y", "--rule", "r", "--config", str(config)) == 2
    assert f"{config}:5: rules[0].thresholds.queue_time" in capsys.readouterr().err
    assert silences() == []


@pytest.mark.parametrize(
    "command",
    [
        ["add", "--match", "linux.*", "--for", "2h", "--comment", "why"],
        ["add", "--match", "linux.*", "--for", "2h", "--comment", "why", "--rule", "jobs-queueing"],
        ["list"],
        ["expire", "abc"],
    ],
    ids=["add", "add-with-rule", "list", "expire"],
)
def test_a_missing_table_is_one_line_naming_it_and_its_region(
    aws: None, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    action, *flags = command
    assert main(["silence", action, "--table", "nope", "--region", "eu-west-1", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "queuewatch: --table: found no table 'nope' in eu-west-1 (--region); expected the stack's StateTableName"
    )
    assert len(err.splitlines()) == 1
    assert "Traceback" not in err and "ResourceNotFoundException" not in err


def test_no_region_anywhere_is_one_line_naming_the_flag(
    table: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    assert main(["silence", "list", "--table", "state"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("queuewatch: no AWS region: pass --region, or --stack NAME@REGION, or set AWS_DEFAULT_REGION")
    assert len(err.splitlines()) == 1


TEAMS_CONFIG = """\
version: 1
defaults:
  rule: {team: ci-infra}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: rocm.gpu, queue: {name: gh-ci-rocm-gpu-queued-builds}, team: rocm}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 1m, queue_size: 0}, for: 2m}
"""


def firing_table() -> None:
    """linux.2xlarge firing and rocm.gpu pending in the state table, as the evaluator leaves them."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    now = datetime.now(UTC)
    for name, status, team in (("linux.2xlarge", Status.FIRING, "ci-infra"), ("rocm.gpu", Status.PENDING, "rocm")):
        put_instance(dynamodb, "state", InstanceState("jobs-queueing", name, status, now, None, team=team), 0, now)


def test_add_previews_what_it_holds_back_now(table: None, capsys: pytest.CaptureFixture[str]) -> None:
    firing_table()
    assert add("--match", "linux.*", "--for", "2h", "--comment", "AMI rollout") == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0].startswith("silence ") and out[1] == "  matches jobs-queueing firing on 1 runner type(s): linux.2xlarge"
    )
    assert add("--all", "--team", "rocm", "--for", "2h", "--comment", "rocm migration") == 0
    assert capsys.readouterr().out.splitlines()[1] == "  matches jobs-queueing pending on 1 runner type(s): rocm.gpu"
    assert add("--match", "windows.*", "--for", "2h", "--comment", "nothing yet") == 0
    assert capsys.readouterr().out.splitlines()[1] == "  matches nothing firing or pending now"


def test_add_refuses_a_team_the_config_does_not_know(
    table: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "qw.yaml"
    config.write_text(TEAMS_CONFIG)
    flags = ["--all", "--for", "2h", "--comment", "why", "--config", str(config)]
    assert add(*flags, "--team", "rocn") == 2
    err = capsys.readouterr().err
    assert f"--team: found 'rocn', which is not in the config {config}; expected one of: ci-infra, rocm" in err
    assert silences() == []
    assert add(*flags, "--team", "rocm") == 0
    # Without a config, the teams the table's alerts carry: none yet, so any team is refused.
    assert add("--all", "--for", "2h", "--comment", "why", "--team", "rocm") == 2
    assert "expected one of: none" in capsys.readouterr().err


def test_expire_on_an_expired_silence_says_so(table: None, capsys: pytest.CaptureFixture[str]) -> None:
    old = SilenceRecord("s-old", (), None, None, minutes(-120), minutes(-60), "bob", "over")
    put_silence(boto3.client("dynamodb", region_name="us-east-1"), "state", old)
    assert main(["silence", "expire", *BASE, "s-old"]) == 0
    assert "silence s-old had already expired at 2026-11-21 17:00 UTC: nothing changed" in capsys.readouterr().out
    [kept] = silences()
    assert kept.ends_at == old.ends_at


def test_extend_moves_the_end_and_refuses_past_a_month(table: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert add("--match", "linux.*", "--for", "2h", "--comment", "AMI rollout") == 0
    [silence] = silences()
    assert main(["silence", "extend", *BASE, silence.silence_id, "--by", "1h"]) == 0
    [extended] = silences()
    assert extended.ends_at - silence.ends_at == timedelta(hours=1)
    assert main(["silence", "extend", *BASE, silence.silence_id, "--by", "30d"]) == 2
    assert "more than 30d from now; nothing was written" in capsys.readouterr().err
    assert silences() == [extended]
    assert main(["silence", "extend", *BASE, "nope-nope", "--by", "1h"]) == 1


def test_list_filters_by_runner_type_author_and_expiry(table: None, capsys: pytest.CaptureFixture[str]) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    now = datetime.now(UTC)
    for record in (
        SilenceRecord("s-linux", ("linux.*",), None, None, now, now + timedelta(hours=1), "alice", "a"),
        SilenceRecord("s-gpu", ("*.gpu",), None, None, now, now + timedelta(hours=1), "bob", "b"),
        SilenceRecord(
            "s-old", ("linux.*",), None, None, now - timedelta(hours=2), now - timedelta(hours=1), "bob", "c"
        ),
    ):
        put_silence(dynamodb, "state", record)

    def listed(*flags: str) -> list[str]:
        assert main(["silence", "list", *BASE, *flags]) == 0
        return [line.split()[0] for line in capsys.readouterr().out.splitlines()]

    assert listed() == ["s-gpu", "s-linux"]  # by end, then id
    assert listed("--match", "linux.2xlarge") == ["s-linux"]
    assert listed("--author", "bob") == ["s-gpu"]
    assert listed("--expired") == ["s-old"]
    assert listed("--all", "--author", "bob") == ["s-old", "s-gpu"]
    assert listed("--author", "carol") == ["no"]  # "no silences"
