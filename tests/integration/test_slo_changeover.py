"""The changeover from 5-minute buckets to minutes and hours, on moto: counters the previous release wrote
(`sk` = the bucket's start) are read alongside the new ones until they leave every window, each job counted
once: a job is counted by whichever release first saw it decided, and its mark turns the other away."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from queuewatch.adapters.aws.item_size import item_size
from queuewatch.adapters.slo_table.counters import (
    COUNTER_PREFIX,
    EXPIRES_AT,
    MARK_PREFIX,
    MARK_SORT,
    Contribution,
    count_job,
    read_tally,
)
from queuewatch.model.slo import Counts, bucket_start
from queuewatch_cli.devkit.moto_tables import create_slo_table

TABLE = "slos"
DEPLOYED = datetime(2026, 11, 21, 12, 3, 40, tzinfo=UTC)  # the first count in the new layout is after this
KEEP = DEPLOYED + timedelta(days=30)


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_slo_table(client, TABLE)
    return client


def count_as_before(dynamodb: Any, job_id: int, outcome: str, at: datetime) -> None:
    """What the previous release wrote for a job: its mark, and one to its 5-minute bucket."""
    dynamodb.put_item(
        TableName=TABLE,
        Item={"pk": {"S": f"{MARK_PREFIX}{job_id}"}, "sk": {"S": MARK_SORT}, EXPIRES_AT: {"N": "9999999999"}},
    )
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": f"{COUNTER_PREFIX}builds"}, "sk": {"S": bucket_start(at).isoformat()}},
        UpdateExpression="ADD #outcome :one",
        ExpressionAttributeNames={"#outcome": outcome},
        ExpressionAttributeValues={":one": {"N": "1"}},
    )


def count_now(dynamodb: Any, job_id: int, outcome: str, at: datetime) -> bool:
    contribution = Contribution("builds", "good" if outcome == "good" else "bad", at, KEEP)
    return count_job(dynamodb, TABLE, job_id, [contribution], KEEP)


def test_old_buckets_and_new_minutes_count_each_job_once_across_the_changeover(dynamodb: Any) -> None:
    before = [(1, "good", DEPLOYED - timedelta(minutes=50)), (2, "bad", DEPLOYED - timedelta(minutes=7)),
              (3, "bad", DEPLOYED - timedelta(seconds=30))]  # fmt: skip
    after = [(4, "good", DEPLOYED + timedelta(seconds=5)), (5, "bad", DEPLOYED + timedelta(minutes=9)),
             (6, "good", DEPLOYED + timedelta(minutes=40))]  # fmt: skip
    for job in before:
        count_as_before(dynamodb, *job)
    for job in after:
        assert count_now(dynamodb, *job)
    # The old release's jobs arriving again (a redelivery after the deploy): their marks refuse them.
    assert not count_now(dynamodb, 2, "bad", DEPLOYED - timedelta(minutes=7))
    assert not count_now(dynamodb, 3, "bad", DEPLOYED - timedelta(seconds=30))

    now = DEPLOYED + timedelta(minutes=45)  # 12:48:40
    tally = read_tally(dynamodb, TABLE, "builds", 6 * 3600, now)
    assert tally.legacy == {
        bucket_start(DEPLOYED - timedelta(minutes=50)): Counts(good=1),
        bucket_start(DEPLOYED - timedelta(minutes=7)): Counts(bad=1),
        bucket_start(DEPLOYED - timedelta(seconds=30)): Counts(bad=1),
    }
    # Every window, whichever layout holds its jobs: the new ones exact ([11:48, 12:48) for the hour), the old
    # ones by the buckets that overlap it (11:45 onwards), as before the deploy.
    assert tally.window(now, 3600) == Counts(good=2, bad=3)  # jobs 4, 5, 6 and the old 2 and 3
    assert tally.window(now, 6 * 3600) == Counts(good=3, bad=3)
    assert tally.window(now, 1800) == Counts(good=1, bad=0)  # [12:18, 12:48): job 6 alone
    assert tally.window(now, 300) == Counts(good=1, bad=0)


def test_old_buckets_stop_counting_once_they_leave_the_longest_window(dynamodb: Any) -> None:
    count_as_before(dynamodb, 1, "bad", DEPLOYED - timedelta(minutes=2))
    assert count_now(dynamodb, 2, "good", DEPLOYED + timedelta(minutes=10))
    three_days = 3 * 86400
    inside = DEPLOYED + timedelta(days=3) - timedelta(minutes=3)
    assert read_tally(dynamodb, TABLE, "builds", three_days, inside).window(inside, three_days) == Counts(1, 1)
    # The old bucket (12:00) still overlaps the 3-day window until the window's start passes 12:05.
    gone = datetime(2026, 11, 24, 12, 5, tzinfo=UTC)
    tally = read_tally(dynamodb, TABLE, "builds", three_days, gone)
    assert tally.window(gone, three_days) == Counts(good=1)
    later = gone + timedelta(hours=1)  # past the hour the read starts from: not even read
    assert read_tally(dynamodb, TABLE, "builds", three_days, later).legacy == {}


def test_an_hour_with_every_minute_counted_stays_one_write_unit(dynamodb: Any) -> None:
    """An hour's item holds its minutes: with a job of each outcome in every minute, under the longest SLO
    name, and every count at 4 digits (9,999 jobs of one outcome in a minute), it stays under 1 KB."""
    name = "s" * 63
    hour = datetime(2026, 11, 21, 13, 0, tzinfo=UTC)
    for number in range(120):
        at = hour + timedelta(minutes=number // 2, seconds=1)
        contribution = Contribution(name, "good" if number % 2 else "bad", at, KEEP)
        assert count_job(dynamodb, TABLE, number, [contribution], KEEP)
    [item] = dynamodb.scan(TableName=TABLE, FilterExpression="begins_with(pk, :slo)",
                           ExpressionAttributeValues={":slo": {"S": COUNTER_PREFIX}})["Items"]  # fmt: skip
    assert len(item) == 2 + 2 + 120 + 1  # keys, the hour's totals, its minutes, the expiry
    worst = {k: ({"N": "9999"} if k not in ("pk", "sk", EXPIRES_AT) and "N" in v else v) for k, v in item.items()}
    assert item_size(worst) < 1024
