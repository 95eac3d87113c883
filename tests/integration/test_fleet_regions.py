"""Fleets shaped like real ones: the upstream multi-runner module's runner keys deployed in two regions, a key
on a FIFO queue, found by discovery alone or beside named runner types. Collect -> evaluate -> SNS in moto:
every queue holding jobs is paged under an identity of its own, each row naming its region, and a queue that
is not watched is said, never dropped."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
import yaml
from support import T0, Inbox, StackInMoto

from queuewatch.adapters.aws.clients import AwsClients
from queuewatch.adapters.state_table.alerts import load_state, put_silence
from queuewatch.alerting.alert import ALERT_VERSION, Alert
from queuewatch.alerting.silences import SilenceRecord
from queuewatch.collect import collect
from queuewatch.config import Config
from queuewatch.config.load import ConfigError, parse_config
from queuewatch.evaluate.probes.discovery import UNWATCHED
from queuewatch.model.rules import HEALTH_RULE
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Snapshot
from queuewatch.notifications import render
from queuewatch.notifications.cloudwatch import Origin
from queuewatch.notifications.email import email_text
from queuewatch_cli.commands.status.status import show_status
from queuewatch_cli.devkit.seed import put_queue_ages
from queuewatch_cli.main import main

# The upstream module's examples/multi-runner runner configs (templates/runner-configs/*.yaml), prefix
# "multi-runner": module versions before 6.0 name a `fifo: true` config's queue "...-queued-builds.fifo".
KEYS = ("linux-arm64", "linux-x64-ubuntu-2204", "linux-x64-ubuntu", "linux-x64", "windows-x64")
FIFO_KEY = "linux-arm64"
REGIONS = ("us-east-1", "eu-west-1")
ACCOUNT = "123456789012"

DISCOVERY_ALONE = """
version: 1
defaults:
  region: us-east-1
  rule: {team: ci-infra, for: 0s, keep_firing_for: 0s}
discovery:
  - {queue_name_pattern: "{prefix}-{runner_type}-queued-builds", prefix: multi-runner, region: us-east-1}
  - {queue_name_pattern: "{prefix}-{runner_type}-queued-builds", prefix: multi-runner, region: eu-west-1}
rules:
  - {name: jobs-queueing, match: ["*"], thresholds: {queue_time: 5m, queue_size: 0}, group_by: GROUP_BY}
