"""The e2e fixtures: one moto server container for the run, seeded afresh for each test.

Skipped where Docker, the SAM CLI or the build output is missing, unless QUEUEWATCH_E2E_REQUIRED=1
(set by `make e2e`), which turns the skip into a failure. The cold-start figures the tests record
are printed at the end of the run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from e2e.sam_local import (
    EVENTS_DIR,
    Invocation,
    MotoServer,
    Seeded,
    event_time,
    load_json,
    received,
    restamped,
    sam_local_invoke,
    seed_incident,
    shift_to_now,
    why_not_runnable,
    write_env_vars,
)


@dataclass
class ColdStart:
    """One function's cold-start figures: the local invoke's REPORT line, and import times in the Lambda image."""

    report: dict[str, str] = field(default_factory=dict)
    import_ms: dict[str, float] = field(default_factory=dict)


COLD_START = pytest.StashKey[dict[str, ColdStart]]()


@pytest.fixture
def cold_start(request: pytest.FixtureRequest) -> dict[str, ColdStart]:
    return request.config.stash.setdefault(COLD_START, {})


@pytest.fixture(scope="session")
def e2e_ready() -> None:
    reason = why_not_runnable()
    if reason is None:
        return
    if os.environ.get("QUEUEWATCH_E2E_REQUIRED") == "1":
        pytest.fail(f"the e2e run cannot start: {reason}", pytrace=False)
    pytest.skip(f"sam local invoke cannot run here: {reason}")


@pytest.fixture(scope="session")
def moto(e2e_ready: None) -> Iterator[MotoServer]:
    with MotoServer() as server:
        yield server


@dataclass(frozen=True)
class LocalAws:
    """A freshly seeded moto and the --env-vars file that points the functions at it."""

    moto: MotoServer
    seeded: Seeded
    env_vars: Path
    shift: timedelta  # the events/ files' tick moved to this minute: see shift_to_now
    scratch: Path

    def restamp(self, event: dict[str, Any]) -> dict[str, Any]:
        return restamped(event, self.shift)  # type: ignore[no-any-return]

    def invoke(self, function: str, event: Path, *, restamp: bool = True) -> Invocation:
        """The event, its times moved to this minute (unless it was made now), invoked in the function's container."""
        if not restamp:
            return sam_local_invoke(function, event, self.env_vars, self.moto.network)
        moved = self.scratch / f"now-{event.name}"
        moved.write_text(json.dumps(self.restamp(load_json(event))), encoding="utf-8")
        return sam_local_invoke(function, moved, self.env_vars, self.moto.network)

    def received(self) -> list[dict[str, Any]]:
        """What the alert topic's SQS subscriber got."""
        return received(self.moto, self.seeded.inbox_url)

    def received_in_chat(self) -> list[dict[str, Any]]:
        """What the chat topic's SQS subscriber got."""
        return received(self.moto, self.seeded.chat_inbox_url)


@pytest.fixture
def local_aws(moto: MotoServer, tmp_path: Path) -> LocalAws:
    """The incident at the tick the events/ files share, in a moto reset for this test."""
    moto.reset()
    tick = load_json(EVENTS_DIR / "collect_scheduled.json")
    shift = shift_to_now(tick)
    seeded = seed_incident(moto, event_time(tick) + shift)
    return LocalAws(moto, seeded, write_env_vars(tmp_path / "env.json", moto, seeded), shift, tmp_path)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    figures = config.stash.get(COLD_START, {})
    if not figures:
        return
    terminalreporter.section("cold start: sam local invoke, Lambda Python 3.13 image, this machine")
    columns = ("Init Duration", "cold Duration", "import app", "no bytecode", "import boto3")
    terminalreporter.write_line(f"{'function':<18}" + "".join(f"{column:>15}" for column in columns))
    for function, cold in sorted(figures.items()):
        imports = (cold.import_ms.get(key) for key in ("app", "app without bytecode", "boto3"))
        row = [cold.report.get("Init Duration", "-"), cold.report.get("Duration", "-")]
        row += [f"{ms:.0f} ms" if ms is not None else "-" for ms in imports]
        terminalreporter.write_line(f"{function:<18}" + "".join(f"{cell:>15}" for cell in row))
    if any(_milliseconds(cold.report.get("Init Duration")) < 10 for cold in figures.values()):
        terminalreporter.write_line(
            "Init Duration is what the local runtime emulator reports: it starts the runtime at the first invoke, "
            "so the handler module's import falls inside that cold invoke's Duration instead."
        )
    terminalreporter.write_line(
        "'import app' (boto3 included), the same on the build output without its compiled bytecode, and "
        "'import boto3' alone: medians over fresh interpreters in the Lambda image, the code mounted read-only "
        "as Lambda mounts it."
    )


def _milliseconds(figure: str | None) -> float:
    """'0.14 ms' -> 0.14; a missing figure counts as none reported."""
    return float(figure.split()[0]) if figure else 0.0
