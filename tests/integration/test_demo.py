"""`make demo`: the seed incident pages once, stays quiet on the next tick, then resolves.

The demo runs once per output (as people see it, and with --json's raw bodies), and the tests read what it printed.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import fake_aws_environment

from queuewatch_cli.commands.demo.run import run_demo


@dataclass(frozen=True)
class DemoRun:
    text: str
    lines: list[str]
    left_behind: list[Path]  # what the demo left in the temporary folder


def _run(tmp: Path, raw: bool) -> DemoRun:
    with pytest.MonkeyPatch.context() as patch:
        fake_aws_environment(patch)
        patch.setattr(tempfile, "tempdir", str(tmp))  # where the demo's temporary files would go
        lines: list[str] = []
        assert run_demo(lines.append, raw=raw) == 0
    return DemoRun("\n".join(lines), lines, list(tmp.iterdir()))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`make demo` as people see it, run once for the module."""
    return _run(tmp_path_factory.mktemp("demo"), raw=False)


@pytest.fixture(scope="module")
def raw_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`queuewatch demo --json`: each page's raw SNS notification and JSON alert too, run once for the module."""
    return _run(tmp_path_factory.mktemp("raw-demo"), raw=True)


def test_by_default_the_demo_shows_what_people_see_in_at_most_300_lines(demo: DemoRun) -> None:
    text = demo.text
    assert len(text.splitlines()) <= 300
    assert '"Message"' not in text and '"version": "queuewatch.alert/v1"' not in text  # raw bodies: --json
    first = text.split("=== tick 1 at ")[1].split("=== tick 2")[0]
    assert "--- the pager (CloudWatch integration, https body) opens an incident:" in first
    assert "  Incident: queuewatch-demo: Jobs are queueing (jobs-queueing) [" in first
    assert "--- the chat card (AWS Chatbot custom notification, chat topic):" in first
    assert "  :rotating_light: ALARM P2: Jobs are queueing (jobs-queueing)" in first
    assert "--- the e-mail (the email body):" in first and "Subject: ALARM: P2 linux.2xlarge" in first
    assert "--- the pager (CloudWatch integration, https body) resolves the incident:" in text
    history = text.split("=== queuewatch history --stack queuewatch-demo")[1].split("===")[0]
    assert [line.split("UTC  ")[1].split()[0] for line in history.splitlines()[2:] if line] == ["page", "resolve"]
    assert "=== queuewatch status --stack queuewatch-demo" in text and "=== queuewatch backtest" in text
    assert demo.left_behind == []  # nothing left in the temporary folder
    assert "queuewatch local up" in text


def test_the_demo_escalates_from_p2_to_p1_and_closes_the_p2_as_superseded(demo: DemoRun) -> None:
    escalation = demo.text.split("Part 3, an escalation")[1].split("demo OK:")[0]
    pager = [line.split("[")[-1] for line in escalation.splitlines() if line.startswith("  pager: ")]
    assert pager == ["ALARM]", "ALARM]", "OK]"]  # the P2 page; then the P1 raised and the P2 closed
    assert "Jobs stuck in the queue on linux.4xlarge" in escalation and "Superseded by P1" in escalation


def test_the_demo_slo_pages_its_fast_burn_and_tickets_its_slow_one(demo: DemoRun) -> None:
    # Part 4: 6 of 30 jobs late against a 1% budget burns at (6 / 30) / 0.01 = 20 over the hour: the fast
    # pair (14.4) pages, the 3-day ticket (1) goes out at P3 where the routes send tickets (the chat topic,
    # never the pager), and `queuewatch slo` reads the same counters.
    slo = demo.text.split("Part 4, a queue-time SLO")[1]
    sent = [line for line in slo.splitlines() if line.startswith(("  page: ", "  ticket: "))]
    assert sent == [
        "  page: slo:linux-4xlarge-start-fast P2, to pager, chat (the config's routes): pages pager",
        "  ticket: slo:linux-4xlarge-start-fast:ticket P3, to chat (the config's routes): pages nobody",
    ]
    assert "fast: burn 20.0 over 1h (30 jobs, 6 late)" in slo
    report = slo.split("=== queuewatch slo --config queuewatch.yaml --stack queuewatch-demo")[1]
    assert "  achieved 80.00% of 30 jobs (6 late)" in report
    assert "  fast (page, 14.4): burn 20.00 long, " in report and ": FIRING" in report
    assert "  late jobs by runner type: linux.4xlarge 6" in report
    assert "demo OK: the fast burn paged once" in slo