monitor: {for: 0s}
"""


ONE_REGION = DISCOVERY_ALONE.replace(
    '  - {queue_name_pattern: "{prefix}-{runner_type}-queued-builds", prefix: multi-runner, region: eu-west-1}\n', ""
)


def queue_name(key: str, fifo: bool = False) -> str:
    return f"multi-runner-{key}-queued-builds" + (".fifo" if fifo else "")


def create_fleet(regions: tuple[str, ...] = REGIONS) -> dict[tuple[str, str], str]:
    """Every key's queue in every region, its dead-letter queue beside it; the FIFO key's queue is FIFO."""
    urls: dict[tuple[str, str], str] = {}
    for region in regions:
        sqs = boto3.client("sqs", region_name=region)
        for key in KEYS:
            fifo = key == FIFO_KEY and region == "us-east-1"
            name = queue_name(key, fifo)
            if fifo:
                attributes: dict[Any, str] = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
                urls[(region, key)] = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
            else:
                urls[(region, key)] = sqs.create_queue(QueueName=name)["QueueUrl"]
            sqs.create_queue(QueueName=f"multi-runner-{key}-queued-builds_dead_letter")
    return urls


def wait(urls: dict[tuple[str, str], str], region: str, key: str, jobs: int, age_seconds: float) -> None:
    """`jobs` scale-up requests waiting on the queue, the oldest `age_seconds` old (CloudWatch's AWS/SQS age,
    which moto does not make, is seeded)."""
    sqs = boto3.client("sqs", region_name=region)
    url = urls[(region, key)]
    for i in range(jobs):
        if url.endswith(".fifo"):
            sqs.send_message(QueueUrl=url, MessageBody=f'{{"id": {i}}}', MessageGroupId="jobs")
        else:
            sqs.send_message(QueueUrl=url, MessageBody=f'{{"id": {i}}}')
    put_queue_ages(boto3.client("cloudwatch", region_name=region), {url.rsplit("/", 1)[-1]: age_seconds}, T0)


def drain(urls: dict[tuple[str, str], str], region: str, key: str) -> None:
    boto3.client("sqs", region_name=region).purge_queue(QueueUrl=urls[(region, key)])


def config(text: str = DISCOVERY_ALONE, group_by: str = "all") -> Config:
    return parse_config(text.replace("GROUP_BY", group_by), source="fleet.yaml")


def tick(cfg: Config, at: datetime = T0) -> Snapshot:
    return collect(cfg, AwsClients(), now=at, account_id=ACCOUNT, snapshot_id=f"s-{at:%H%M}")


def rows(page: dict[str, Any]) -> dict[str, tuple[str, str, float | None]]:
    return {r["runner_type"]: (r["region"], r["queue"], r["queue_size"]) for r in page["runner_types"]}


def test_jobs_waiting_in_the_second_region_and_on_the_fifo_queue_are_both_paged_each_row_naming_its_region(
    aws: None,
) -> None:
    urls = create_fleet()
    wait(urls, "eu-west-1", "linux-x64", 20, 45 * 60)  # the second region's copy of a key both regions have
    wait(urls, "us-east-1", FIFO_KEY, 3, 10 * 60)
    cfg = config()
    snap = tick(cfg)
    found = {rt.name: rt for rt in snap.runner_types}
    # Every key in both regions, the FIFO queue's key without its suffix; no dead-letter queue.
    assert set(found) == set(KEYS) | {f"{key}@eu-west-1" for key in KEYS}
    assert (found[FIFO_KEY].queue_name, found[FIFO_KEY].region) == (queue_name(FIFO_KEY, fifo=True), "us-east-1")
    assert found["linux-x64@eu-west-1"].value(SignalName.QUEUE_SIZE) == 20
    assert found["linux-x64"].value(SignalName.QUEUE_SIZE) == 0
    assert [d.skipped for d in snap.discovery] == [0, 0]

    stack = StackInMoto.create()
    inbox = Inbox(stack.sns)
    stack.evaluate(snap, cfg)
    [page] = inbox.drain()
    assert rows(page) == {
        "linux-x64@eu-west-1": ("eu-west-1", queue_name("linux-x64"), 20),
        FIFO_KEY: ("us-east-1", queue_name(FIFO_KEY, fifo=True), 3),
    }
    assert "linux-x64@eu-west-1: 20 queued, oldest 45m" in page["summary"]
    assert f"{FIFO_KEY} (us-east-1): 3 queued, oldest 10m" in page["summary"]


def test_every_body_names_the_region_of_each_row(aws: None) -> None:
    urls = create_fleet()
    wait(urls, "eu-west-1", "linux-x64", 20, 45 * 60)
    wait(urls, "us-east-1", "linux-x64", 2, 30 * 60)
    cfg = config()
    stack = StackInMoto.create(chat=True)
    inbox = Inbox(stack.sns)
    stack.evaluate(tick(cfg), cfg)
    [page] = [p for p in inbox.drain() if p.get("version") == ALERT_VERSION]  # the chat topic's is Chatbot's
    alert = Alert.model_validate(page)
    email = email_text(alert).splitlines()
    table = {line.split()[0]: line.split()[1] for line in email if line.startswith("linux-x64") and " " in line}
    assert table == {"linux-x64@eu-west-1": "eu-west-1", "linux-x64": "us-east-1"}
    bodies = render(alert, Origin.of_topic(stack.stack.topic_arn))
    chat = json.loads(bodies.chat or "{}")["content"]["description"]
    assert "`linux-x64@eu-west-1`: 20 queued" in chat and "`linux-x64` (us-east-1): 2 queued" in chat
    pager = json.loads(json.loads(bodies.message)["https"])  # the CloudWatch alarm a pager reads
    for text in (pager["NewStateReason"], pager["AlarmDescription"]):
        assert "linux-x64@eu-west-1: 20 queued" in text and "linux-x64 (us-east-1): 2 queued" in text


NAMED_AND_DISCOVERED = DISCOVERY_ALONE.replace(
    "discovery:",
    """runner_types:
  - {name: windows-x64, queue: {name: multi-runner-windows-x64-queued-builds}, team: windows-ci}
