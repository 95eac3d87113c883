"""The SLOs' counters on moto: the track stage counts each started job once, good or bad, in the minute (and
the hour) of the moment it was decided, whatever the events' order, their repeats, or a retry after a failed
count."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.client import BaseClient
from faults import inject

from queuewatch.adapters.aws.item_size import item_size
from queuewatch.adapters.slo_table.counters import COUNTER_PREFIX, EXPIRES_AT, Contribution, count_job, read_tally
from queuewatch.config.load import parse_config
from queuewatch.model.slo import HOUR, MINUTE, Counts, floor_to
from queuewatch.track.events import WorkflowJobEvent
from queuewatch.track.routing import Router
from queuewatch.track.stage import track
from queuewatch_cli.devkit.handlers import load_event
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_slo_table

JOBS, SLOS = "jobs", "slos"
QUEUED = datetime(2026, 11, 21, 16, 6, tzinfo=UTC)
CONFIG = """
version: 1
runner_types:
  - {name: linux.2xlarge, team: ci-infra, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
  - {name: gpu.a100, team: ml-infra, queue: {name: gh-ci-gpu-a100-queued-builds}}
rules:
  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 30m}}
slos:
  - {name: linux-fast, match: ["linux.*"], objective: 99%, queue_time_under: 2m, team: ci-infra}
  - {name: everything, objective: 95%, queue_time_under: 10m, team: ci-infra}
"""


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(client, JOBS)
    create_slo_table(client, SLOS)
    return client


def event(action: str, job_id: int, started: datetime | None, labels: str = "linux.2xlarge") -> WorkflowJobEvent:
    body = copy.deepcopy(load_event(f"track_{action}.json"))["detail"]
    job = body["workflow_job"]
    job.update(id=job_id, created_at=QUEUED.strftime("%Y-%m-%dT%H:%M:%SZ"), labels=[labels], status=action)
    job["started_at"] = started.strftime("%Y-%m-%dT%H:%M:%SZ") if started else None
    if action == "completed":
        job["completed_at"] = ((started or QUEUED) + timedelta(minutes=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
        job["conclusion"] = "success" if started else "cancelled"
    return WorkflowJobEvent.model_validate(body)


def apply(dynamodb: Any, *events: WorkflowJobEvent) -> None:
    router = Router(parse_config(CONFIG))
    now = QUEUED + timedelta(hours=1)
    for one in events:
        track(one, router, dynamodb, JOBS, now, slo_table=SLOS)


def counts(dynamodb: Any, slo: str) -> dict[datetime, Counts]:
    """The SLO's counts by minute; its hours must hold the same jobs."""
    tally = read_tally(dynamodb, SLOS, slo, 2 * 86400, QUEUED + timedelta(days=1))
    by_hour: dict[datetime, Counts] = {}
    for minute, counted in tally.minutes.items():
        by_hour[floor_to(minute, HOUR)] = by_hour.get(floor_to(minute, HOUR), Counts()) + counted
    assert by_hour == tally.hours
    return tally.minutes


def minute_of(moment: datetime) -> datetime:
    return floor_to(moment, MINUTE)


def test_a_job_counts_once_whatever_the_order_and_repeats_of_its_events(dynamodb: Any) -> None:
    started = QUEUED + timedelta(seconds=50)
    completed_first = [event("completed", 1, started), event("in_progress", 1, started), event("queued", 1, None)]
    apply(dynamodb, event("queued", 1, None), event("in_progress", 1, started), event("in_progress", 1, started))
    apply(dynamodb, *completed_first)  # the same job's events again, the last first
    assert counts(dynamodb, "linux-fast") == {minute_of(started): Counts(good=1)}
    assert counts(dynamodb, "everything") == {minute_of(started): Counts(good=1)}


def test_a_late_start_is_bad_from_the_moment_it_waited_the_threshold(dynamodb: Any) -> None:
    started = QUEUED + timedelta(minutes=7)  # over linux-fast's 2m, under everything's 10m
    apply(dynamodb, event("queued", 2, None), event("in_progress", 2, started))
    assert counts(dynamodb, "linux-fast") == {minute_of(QUEUED + timedelta(minutes=2)): Counts(bad=1)}
    assert counts(dynamodb, "everything") == {minute_of(started): Counts(good=1)}


