"""The tables the demo, the local stack, the tests and the benchmark make are template.yaml's own declarations."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest.mock import MagicMock

import pytest
from support import load_template

from queuewatch_cli.devkit.moto_tables import JOBS_TABLE, SLO_TABLE, STATE_TABLE, create_declared_table, declared_tables


@pytest.mark.parametrize("logical_id", [STATE_TABLE, JOBS_TABLE, SLO_TABLE])
def test_each_table_is_made_as_the_template_declares_it(logical_id: str) -> None:
    declared: dict[str, Any] = load_template()["Resources"][logical_id]["Properties"]
    client = MagicMock()
    create_declared_table(client, logical_id, "t")
    made = client.create_table.call_args.kwargs
    assert made["KeySchema"] == declared["KeySchema"]
    assert made["AttributeDefinitions"] == declared["AttributeDefinitions"]
    assert made["BillingMode"] == declared["BillingMode"]
    assert made.get("GlobalSecondaryIndexes", []) == declared.get("GlobalSecondaryIndexes", [])
    ttl = client.update_time_to_live.call_args.kwargs
    assert ttl == {"TableName": "t", "TimeToLiveSpecification": declared["TimeToLiveSpecification"]}


def test_every_table_of_the_template_is_known() -> None:
    assert sorted(declared_tables()) == sorted([STATE_TABLE, JOBS_TABLE, SLO_TABLE])


def test_a_table_the_template_does_not_declare_is_named(tmp_path: Path) -> None:
    template = tmp_path / "template.yaml"
    template.write_text(
        "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n    Properties: {TopicName: !Sub '${AWS::StackName}-t'}\n"
    )
    with pytest.raises(KeyError, match=r"no AWS::DynamoDB::Table named 'StateTable' \(it has \[\]\)"):
        create_declared_table(MagicMock(), STATE_TABLE, "t", template)
