"""DynamoDB tables exactly as template.yaml declares them (key schema, indexes, TTL), made from the template
itself and its nested templates/tracking.yaml: for the demo, the local stack, the tests and the benchmark, so
none keeps a copy that can drift.

From a checkout, like the handler harness (handlers.py): the deployed functions never create a table.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from queuewatch_cli.common.template import read_template
from queuewatch_cli.devkit.handlers import REPO_ROOT

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

TEMPLATE = REPO_ROOT / "template.yaml"
STATE_TABLE, JOBS_TABLE, SLO_TABLE = "StateTable", "JobsTable", "SloTable"  # the template's logical ids
TABLE_TYPE = "AWS::DynamoDB::Table"


@cache
def declared_tables(template: Path = TEMPLATE) -> dict[str, dict[str, Any]]:
    """Each AWS::DynamoDB::Table of the template and its nested applications, by logical id -> its Properties."""
    resources = read_template(template)["Resources"]
    return {name: resource["Properties"] for name, resource in resources.items() if resource["Type"] == TABLE_TYPE}


def create_declared_table(client: DynamoDBClient, logical_id: str, table: str, template: Path = TEMPLATE) -> None:
    """Create `table` as the template declares `logical_id`: its attributes, keys, indexes, billing and TTL."""
    tables = declared_tables(template)
    if logical_id not in tables:
        raise KeyError(f"{template}: no {TABLE_TYPE} named {logical_id!r} (it has {sorted(tables)})")
    declared = tables[logical_id]
    indexes = [
        {"IndexName": i["IndexName"], "KeySchema": i["KeySchema"], "Projection": i["Projection"]}
        for i in declared.get("GlobalSecondaryIndexes", [])
    ]
    request: dict[str, Any] = {
        "TableName": table,
        "KeySchema": declared["KeySchema"],
        "AttributeDefinitions": declared["AttributeDefinitions"],
        "BillingMode": declared["BillingMode"],
    }
    if indexes:
        request["GlobalSecondaryIndexes"] = indexes
    client.create_table(**request)
    if ttl := declared.get("TimeToLiveSpecification"):
        client.update_time_to_live(
            TableName=table,
            TimeToLiveSpecification={"AttributeName": ttl["AttributeName"], "Enabled": bool(ttl["Enabled"])},
        )


def create_state_table(client: DynamoDBClient, table: str) -> None:
    create_declared_table(client, STATE_TABLE, table)


def create_jobs_table(client: DynamoDBClient, table: str) -> None:
    create_declared_table(client, JOBS_TABLE, table)


def create_slo_table(client: DynamoDBClient, table: str) -> None:
    create_declared_table(client, SLO_TABLE, table)