def test_a_job_an_slo_does_not_select_is_not_counted_for_it(dynamodb: Any) -> None:
    started = QUEUED + timedelta(seconds=30)
    apply(dynamodb, event("queued", 3, None, labels="gpu.a100"), event("in_progress", 3, started, labels="gpu.a100"))
    assert counts(dynamodb, "linux-fast") == {}
    assert counts(dynamodb, "everything") == {minute_of(started): Counts(good=1)}


def test_a_job_cancelled_after_it_turned_bad_is_bad_and_one_cancelled_sooner_counts_nowhere(dynamodb: Any) -> None:
    # Both cancelled 20 minutes after they were queued, never started: bad for both SLOs.
    apply(dynamodb, event("queued", 4, None), event("completed", 4, None))
    assert counts(dynamodb, "linux-fast") == {minute_of(QUEUED + timedelta(minutes=2)): Counts(bad=1)}
    assert counts(dynamodb, "everything") == {minute_of(QUEUED + timedelta(minutes=10)): Counts(bad=1)}


def test_a_retry_after_a_failed_count_counts_the_job_once(dynamodb: Any) -> None:
    started = QUEUED + timedelta(seconds=40)
    apply(dynamodb, event("queued", 5, None))
    # The job's write succeeds; every attempt of the count is throttled, so the event fails and is retried.
    fault = inject(dynamodb, "TransactWriteItems", "throttling")
    with pytest.raises(Exception, match="Throttling"):
        apply(dynamodb, event("in_progress", 5, started))
    fault.enabled = False
    assert counts(dynamodb, "linux-fast") == {}
    apply(dynamodb, event("in_progress", 5, started))  # Lambda's retry: the job's write is now a duplicate
    apply(dynamodb, event("in_progress", 5, started))
    assert counts(dynamodb, "linux-fast") == {minute_of(started): Counts(good=1)}


def test_a_count_whose_answer_was_lost_is_not_counted_twice(dynamodb: Any) -> None:
    started = QUEUED + timedelta(seconds=40)
    apply(dynamodb, event("queued", 6, None))
    fault = inject(dynamodb, "TransactWriteItems", "read-timeout", failing_attempts=1, applied=True)
    apply(dynamodb, event("in_progress", 6, started))  # botocore retries; the first attempt took effect
    assert fault.faulted == 1
    assert counts(dynamodb, "linux-fast") == {minute_of(started): Counts(good=1)}