discovery:""",
)


def test_a_named_queue_shadows_the_same_queue_discovered_whatever_account_the_collector_was_told(aws: None) -> None:
    """sam local invokes the collector under an invented account; ListQueues shows the real one."""
    create_fleet(("us-east-1",))
    told = "012345678912"  # not the queues' account (ACCOUNT): the listing's URLs say which account is the caller's
    snap = collect(config(NAMED_AND_DISCOVERED), AwsClients(), now=T0, account_id=told, snapshot_id="s")
    east = [rt for rt in snap.runner_types if rt.region == "us-east-1"]
    assert sorted(rt.name for rt in east) == sorted(KEYS)  # each queue once: windows-x64 not again as a copy
    assert all(rt.account_id is None for rt in east)  # none foreign: the stack's own account
    assert snap.discovery[0].skipped_queues[0].shadowed


def test_a_named_runner_type_keeps_its_name_its_queue_and_its_team_and_its_copy_elsewhere_is_paged_too(
    aws: None,
) -> None:
    urls = create_fleet()
    wait(urls, "us-east-1", "windows-x64", 4, 20 * 60)
    wait(urls, "eu-west-1", "windows-x64", 6, 25 * 60)
    cfg = config(NAMED_AND_DISCOVERED, group_by="team")
    snap = tick(cfg)
    found = {rt.name: rt for rt in snap.runner_types}
    assert (found["windows-x64"].region, found["windows-x64"].team) == ("us-east-1", "windows-ci")
    assert (found["windows-x64@eu-west-1"].region, found["windows-x64@eu-west-1"].team) == ("eu-west-1", None)
    # The discovered us-east-1 queue is the named one's: said (shadowed), watched once, not degraded.
    [east, west] = snap.discovery
    assert east.skipped == 1 and west.skipped == 0
    [shadowed] = east.skipped_queues
    assert shadowed.queue == queue_name("windows-x64") and shadowed.shadowed
    assert "watched as windows-x64" in shadowed.reason and east.unwatched == []

    stack = StackInMoto.create()
    inbox = Inbox(stack.sns)
    result = stack.evaluate(snap, cfg)
    assert not any(name.startswith(UNWATCHED) for name in result.degraded)
    pages = {p["team"]: rows(p) for p in inbox.drain()}
    assert pages == {
        "windows-ci": {"windows-x64": ("us-east-1", queue_name("windows-x64"), 4)},
        "ci-infra": {"windows-x64@eu-west-1": ("eu-west-1", queue_name("windows-x64"), 6)},
    }


def test_a_deploy_that_adds_a_region_neither_pages_again_nor_loses_the_open_alerts_resolve(aws: None) -> None:
    urls = create_fleet()
    wait(urls, "us-east-1", "linux-x64", 5, 30 * 60)
    stack = StackInMoto.create()
    inbox = Inbox(stack.sns)
    before = config(ONE_REGION, group_by="runner_type")
    stack.evaluate(tick(before), before)
    [first] = inbox.drain()
    assert (first["page"], list(rows(first))) == ("new", ["linux-x64"])

    # The deploy: the same key, and queues holding jobs, in a second region.
    wait(urls, "eu-west-1", "linux-x64", 7, 40 * 60)
    after = config(group_by="runner_type")
    at = T0 + timedelta(minutes=1)
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {queue_name("linux-x64"): 31 * 60}, at)
    put_queue_ages(boto3.client("cloudwatch", region_name="eu-west-1"), {queue_name("linux-x64"): 41 * 60}, at)
    stack.evaluate(tick(after, at), after)
    pages = inbox.drain()
    # Only the new region's copy pages; the open alert on linux-x64 is not paged again.
    assert [(p["page"], list(rows(p))) for p in pages] == [("new", ["linux-x64@eu-west-1"])]
    state = load_state(stack.dynamodb, stack.stack.table)
    firing = {(i.runner_type, i.since) for i in state.instances.values() if i.rule == "jobs-queueing"}
    assert firing == {("linux-x64", T0), ("linux-x64@eu-west-1", at)}

    # The first region drains: its alert resolves, under the name it was paged with.
    drain(urls, "us-east-1", "linux-x64")
    later = at + timedelta(minutes=1)
    put_queue_ages(boto3.client("cloudwatch", region_name="eu-west-1"), {queue_name("linux-x64"): 42 * 60}, later)
    stack.evaluate(tick(after, later), after)
    [resolved] = inbox.drain()
    assert (resolved["page"], resolved["dedup_key"], list(rows(resolved))) == (
        "resolved",
        first["dedup_key"],
        ["linux-x64"],
    )


def test_a_rule_for_a_key_selects_every_regions_copy_and_one_with_a_region_selects_that_copy(aws: None) -> None:
    urls = create_fleet()
    wait(urls, "us-east-1", "linux-x64", 2, 30 * 60)
    wait(urls, "eu-west-1", "linux-x64", 3, 30 * 60)
    text = DISCOVERY_ALONE.replace(
        '  - {name: jobs-queueing, match: ["*"],',
        '  - {name: linux-p1, match: [linux-x64], exclude: ["linux-x64@eu-west-1"], priority: P1,'
        " thresholds: {queue_time: 5m, queue_size: 0}}\n"
        "  - {name: jobs-queueing, match: [linux-x64],",
    )
    cfg = config(text)
    stack = StackInMoto.create()
    inbox = Inbox(stack.sns)
    stack.evaluate(tick(cfg), cfg)
    pages = {p["rule"]: sorted(rows(p)) for p in inbox.drain()}
    assert pages == {
        # linux-p1 (P1) fires on the plain copy and holds back the lower-priority page there: one incident each
        "jobs-queueing": ["linux-x64@eu-west-1"],
        "linux-p1": ["linux-x64"],
        "queuewatch-health": ["rules:unjudged"],  # the fleet's other runner types: no rule selects them
    }


def test_a_silence_hides_one_regions_copy_as_the_page_names_it(aws: None) -> None:
    urls = create_fleet()
    wait(urls, "us-east-1", "linux-x64", 2, 30 * 60)
    wait(urls, "eu-west-1", "linux-x64", 3, 30 * 60)
    cfg = config(group_by="runner_type")
    stack = StackInMoto.create()
    silence = SilenceRecord(
        "s1", ("linux-x64@eu-west-1",), None, None, T0 - timedelta(hours=1), T0 + timedelta(hours=1), "me", "eu"
    )
    put_silence(stack.dynamodb, stack.stack.table, silence)
    inbox = Inbox(stack.sns)
    stack.evaluate(tick(cfg), cfg)
    assert [list(rows(p)) for p in inbox.drain()] == [["linux-x64"]]


def test_a_queue_discovery_finds_and_cannot_watch_is_degraded_on_the_monitor_page_and_in_status(aws: None) -> None:
    create_fleet()
    sqs = boto3.client("sqs", region_name="eu-west-1")
    sqs.create_queue(QueueName="multi-runner-collector-queued-builds")  # its key is queuewatch's own name
    cfg = config()
    snap = tick(cfg)
    unwatched = [q for d in snap.discovery for q in d.unwatched]
    assert [q.queue for q in unwatched] == ["multi-runner-collector-queued-builds"]
    assert "reserves" in unwatched[0].reason

    stack = StackInMoto.create()
    inbox = Inbox(stack.sns)
    stack.evaluate(snap, cfg)
    [monitor] = inbox.drain()
    name = f"{UNWATCHED}:eu-west-1:multi-runner-collector-queued-builds"
    assert monitor["rule"] == HEALTH_RULE
    assert rows(monitor)[name] == ("eu-west-1", "multi-runner-collector-queued-builds", None)
    assert "reserves" in monitor["summary"]
    status = show_status(stack.dynamodb, stack.stack.table, T0, as_json=False)
    assert f"  {name}: firing since" in status

    # Renamed away (or deleted), the queue is no longer skipped: the monitor page resolves.
    sqs.delete_queue(QueueUrl=sqs.get_queue_url(QueueName="multi-runner-collector-queued-builds")["QueueUrl"])
    later = T0 + timedelta(minutes=1)
    stack.evaluate(tick(cfg, later), cfg)
    [resolved] = inbox.drain()
    assert (resolved["rule"], resolved["page"], list(rows(resolved))) == (HEALTH_RULE, "resolved", [name])


def test_a_failed_listing_in_the_first_region_never_renames_the_second_regions_copies(aws: None) -> None:
    urls = create_fleet()
    wait(urls, "eu-west-1", "linux-x64", 20, 45 * 60)
    cfg = config()
    clients = AwsClients()

    def refuse(**_: Any) -> None:
        raise RuntimeError("ListQueues refused")

    east = clients.sqs("us-east-1")
    east.meta.events.register("before-call.sqs.ListQueues", refuse)
    snap = collect(cfg, clients, now=T0, account_id=ACCOUNT, snapshot_id="s")
    assert snap.discovery[0].error and "ListQueues refused" in snap.discovery[0].error
    # linux-x64 in us-east-1 is unknown this tick; eu-west-1's copy keeps its own identity, not the plain name.
    assert {rt.name for rt in snap.runner_types} == {f"{key}@eu-west-1" for key in KEYS}


def test_a_second_fifo_twin_of_a_key_in_one_region_is_watched_under_a_name_of_its_own(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.create_queue(QueueName=queue_name("linux-x64"))
    sqs.create_queue(QueueName=queue_name("linux-x64", fifo=True), Attributes={"FifoQueue": "true"})
    snap = tick(config())
    assert {rt.name: rt.queue_name for rt in snap.runner_types} == {
        "linux-x64": queue_name("linux-x64"),
        "linux-x64@us-east-1": queue_name("linux-x64", fifo=True),
    }


@pytest.mark.parametrize("foreign", [True, False])
def test_a_queue_in_another_account_is_read_with_its_account_on_every_metric_query(aws: None, foreign: bool) -> None:
    other = "111122223333" if foreign else ACCOUNT
    text = f"""
