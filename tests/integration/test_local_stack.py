"""`queuewatch local up|down`: a moto server on 127.0.0.1 holding the demo's incident, found by its stack name,
that the operator commands run against, until `down` stops it."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from queuewatch_cli.commands.demo import local
from queuewatch_cli.main import main


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_up_leaves_a_stack_the_commands_find_and_down_stops_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    port = free_port()
    try:
        assert main(["local", "up", "--port", str(port)]) == 0
        out = capsys.readouterr().out
        assert f"export AWS_ENDPOINT_URL=http://127.0.0.1:{port}" in out and "queuewatch local down" in out
        pid = int(local.pid_file().read_text().split('"pid": ')[1].split(",")[0])
        assert main(["local", "up", "--port", str(port)]) == 2  # one at a time
        assert "already running" in capsys.readouterr().err
        for key, value in local.environment(port).items():
            monkeypatch.setenv(key, value)

        assert main(["status", "--no-figures"]) == 0
        status = capsys.readouterr().out
        assert "queuewatch status of queuewatch-demo-state" in status
        assert "    linux.4xlarge: firing since" in status  # the incident left firing
        assert main(["history", "--since", "1h"]) == 0
        kinds = [line.split("UTC  ")[1].split()[0] for line in capsys.readouterr().out.splitlines()[1:]]
        assert kinds[:4] == ["page", "resolve", "page", "resolve"]  # parts 1 and 2: each incident paged, resolved
        # Part 3's escalation (the P2 page; the P1 page and the P2's close), then the incident left firing: with
        # the shipped config the P1 rule is gone, so its page resolves and the P2 pages again. Pages of one tick
        # share its time, in no set order.
        assert sorted(kinds[4:]) == ["page", "page", "page", "resolve", "resolve"]
        assert main(["silence", "add", "--match", "linux.4xlarge", "--for", "1h", "--comment", "trying it"]) == 0
        assert "matches jobs-queueing firing on 1 runner type(s): linux.4xlarge" in capsys.readouterr().out
    finally:
        assert main(["local", "down"]) == 0
    assert "local stack stopped" in capsys.readouterr().out
    assert not local.pid_file().exists()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert main(["local", "down"]) == 0 and "no local stack running" in capsys.readouterr().out


def test_up_with_a_config_holds_its_rehearsal_for_the_commands(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(
        "version: 1\ndefaults: {rule: {team: ci-infra, keep_firing_for: 2m}}\n"
        "runner_types:\n  - {name: linux.2xlarge, queue: {name: acme-linux-2xlarge-queued-builds}}\n"
        "rules:\n  - {name: slow-start, thresholds: {queue_time: 4m}}\n"
        'slos:\n  - {name: starts-fast, match: ["linux*"], objective: 99%, queue_time_under: 10m}\n',
        encoding="utf-8",
    )
    port = free_port()
    try:
        assert main(["local", "up", "--port", str(port), "--config", str(fleet)]) == 0
        out = capsys.readouterr().out
        # the rule's page and resolve; the SLO's page and ticket, burnt on tracked jobs in the server's jobs table
        assert "rehearsal OK: 4 page(s)" in out and f"with the rehearsal of {fleet}" in out, out
        for key, value in local.environment(port).items():
            monkeypatch.setenv(key, value)
        assert main(["history", "--since", "1h"]) == 0
        lines = capsys.readouterr().out.splitlines()[1:]
        # Each sent to the alert topic and the chat topic (the config has no routes: chat gets everything).
        assert sorted(line.split("UTC  ")[1].split()[0] for line in lines) == ["page", "page", "resolve", "resolve"]
        assert all("slow-start" in line for line in lines)
    finally:
        assert main(["local", "down"]) == 0
