"""The predictive page through the real evaluate stage (moto's DynamoDB and SNS): a rule's `forecast:` pages
before the queue forms, the queue that then forms is the same incident, and a forecast that falls back resolves
as "did not happen"."""

from __future__ import annotations

import json
from typing import Any

import pytest
from forecast_pools import FILLING
from support import StackInMoto, minutes, runner_type, snapshot

from queuewatch.adapters.state_table.alerts import load_state
from queuewatch.config import Config
from queuewatch.config.load import parse_config
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.snapshot import Snapshot

CONFIG = """
version: 1
defaults:
  rule: {team: ci-infra, for: 0s, keep_firing_for: 0s, repeat_interval: 10m}
runner_types:
  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 30m}
    forecast: 10m
"""
NAME = "linux.2xlarge"
# A quiet pool: a couple of jobs, most of the pool free.
CALM = ForecastInputs(
    window_seconds=600, arrived=2, run_seconds=600, running=1, running_seconds=300, runners=1, maximum=50
)


class Pager:
    def __init__(self, config_text: str = CONFIG) -> None:
        self.config: Config = parse_config(config_text, source="test.yaml")
        self.moto = StackInMoto.create()
        self.sent: list[dict[str, Any]] = []
        self.moto.sns.meta.events.register("before-parameter-build.sns.Publish", self._capture)

    def _capture(self, params: dict[str, Any], **_: Any) -> None:
        bodies = json.loads(params["Message"])
        self.sent.append({"subject": params.get("Subject"), "alert": json.loads(bodies["default"])})

    def tick(self, at: float, inputs: ForecastInputs | None, queue_time: float | None = 0) -> list[dict[str, Any]]:
        size = 5 if queue_time else 0  # read even where the queue's age is not: the forecast can be made
        found = runner_type(NAME, size, queue_time).model_copy(update={"forecast": inputs})
        observation: Snapshot = snapshot(minutes(at), found).model_copy(update={"jobs_tracked": True})
        self.moto.evaluate(observation, self.config)
        out, self.sent = self.sent, []
        return out


@pytest.fixture
def pager(aws: None) -> Pager:
    return Pager()


def test_a_filling_pool_pages_ahead_saying_it_is_a_forecast_and_why(pager: Pager) -> None:
    [page] = pager.tick(0, FILLING)
    alert = page["alert"]
    assert (alert["status"], alert["page"], alert["forecast"]) == ("firing", "new", True)
    assert alert["summary"].startswith(
        "Forecast, not yet queueing: 1 runner type where a job queued in the next 10m is predicted to wait past 30m"
    )
    [row] = alert["runner_types"]
    ahead = row["forecast"]
    assert ahead["evidence"] == "42 jobs arrived in 10m, 3 runners left of 50, jobs run about 40m, start-up about 1m"
    assert ahead["likely"] is True and ahead["earliest_in_seconds"] <= ahead["crosses_in_seconds"]
    assert f"{NAME} (us-east-1) will queue past 30m in about " in alert["summary"]
    assert "(likely" in alert["summary"]  # the jobs running now decide it: the arrival rate's range is one point
    assert page["subject"].startswith(f"ALARM: P2 {NAME} forecast to queue past 30m in about ")


def test_a_quiet_pool_does_not_page(pager: Pager) -> None:
    assert pager.tick(0, CALM) == []


def test_the_queue_forming_after_a_forecast_is_the_same_incident(pager: Pager) -> None:
    [first] = pager.tick(0, FILLING)
    assert pager.tick(1, FILLING, queue_time=1900) == []  # the queue forms: no second page
    [repeat] = pager.tick(11, FILLING, queue_time=2500)
    assert repeat["alert"]["page"] == "repeat" and repeat["alert"]["dedup_key"] == first["alert"]["dedup_key"]
    assert repeat["alert"]["started_at"] == first["alert"]["started_at"]
    assert repeat["alert"]["forecast"] is False  # it reads as the real one
    assert repeat["alert"]["summary"].startswith("1 runner type queueing (queue time > 30m)")
    assert "forecast" not in repeat["subject"]
    [resolve] = pager.tick(12, CALM)
    assert (resolve["alert"]["status"], resolve["alert"]["did_not_happen"]) == ("resolved", False)
    assert "did not happen" not in resolve["subject"] and "recovered" in resolve["subject"]


def test_a_forecast_that_falls_back_resolves_as_did_not_happen(pager: Pager) -> None:
    [first] = pager.tick(0, FILLING)
    [resolve] = pager.tick(1, CALM)
    alert = resolve["alert"]
    assert (alert["status"], alert["did_not_happen"], alert["dedup_key"]) == (
        "resolved",
        True,
        first["alert"]["dedup_key"],
    )
    assert resolve["subject"] == f"OK: P2 {NAME} did not happen: Jobs are queueing (jobs-queueing)"
    assert alert["summary"].startswith("Did not happen: the forecast fell back")


def test_a_plain_episode_never_resolves_as_did_not_happen(pager: Pager) -> None:
    [first] = pager.tick(0, CALM, queue_time=1900)
    assert first["alert"]["forecast"] is False
    assert pager.tick(1, FILLING, queue_time=0) == []  # the queue cleared; the forecast keeps it firing
    [resolve] = pager.tick(2, CALM)
    assert resolve["alert"]["did_not_happen"] is False


def test_an_unread_queue_is_neither_paged_nor_cleared_by_the_forecast(pager: Pager) -> None:
    assert pager.tick(0, FILLING, queue_time=None) == []  # open: the state holds, nothing opens on a forecast
    assert pager.tick(1, FILLING) != []
    assert pager.tick(2, CALM, queue_time=None) == []  # open again: the forecast episode is not resolved
    assert load_state(pager.moto.dynamodb, "state").instances
    [resolve] = pager.tick(3, CALM)
    assert resolve["alert"]["did_not_happen"] is True


def test_a_runner_type_without_forecast_inputs_still_pages_on_what_happened(pager: Pager) -> None:
    assert pager.tick(0, None) == []
    [page] = pager.tick(1, None, queue_time=1900)
    assert page["alert"]["forecast"] is False and page["alert"]["runner_types"][0]["forecast"] is None