version: 1
defaults: {{region: us-east-1}}
runner_types:
  - {{name: gpu, queue: {{name: gpu-queued-builds, account_id: "{other}"}}}}
  - {{name: linux, queue: {{name: linux-queued-builds}}}}
rules:
  - {{name: jobs-queueing, team: ci-infra, thresholds: {{queue_time: 1m, queue_size: 0}}}}
"""
    sqs = boto3.client("sqs", region_name="us-east-1")
    for name in ("gpu-queued-builds", "linux-queued-builds"):
        sqs.send_message(QueueUrl=sqs.create_queue(QueueName=name)["QueueUrl"], MessageBody="{}")
    put_queue_ages(boto3.client("cloudwatch", region_name="us-east-1"), {"linux-queued-builds": 300.0}, T0)
    asked: list[dict[str, Any]] = []
    clients = AwsClients()
    clients.cloudwatch("us-east-1").meta.events.register(
        "before-parameter-build.cloudwatch.GetMetricData", lambda params, **_: asked.extend(params["MetricDataQueries"])
    )
    snap = collect(parse_config(text), clients, now=T0, account_id=ACCOUNT, snapshot_id="s")
    accounts = {
        q["MetricStat"]["Metric"]["Dimensions"][0]["Value"]: q.get("AccountId")
        for q in asked
        if q["MetricStat"]["Metric"]["Namespace"] == "AWS/SQS"
    }
    assert accounts["gpu-queued-builds"] == (other if foreign else None)
    assert accounts["linux-queued-builds"] is None
    found = {rt.name: rt for rt in snap.runner_types}
    assert found["gpu"].account_id == (other if foreign else None)
    assert found["linux"].value(SignalName.QUEUE_TIME) == 300


def test_two_discovery_entries_finding_one_queue_watch_it_once_and_say_so(aws: None) -> None:
    create_fleet(("us-east-1",))
    again = "prefix: multi, region: us-east-1}"  # multi-{runner_type}-...: "runner-linux-x64", the same queues
    overlapping = DISCOVERY_ALONE.replace("prefix: multi-runner, region: eu-west-1}", again).replace("GROUP_BY", "all")
    # check-config refuses such a config; should one reach the collector all the same (built by hand, or
    # checked by an older version), it still watches each queue once and says what it skipped.
    with pytest.raises(ConfigError, match="discovery"):
        parse_config(overlapping, source="fleet.yaml")
    snap = tick(Config.model_validate(yaml.safe_load(overlapping)))
    assert sorted(rt.name for rt in snap.runner_types) == sorted(KEYS)  # not runner-linux-x64, ... again
    first, second = snap.discovery
    assert (first.found, first.skipped, second.found, second.skipped) == (len(KEYS), 0, 0, len(KEYS))
    assert all(q.shadowed and q.reason.startswith("watched as ") for q in second.skipped_queues)


def test_the_silence_command_takes_one_copys_identity(aws: None) -> None:
    stack = StackInMoto.create()
    base = ["silence", "add", "--table", stack.stack.table, "--region", "us-east-1", "--for", "2h"]
    assert main([*base, "--match", "linux-x64@eu-west-1", "--match", "gpu@*", "--comment", "eu maintenance"]) == 0
    [silence] = load_state(stack.dynamodb, stack.stack.table).silences
    assert silence.matchers == ("linux-x64@eu-west-1", "gpu@*")


def test_a_queue_whose_key_is_reserved_is_watched_once_named_and_then_only_shadowed(aws: None) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.create_queue(QueueName="multi-runner-collector-queued-builds")
    text = DISCOVERY_ALONE.replace(
        "discovery:",
        "runner_types:\n  - {name: collector-pool, queue: {name: multi-runner-collector-queued-builds}}\ndiscovery:",
    )
    snap = tick(config(text))
    assert [rt.name for rt in snap.runner_types] == ["collector-pool"]
    [queue] = snap.discovery[0].skipped_queues
    assert queue.shadowed and queue.reason == "watched as collector-pool, found first"


def test_the_snapshot_names_the_discovered_runner_types_no_rule_selects(aws: None) -> None:
    create_fleet()
    only_linux_x64 = "  - {name: jobs-queueing, match: [linux-x64],"
    text = DISCOVERY_ALONE.replace('  - {name: jobs-queueing, match: ["*"],', only_linux_x64)
    judged_one = tick(config(text))
    others = sorted({name.split("@")[0] for name in (r.name for r in judged_one.runner_types)} - {"linux-x64"})
    assert others  # the fleet has runner types the rule leaves out
    assert judged_one.unjudged == sorted(r.name for r in judged_one.runner_types if r.name.split("@")[0] != "linux-x64")
    assert judged_one.unjudged_count == len(judged_one.unjudged)
    assert tick(config()).unjudged == []  # match ["*"]: every runner type judged
