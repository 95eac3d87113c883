"""A moto server on 127.0.0.1, started as a subprocess and stopped by its pid whatever happens."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

READY_TIMEOUT_SECONDS = 30


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def stop_process(process: subprocess.Popen[bytes] | None) -> None:
    """Stop a child this bench started, by its pid: SIGTERM, then SIGKILL if it lingers."""
    if process is None or process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def process_cpu_seconds(pid: int) -> float:
    """User plus system CPU a process has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class MotoServer:
    """`moto_server -H 127.0.0.1 -p <free port>`; a context manager, so an error never leaves it running."""

    def __init__(self) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> MotoServer:
        binary = Path(sys.executable).with_name("moto_server")
        self._process = subprocess.Popen(
            [str(binary), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"moto_server exited with {self._process.returncode} before it was ready")
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=1):
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"moto_server did not answer on {self.endpoint} within {READY_TIMEOUT_SECONDS}s")

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    def reset(self) -> None:
        """Forget every queue, metric, table and topic: each fleet starts from nothing."""
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=30):
            pass

    def cpu_seconds(self) -> float:
        return process_cpu_seconds(self.pid)

    def stop(self) -> None:
        stop_process(self._process)
