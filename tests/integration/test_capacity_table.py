"""`queuewatch capacity` reading the jobs table's history on moto: the range, the runner types asked for, a
job's queue from when it was queued for a runner (not from an approval wait), and --plot."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from job_records import job_record

from queuewatch.model.jobs import JobRecord
from queuewatch_cli.commands.capacity.run import run_capacity
from queuewatch_cli.devkit.moto_tables import create_jobs_table
from queuewatch_cli.devkit.seed import seed_jobs
from queuewatch_cli.main import build_parser

TABLE = "jobs"
START = datetime(2026, 11, 9, tzinfo=UTC)
NOW = START + timedelta(days=7, hours=1)


def job(
    job_id: int, runner_type: str | None, queued: datetime, wait: float, created: datetime | None = None
) -> JobRecord:
    started = queued + timedelta(seconds=wait)
    return job_record(
        job_id,
        runner_type,
        queued,
        started_at=started,
        completed_at=started + timedelta(minutes=10),
        labels=(runner_type or "ubuntu-latest",),
        created_at=created,
        expires_at=queued + timedelta(days=14),
    )


@pytest.fixture
def table(aws: None) -> Any:
    client = boto3.client("dynamodb", region_name="us-east-1")
    create_jobs_table(client, TABLE)
    jobs = [job(i, "linux.2xlarge", START + timedelta(minutes=50 * i), 45) for i in range(1, 100)]
    # Approved an hour after it was created, then a runner in 45 s: its queue time is 45 s.
    jobs.append(job(1000, "linux.2xlarge", START + timedelta(hours=30), 45, created=START + timedelta(hours=29)))
    jobs += [job(2000 + i, "windows", START + timedelta(hours=5 * i), 120) for i in range(10)]
    jobs.append(job(3000, None, START + timedelta(hours=2), 10))  # no runner type serves it
    jobs.append(job(3001, "linux.2xlarge", START - timedelta(hours=1), 5000))  # before the range
    seed_jobs(client, TABLE, jobs)
    return client


def run(*argv: str) -> tuple[int, str]:
    lines: list[str] = []
    args = build_parser().parse_args(["capacity", "--table", TABLE, "--region", "us-east-1", *argv])
    code = run_capacity(args, now=NOW, out=lines.append)
    return code, "\n".join(lines)


def test_capacity_reads_the_range_of_the_jobs_table(table: Any) -> None:
    code, out = run("--from", START.isoformat(), "--to", (START + timedelta(days=7)).isoformat(), "--json")
    assert code == 0
    found = {r["name"]: r for r in json.loads(out)["runner_types"]}
    assert set(found) == {"linux.2xlarge", "windows"}
    linux = found["linux.2xlarge"]
    assert linux["jobs"] == 100
    assert linux["queue_seconds"]["worst"] == 45.0  # the approval's hour is not queue time
    assert linux["startup"]["source"] == "history" and linux["startup"]["seconds"] == 45.0
    assert found["windows"]["jobs"] == 10


def test_capacity_for_the_runner_types_named_and_plotted(table: Any, tmp_path: Path) -> None:
    code, out = run("--from", START.isoformat(), "--to", "now", "--runner-type", "windows", "--target", "p50<3m")
    assert code == 0
    assert "windows" in out and "linux.2xlarge" not in out
    assert "queue time p50<3m" in out
    assert "only 10 job(s)" in out  # too thin, and said
    plot = tmp_path / "capacity.png"
    code, out = run("--from", START.isoformat(), "--runner-type", "linux.*", "--plot", str(plot))
    assert code == 0 and f"written to {plot}" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_refusals_and_an_empty_range(aws: None, capsys: pytest.CaptureFixture[str]) -> None:
    create_jobs_table(boto3.client("dynamodb", region_name="us-east-1"), TABLE)
    code, _ = run("--from", START.isoformat(), "--plot", "x.png")
    assert code == 2
    assert "--plot draws the runner types named" in capsys.readouterr().err
    code, _ = run("--from", START.isoformat(), "--to", (START + timedelta(days=1)).isoformat())
    assert code == 1
    assert "no job queued from" in capsys.readouterr().err
    code, _ = run("--from", "2026-13-01")
    assert code == 2
    assert "--from: found '2026-13-01'" in capsys.readouterr().err
    code, _ = run("--from", "1d", "--to", (NOW + timedelta(hours=1)).isoformat())
    assert code == 2
    assert "is in the future" in capsys.readouterr().err


def test_a_range_older_than_the_history_says_so(table: Any) -> None:
    code, out = run("--from", (START - timedelta(days=10)).isoformat(), "--to", (START + timedelta(days=7)).isoformat())
    assert code == 0
    assert "the range is taken from there (before it, the jobs table keeps none" in out
    assert out.startswith(f"capacity from {START - timedelta(hours=1):%Y-%m-%d}")  # the range the history holds
