"""The collector's read of the SLO counters: each SLO's burn windows now, from one Query of its counters and
the jobs queued now (alerting/slo_reading.py counts them). One SLO's failed read degrades that SLO alone."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.slo_table.counters import read_tally
from queuewatch.alerting.slo_reading import reading_of
from queuewatch.config import Config
from queuewatch.model.jobs import JobRecord
from queuewatch.model.snapshot import SloReading

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient


def slo_readings(
    config: Config, dynamodb: DynamoDBClient, table: str, queued: list[JobRecord] | str, now: datetime
) -> list[SloReading]:
    """Every SLO's windows now; `queued` is the jobs queued now, or why they could not be read. A failed
    read leaves that SLO without figures and says why: its alerts hold, and the monitor page names it."""
    readings = []
    for slo in config.resolved_slos:
        if isinstance(queued, str):
            readings.append(SloReading(name=slo.name, error=f"queued jobs: {queued}"[:512]))
            continue
        try:
            counted = read_tally(dynamodb, table, slo.name, slo.longest_burn_window, now)
        except Exception as error:  # noqa: BLE001 - one SLO's failed read degrades that SLO alone
            readings.append(SloReading(name=slo.name, error=f"counters: {describe(error)}"[:512]))
            continue
        readings.append(reading_of(slo, config, counted, queued, now))
    return readings
