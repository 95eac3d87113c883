"""How a page words its totals and rows, from the real evaluator in moto: the subject says what it counts, a row
names a runner type's region once, and a page about one runner type names it in its subject."""

from __future__ import annotations

from typing import Any

import pytest
from support import T0, Inbox, StackInMoto, runner_type, snapshot

from queuewatch.config.load import parse_config

CONFIG = """
version: 1
defaults:
  rule: {team: ci-infra}
runner_types:
  - {name: linux-x64, queue: {name: gh-ci-linux-x64-queued-builds, region: us-west-2}}
rules:
  - name: jobs-queueing
    thresholds: {queue_time: 5m}
    title: Jobs are queueing on the Linux CI fleet
"""


def page(config_text: str, *runner_types: Any, table: str = "state") -> dict[str, Any]:
    moto = StackInMoto.create(table)
    sent: list[dict[str, Any]] = []
    moto.sns.meta.events.register(
        "before-parameter-build.sns.Publish", lambda params, **_: sent.append({"subject": params["Subject"]})
    )
    inbox = Inbox(moto.sns)
    moto.evaluate(snapshot(T0, *runner_types), parse_config(config_text, source="t.yaml"))
    (alert,) = inbox.drain()
    return {**alert, "_subject": sent[0]["subject"]}


@pytest.mark.usefixtures("aws")
def test_the_subject_says_the_total_queued_or_the_worst_as_worst() -> None:
    alert = page(
        CONFIG,
        runner_type("linux-x64@us-west-2", 40, 45 * 60, region="us-west-2"),
        runner_type("linux-arm64@us-west-2", 3, 10 * 60, region="us-west-2"),
    )
    assert alert["total_queue_size"] == 43
    assert "40 queued" not in alert["_subject"]
    assert "oldest 45m, 43 queued" in alert["_subject"]


@pytest.mark.usefixtures("aws")
def test_a_row_names_the_region_once() -> None:
    alert = page(CONFIG, runner_type("linux-x64@us-west-2", 40, 45 * 60, region="us-west-2"))
    assert "linux-x64@us-west-2 (us-west-2)" not in alert["summary"]
    assert "linux-x64@us-west-2: 40 queued" in alert["summary"]
    plain = page(CONFIG, runner_type("linux-x64", 40, 45 * 60, region="us-west-2"), table="other")
    assert "linux-x64 (us-west-2): 40 queued" in plain["summary"]


@pytest.mark.usefixtures("aws")
def test_a_page_about_one_runner_type_names_it_in_its_subject() -> None:
    per_runner_type = CONFIG.replace("title:", "group_by: runner_type\n    title:")
    alert = page(per_runner_type, runner_type("linux-x64@us-west-2", 40, 45 * 60, region="us-west-2"))
    assert alert["_subject"].startswith("ALARM: P2 linux-x64@us-west-2")
