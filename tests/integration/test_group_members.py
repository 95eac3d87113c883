"""A group's members are stored compressed, so 5,000 names of 128 characters fit the item."""

from __future__ import annotations

import boto3
from support import T0

from queuewatch.adapters.aws.item_size import ITEM_LIMIT
from queuewatch.adapters.state_table.alerts import group_item_size, load_state, put_group
from queuewatch.alerting.alert_state import GroupRecord, GroupStatus
from queuewatch_cli.devkit.moto_tables import create_state_table

NAMES = tuple(("linux-arm64-m7g-8xlarge-ephemeral-ubuntu-2404-" * 3)[:118] + f".pool-{i:04d}" for i in range(5000))


def test_five_thousand_long_names_fit_the_item_and_read_back_in_order(aws: None) -> None:
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_state_table(dynamodb, "state")
    record = GroupRecord("jobs-queueing", "all", GroupStatus.FIRING, T0, NAMES, T0, 1)
    assert ITEM_LIMIT < 5000 * 128  # the names alone, as a list
    assert group_item_size(record, T0) < ITEM_LIMIT // 10
    put_group(dynamodb, "state", record, 0, T0)
    assert load_state(dynamodb, "state").groups["jobs-queueing#all"].members == NAMES
