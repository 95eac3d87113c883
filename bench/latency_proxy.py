"""An AWS-like yardstick: a proxy on 127.0.0.1 that holds every call for a network round trip, then asks moto.

python -m bench.latency_proxy --upstream http://127.0.0.1:PORT --port PORT [--latency-ms 15]
    [--api-latency-ms GetMetricData=25 ...] [--max-seconds 3600] [--max-connections 256]

Against moto on loopback a call costs only moto's own CPU, so the watcher that makes
its calls one after another looks cheaper than it is in AWS, where each call also costs
a round trip of a few to tens of milliseconds. Here each request sleeps that long before
it is forwarded: calls made concurrently overlap their waits, sequential ones add them.

Bounded: it listens on 127.0.0.1 only, serves at most --max-connections connections at
once (the rest wait in the listen backlog), refuses bodies over 16 MiB, and stops
itself after --max-seconds or as soon as the process that started it is gone.
"""

from __future__ import annotations

import argparse
import http.client
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from bench.motoserver import free_port, process_cpu_seconds, stop_process

DEFAULT_LATENCY_MS = 15.0
MAX_BODY_BYTES = 16 * 1024 * 1024
HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade"})
READY_TIMEOUT_SECONDS = 15


def operation_of(headers: Mapping[str, str], path: str, body: bytes) -> str:
    """The AWS API a request calls, whichever protocol botocore chose: JSON, query or RPC v2 CBOR."""
    target = headers.get("X-Amz-Target") or headers.get("x-amz-target")
    if target:
        return target.rsplit(".", 1)[-1]
    if "/operation/" in path:
        return path.rsplit("/operation/", 1)[1].split("?", 1)[0].strip("/")
    query = urllib.parse.urlsplit(path).query
    for source in (query, body.decode("utf-8", "replace") if body[:1] != b"{" else ""):
        action = urllib.parse.parse_qs(source).get("Action")
        if action:
            return action[0]
    return "unknown"


def parse_api_latencies(items: list[str]) -> dict[str, float]:
    """`Operation=milliseconds` pairs, each checked: a typo must not silently fall back to the default."""
    out: dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            milliseconds = float(value)
        except ValueError:
            milliseconds = -1.0
        if not sep or not name.strip() or milliseconds < 0:
            raise ValueError(f"--api-latency-ms {item!r}: expected Operation=milliseconds, e.g. GetMetricData=25")
        out[name.strip()] = milliseconds
    return out


class _BoundedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, limit: int, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", port), handler)
        self._slots = threading.BoundedSemaphore(limit)

    def process_request(self, request: Any, client_address: Any) -> None:
        self._slots.acquire()  # beyond the limit, connections wait in the backlog
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


def _handler(upstream: str, latency_s: float, per_api_s: Mapping[str, float]) -> type[BaseHTTPRequestHandler]:
    parts = urllib.parse.urlsplit(upstream)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    local = threading.local()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as botocore's connection pool expects
        timeout = 120  # an idle connection gives its slot back

        def setup(self) -> None:
            super().setup()
            # The status line and headers, then the body, go in two writes: with Nagle's algorithm and
            # the client's delayed ACK, the body would wait 40 ms, more than the latency injected.
            self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self.send_error(413, f"body over {MAX_BODY_BYTES} bytes")
                return
            body = self.rfile.read(length) if length else b""
            time.sleep(per_api_s.get(operation_of(dict(self.headers.items()), self.path, body), latency_s))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            for attempt in (1, 2):  # once more on a fresh connection if moto closed the kept one
                connection: http.client.HTTPConnection | None = getattr(local, "connection", None)
                if connection is None:
                    connection = local.connection = http.client.HTTPConnection(host, port, timeout=60)
                    connection.connect()
                    assert connection.sock is not None
                    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                try:
                    connection.request(self.command, self.path, body=body, headers=headers)
                    response = connection.getresponse()
                    payload = response.read()
                    break
                except (ConnectionError, http.client.HTTPException, OSError):
                    connection.close()
                    local.connection = None
                    if attempt == 2:
                        raise
            self.send_response(response.status, response.reason)
            for key, value in response.getheaders():
                if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _forward

    return Handler


def serve(args: argparse.Namespace) -> None:
    parent = os.getppid()
    server = _BoundedServer(
        args.port,
        args.max_connections,
        _handler(args.upstream, args.latency_ms / 1000, {k: v / 1000 for k, v in args.api_latency.items()}),
    )
    deadline = time.monotonic() + args.max_seconds

    def watch() -> None:
        while time.monotonic() < deadline and os.getppid() == parent:
            time.sleep(0.5)
        server.shutdown()

    threading.Thread(target=watch, daemon=True).start()
    server.serve_forever(poll_interval=0.5)
    server.server_close()


class LatencyProxy:
    """The proxy as a subprocess; a context manager that stops it by its pid whatever happens."""

    def __init__(
        self,
        upstream: str,
        latency_ms: float = DEFAULT_LATENCY_MS,
        api_latency_ms: Mapping[str, float] | None = None,
        max_seconds: float = 3 * 3600,
    ) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.latency_ms = latency_ms
        self._command = [
            sys.executable,
            "-m",
            "bench.latency_proxy",
            f"--upstream={upstream}",
            f"--port={self.port}",
            f"--latency-ms={latency_ms}",
            f"--max-seconds={max_seconds}",
            *(f"--api-latency-ms={name}={ms}" for name, ms in (api_latency_ms or {}).items()),
        ]
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LatencyProxy:
        root = Path(__file__).resolve().parent.parent
        self._process = subprocess.Popen(self._command, cwd=root)
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"the latency proxy exited with {self._process.returncode} before it was ready")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the latency proxy did not listen on {self.endpoint} within {READY_TIMEOUT_SECONDS}s")

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def cpu_seconds(self) -> float:
        assert self._process is not None
        return process_cpu_seconds(self._process.pid)

    def stop(self) -> None:
        stop_process(self._process)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", required=True, help="the moto server, http://127.0.0.1:PORT")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--latency-ms", type=float, default=DEFAULT_LATENCY_MS)
    parser.add_argument("--api-latency-ms", action="append", default=[], metavar="OPERATION=MS")
    parser.add_argument("--max-seconds", type=float, default=3 * 3600)
    parser.add_argument("--max-connections", type=int, default=256)
    args = parser.parse_args(argv)
    if urllib.parse.urlsplit(args.upstream).hostname not in ("127.0.0.1", "localhost"):
        parser.error("--upstream must be on loopback")
    try:
        args.api_latency = parse_api_latencies(args.api_latency_ms)
    except ValueError as error:
        parser.error(str(error))
    serve(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
