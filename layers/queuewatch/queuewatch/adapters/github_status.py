"""Reading GitHub's status page (the Statuspage API of githubstatus.com) with the HTTP client it is given.

One GET, a short timeout, no retry: the evaluator asks once a tick, and a status it cannot read is unknown,
never a reason to wait or to hold a page back. The timeout bounds the whole read: urllib3's bounds each socket
operation alone, so a server that sends a byte now and then would hold the tick for as long as it liked.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime

import urllib3

from queuewatch.github_status import GitHubStatus, parse_summary

SUMMARY_URL = "https://www.githubstatus.com/api/v2/summary.json"
TIMEOUT_SECONDS = 2.0  # connect and read together: a tick has better things to wait for
MAX_BYTES = 1_048_576  # the summary is a few KB; a page this large is not the document asked for


def read_github_status(
    http: urllib3.PoolManager, at: datetime, url: str = SUMMARY_URL, timeout: float = TIMEOUT_SECONDS
) -> GitHubStatus:
    """GitHub Actions' status as of `at`; unknown, with the reason, on any failure or after `timeout` seconds."""
    answered: list[GitHubStatus] = []
    # A daemon thread: one still reading when the time is up is left behind, and never keeps a process alive.
    reader = threading.Thread(target=lambda: answered.append(_read(http, at, url, timeout)), daemon=True)
    reader.start()
    reader.join(timeout)
    if not answered:
        return GitHubStatus.unknown(at, f"{url} did not answer within {timeout:g} s")
    return answered[0]


def _read(http: urllib3.PoolManager, at: datetime, url: str, timeout: float) -> GitHubStatus:
    try:
        response = http.request(
            "GET",
            url,
            timeout=urllib3.Timeout(total=timeout),
            retries=False,
            preload_content=False,
            headers={"Accept": "application/json"},
        )
        try:
            body = response.read(MAX_BYTES + 1)
        finally:
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