def test_the_demo_pages_once_then_resolves(raw_demo: DemoRun) -> None:
    text, lines = raw_demo.text, raw_demo.lines
    alerts = [json.loads(line) for line in lines if line.startswith('{\n  "version": "queuewatch.alert/v1"')]
    assert [a["status"] for a in alerts] == ["firing", "resolved", "firing", "resolved"]
    assert alerts[0]["runner_types"][0]["queue_size"] == 14
    assert alerts[0]["runner_types"][0]["queue_time_seconds"] == 114 * 60
    assert "tick 2" in text and text.count("nothing paged") == 3
    status = text.split("=== queuewatch status --stack queuewatch-demo")[1].split("The autoscaler's queue")[0]
    assert "alerts pending or firing: 1" in status
    assert "jobs-queueing / all: firing since" in status and "(page 1)" in status and "outbox" not in status
    assert "    linux.2xlarge: firing since" in status
    assert "; queue size 14, queue time 1h55m (Queuewatch metrics at " in status
    assert "active silences: none" in status and "alerts last changed: " in status
    replay = text.split("=== queuewatch backtest --config config/queuewatch.yaml --compare ")[1]
    first_tick = text.split("=== tick 1 at ")[1][:5]
    only_a = replay.split("pages only A sends: ")[1]
    assert only_a.startswith("1\n") and only_a.split("\n")[1].split(" -> ")[0].endswith(f" {first_tick} UTC")
    assert "pages only B sends: 0" in replay and "queue-size-150.yaml: 0 page(s)" in replay
    # The named runner type's queue is replayed once, not again under the name discovery would give it.
    assert "runner type(s): linux-2xlarge" not in replay and "runner type(s): linux.2xlarge;" in replay
    # The second incident, which only tracking sees: the jobs' own figures, the missing requests first.
    [tracked] = alerts[2]["runner_types"]
    assert (tracked["queue_size"], tracked["queue_time_seconds"], tracked["signals"]["scale_up_requests"]) == (
        14,
        114 * 60,
        0,
    )
    assert tracked["triage"]["findings"][0]["cause"] == "no_scale_up_request"
    assert len(tracked["oldest_jobs"]) == 5 and tracked["oldest_jobs"][0]["url"].startswith("https://github.com/")
    assert "JOBS_TABLE" not in os.environ  # the demo's environment ends with it
    [finding, *_] = alerts[0]["runner_types"][0]["triage"]["findings"]
    assert finding["cause"] == "scale_up_failing"
    assert (
        "the queue grew from 3 to 14 jobs in 15m while the scale-up consumer dequeued 0 (usually 15"
        in (finding["detail"])
    )
    # Under 100 characters, the whole title kept: "queueing" is the word the subject drops first.
    assert (
        "Subject: ALARM: P2 linux.2xlarge, max queue time 1h54m, max queue size 14: Jobs are queueing (jobs-queueing)\n"
        in text
    )
    assert "  1. Scale-up stalled or failing: the queue grew from 3 to 14 jobs" in text


def test_the_demo_ends_with_capacity_and_suggest(demo: DemoRun) -> None:
    """`make demo` ends with capacity and backtest --suggest on the demo's own history, a few lines each."""
    text = demo.text
    capacity = text.split("=== queuewatch capacity ", 1)[1].split("=== queuewatch backtest", 1)[0]
    assert "linux.2xlarge    14      1h54m" in capacity  # its 14 tracked jobs, each queued 114 minutes
    assert "thin: the range is 2h20m, under a week" in capacity
    assert "only 14 job(s) queued below its ceiling: too few to read its start-up delay from" in capacity
    # up to the demo's next part
    suggest = re.split(r"\n(?:===|Part )", text.split("--suggest --budget 1/week", 1)[1], maxsplit=1)[0]
    assert "chosen: queue time > 1m, for 0s: 1 page(s), 0 besides the incidents" in suggest
    assert "on linux.2xlarge: paged 0s after its start" in suggest
    assert len(capacity.splitlines()) <= 14 and len(suggest.splitlines()) <= 9