@pytest.mark.parametrize(("runner_types", "jobs"), [(5, 10), (40, 80)])
def test_the_collector_reads_each_slos_counters_in_one_query_whatever_the_fleet_and_volume(
    dynamodb: Any, runner_types: int, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from queuewatch.adapters.aws.clients import AwsClients
    from queuewatch.collect import collect

    names = [f"linux-{n}" for n in range(runner_types)]
    sqs = boto3.client("sqs", region_name="us-east-1")
    for name in names:
        sqs.create_queue(QueueName=f"q-{name}")
    config = parse_config(
        "version: 1\nrunner_types:\n"
        + "".join(f"  - {{name: {name}, team: ci-infra, queue: {{name: q-{name}}}}}\n" for name in names)
        + "rules:\n  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 30m}}\n"
        "slos:\n  - {name: fast, objective: 99%, queue_time_under: 2m, team: ci-infra}\n"
        "  - {name: slow, objective: 95%, queue_time_under: 10m, team: ci-infra}\n"
    )
    now = QUEUED + timedelta(days=2)
    keep = now + timedelta(days=30)
    # Spread over the three days' whole minutes before now's, for both SLOs: 80 jobs fill every hour of them
    # (moto copies the whole table for each transaction, so each job costs more than the last).
    for number in range(jobs):
        at = now - timedelta(minutes=1 + 55 * number % (3 * 1440 - 1))
        count_job(
            dynamodb,
            SLOS,
            number,
            [Contribution("fast", "good", at, keep), Contribution("slow", "bad", at, keep)],
            keep,
        )
    clients = AwsClients()
    queries: list[str] = []
    real = BaseClient._make_api_call  # type: ignore[attr-defined]

    def counted(self: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        if operation == "Query":
            queries.append(params["TableName"])
        return real(self, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", counted)
    snap = collect(
        config, clients, now=now, account_id="123456789012", snapshot_id="s", jobs_table=JOBS, slo_table=SLOS
    )
    assert queries.count(SLOS) == 2  # one per SLO: its hours, each with its minutes
    fast, slow = snap.slos
    assert fast.window(259200) is not None and fast.window(259200).good == jobs  # type: ignore[union-attr]
    assert slow.window(259200).bad == jobs  # type: ignore[union-attr]


def test_a_job_the_collector_counted_waiting_counts_bad_once_once_it_starts(dynamodb: Any) -> None:
    """Waiting past the threshold it is the collector's (the jobs queued now); started, the track stage's
    counter holds it in the same minute and the collector no longer sees it queued: one bad job at every
    tick, whatever events of the job come again."""
    from queuewatch.adapters.jobs_table.jobs import queued_jobs
    from queuewatch.adapters.slo_table.readings import slo_readings

    config = parse_config(CONFIG)
    router = Router(config)
    started = QUEUED + timedelta(minutes=7)  # late for linux-fast (2m), in time for everything (10m)

    def the_hour(now: datetime) -> dict[str, tuple[int, int]]:
        readings = slo_readings(config, dynamodb, SLOS, list(queued_jobs(dynamodb, JOBS)), now)
        windows = {r.name: r.window(3600) for r in readings}
        return {name: (w.good, w.bad) for name, w in windows.items() if w is not None}

    track(event("queued", 7, None), router, dynamodb, JOBS, QUEUED, slo_table=SLOS)
    assert the_hour(QUEUED + timedelta(minutes=1)) == {"linux-fast": (0, 0), "everything": (0, 0)}
    assert the_hour(QUEUED + timedelta(minutes=5)) == {"linux-fast": (0, 1), "everything": (0, 0)}
    track(event("in_progress", 7, started), router, dynamodb, JOBS, started, slo_table=SLOS)
    # Started at the tick's own minute: counted from the next tick, whose window holds that whole minute.
    assert the_hour(started) == {"linux-fast": (0, 1), "everything": (0, 0)}
    assert the_hour(started + timedelta(minutes=1)) == {"linux-fast": (0, 1), "everything": (1, 0)}
    later = started + timedelta(minutes=20)
    for again in (event("in_progress", 7, started), event("queued", 7, None), event("completed", 7, started)):
        track(again, router, dynamodb, JOBS, later, slo_table=SLOS)
    assert the_hour(later) == {"linux-fast": (0, 1), "everything": (1, 0)}


def test_a_retried_count_of_a_job_that_waited_for_approval_counts_from_its_queueing_not_its_creation(
    dynamodb: Any,
) -> None:
    """A deployment approval of 30 minutes is not queue time: the job waited 40 s for a runner. The retry
    of a failed count finds the job stored already, and counts it from the queued_at stored then."""
    router = Router(parse_config(CONFIG))
    approved = QUEUED + timedelta(minutes=30)
    started = approved + timedelta(seconds=40)
    track(event("waiting", 8, None), router, dynamodb, JOBS, QUEUED, slo_table=SLOS)
    track(event("queued", 8, None), router, dynamodb, JOBS, approved, occurred_at=approved, slo_table=SLOS)
    fault = inject(dynamodb, "TransactWriteItems", "throttling")
    with pytest.raises(Exception, match="Throttling"):
        track(event("in_progress", 8, started), router, dynamodb, JOBS, started, slo_table=SLOS)
    fault.enabled = False
    track(event("in_progress", 8, started), router, dynamodb, JOBS, started, slo_table=SLOS)  # Lambda's retry
    assert counts(dynamodb, "linux-fast") == {minute_of(started): Counts(good=1)}


def test_the_counts_idempotency_token_names_the_job_and_what_it_writes() -> None:
    """Two events of one job that count it differently (the config changed between them) never share a token:
    the second is judged by the job's mark, not refused as a mismatch of a token the first may have failed on."""
    from unittest.mock import MagicMock

    client = MagicMock()
    keep = QUEUED + timedelta(days=30)
    good, bad = Contribution("a", "good", QUEUED, keep), Contribution("a", "bad", QUEUED, keep)
    for contributions in ([good], [good], [good, Contribution("b", "good", QUEUED, keep)], [bad]):
        count_job(client, SLOS, 12345678901, contributions, keep)
    tokens = [call.kwargs["ClientRequestToken"] for call in client.transact_write_items.call_args_list]
    assert all(len(token) <= 36 and token.startswith("12345678901-") for token in tokens)
    assert tokens[0] == tokens[1] and len(set(tokens)) == 3


def test_a_start_delivered_late_counts_its_job_once_and_a_replay_past_the_marks_life_counts_nothing(
    dynamodb: Any,
) -> None:
    """The webhook's redelivery of a start two hours on is the job's history: the collector no longer sees the
    job waiting, so the counter takes it (once, however often it is redelivered). An archive's replay of jobs
    queued 20 days ago, past any mark of theirs, counts nothing: some may have been counted when they ran."""
    router = Router(parse_config(CONFIG))
    started = QUEUED + timedelta(minutes=7)
    track(event("queued", 9, None), router, dynamodb, JOBS, QUEUED, slo_table=SLOS)
    redelivered = started + timedelta(hours=2)
    for _ in range(2):
        result = track(
            event("in_progress", 9, started),
            router,
            dynamodb,
            JOBS,
            redelivered,
            occurred_at=redelivered,
            received=True,
            slo_table=SLOS,
        )
        assert result.history
    assert counts(dynamodb, "linux-fast") == {minute_of(QUEUED + timedelta(minutes=2)): Counts(bad=1)}

    replayed_at = QUEUED + timedelta(days=20)
    for action, at in (("queued", None), ("in_progress", QUEUED + timedelta(seconds=30))):
        track(
            event(action, 10, at),
            router,
            dynamodb,
            JOBS,
            replayed_at,
            occurred_at=at or QUEUED,
            replayed=True,
            slo_table=SLOS,
        )
    assert counts(dynamodb, "linux-fast") == {minute_of(QUEUED + timedelta(minutes=2)): Counts(bad=1)}


def test_an_hour_with_every_minute_counted_stays_one_write_unit(dynamodb: Any) -> None:
    """An hour's item holds its minutes: with a job of each outcome in every minute, under the longest SLO
    name, and every count at 4 digits (9,999 jobs of one outcome in a minute), it stays under 1 KB."""
    name = "s" * 63
    hour = datetime(2026, 11, 21, 13, 0, tzinfo=UTC)
    keep = hour + timedelta(days=30)
    for number in range(120):
        at = hour + timedelta(minutes=number // 2, seconds=1)
        contribution = Contribution(name, "good" if number % 2 else "bad", at, keep)
        assert count_job(dynamodb, SLOS, number, [contribution], keep)
    [item] = dynamodb.scan(TableName=SLOS, FilterExpression="begins_with(pk, :slo)",
                           ExpressionAttributeValues={":slo": {"S": COUNTER_PREFIX}})["Items"]  # fmt: skip
    assert len(item) == 2 + 2 + 120 + 1  # keys, the hour's totals, its minutes, the expiry
    worst = {k: ({"N": "9999"} if k not in ("pk", "sk", EXPIRES_AT) and "N" in v else v) for k, v in item.items()}
    assert item_size(worst) < 1024


def test_only_hour_counters_are_read_from_an_slos_partition(dynamodb: Any) -> None:
    """An item between two hours' keys that is not an hour's counter (no `#h`) is read as nothing."""
    apply(dynamodb, event("queued", 1, None), event("in_progress", 1, QUEUED + timedelta(seconds=30)))
    before = counts(dynamodb, "linux-fast")
    half_past = floor_to(QUEUED, HOUR) + timedelta(minutes=30)  # sorts among the hours' keys
    stray = {"pk": {"S": f"{COUNTER_PREFIX}linux-fast"}, "sk": {"S": half_past.isoformat()}}
    dynamodb.put_item(TableName=SLOS, Item={**stray, "good": {"N": "40"}, "g06": {"N": "40"}})
    assert before and counts(dynamodb, "linux-fast") == before
