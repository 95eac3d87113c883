"""Reading GitHub's status page (the Statuspage API of githubstatus.com) with the HTTP client it is given.

One GET, a short timeout, no retry: the evaluator asks once a tick, and a status it cannot read is unknown,
never a reason to wait or to hold a page back. The timeout bounds the whole read: urllib3's bounds each socket
operation alone, so a server that sends a byte now and then would hold the tick for as long as it liked. When
the time is up the read is abandoned: its connection is shut, so the reader thread ends with the tick instead of
reading on into the next (Lambda freezes a process between invocations, and thaws whatever was left running).
"""

from __future__ import annotations

import json
import threading
from datetime import datetime

import urllib3

from queuewatch.model.github_status import GitHubStatus, parse_summary

SUMMARY_URL = "https://www.githubstatus.com/api/v2/summary.json"
TIMEOUT_SECONDS = 2.0  # connect and read together: a tick has better things to wait for
MAX_BYTES = 1_048_576  # the summary is a few KB; a page this large is not the document asked for
CHUNK_BYTES = 16_384  # read a chunk at a time, so an abandoned read stops between two
READER_THREAD = "github-status-read"


def read_github_status(
    http: urllib3.PoolManager, at: datetime, url: str = SUMMARY_URL, timeout: float = TIMEOUT_SECONDS
) -> GitHubStatus:
    """GitHub Actions' status as of `at`; unknown, with the reason, on any failure or after `timeout` seconds.
    A read still going when the time is up is stopped: its connection is shut, so no work outlives the tick."""
    answered: list[GitHubStatus] = []
    read = _Read(http, at, url, timeout)
    reader = threading.Thread(target=lambda: answered.append(read.run()), name=READER_THREAD, daemon=True)
    reader.start()
    reader.join(timeout)
    if not answered:
        read.abandon()
        return GitHubStatus.unknown(at, f"{url} did not answer within {timeout:g} s")
    return answered[0]


class _Read:
    """One read of the summary, which the caller can abandon from its own thread."""

    def __init__(self, http: urllib3.PoolManager, at: datetime, url: str, timeout: float) -> None:
        self.http, self.at, self.url, self.timeout = http, at, url, timeout
        self.abandoned = threading.Event()
        self._lock = threading.Lock()
        self._response: urllib3.BaseHTTPResponse | None = None

    def abandon(self) -> None:
        """The tick moves on: shut the connection, which ends a read blocked on it, and stop between chunks."""
        self.abandoned.set()
        with self._lock:
            response = self._response
        if response is not None:
            response.shutdown()

    def run(self) -> GitHubStatus:
        at, url = self.at, self.url
        try:
            response = self.http.request(
                "GET",
                url,
                timeout=urllib3.Timeout(total=self.timeout),
                retries=False,
                preload_content=False,
                headers={"Accept": "application/json"},
            )
            with self._lock:
                self._response = response
            try:
                body = self._body(response)
            finally:
                if self.abandoned.is_set():
                    response.close()  # never back into the pool half read
                else:
                    response.release_conn()
            if response.status != 200:
                return GitHubStatus.unknown(at, f"{url} answered HTTP {response.status}")
            if len(body) > MAX_BYTES:
                return GitHubStatus.unknown(at, f"{url} answered more than {MAX_BYTES:,} bytes")
            return parse_summary(json.loads(body), at)
        except (urllib3.exceptions.HTTPError, OSError) as error:
            return GitHubStatus.unknown(at, f"{url}: {type(error).__name__}: {error}")
        except ValueError as error:  # not JSON, or not a Statuspage summary
            return GitHubStatus.unknown(at, f"{url}: {error}")

    def _body(self, response: urllib3.BaseHTTPResponse) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_BYTES:
            if self.abandoned.is_set():
                raise OSError("abandoned: the tick moved on")
            chunk = response.read(CHUNK_BYTES)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
