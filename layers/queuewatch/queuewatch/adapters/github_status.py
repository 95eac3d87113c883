"""Reading GitHub's status page (the Statuspage API of githubstatus.com) with the HTTP client it is given.

One GET, a short timeout, no retry: the evaluator asks once a tick, and a status it cannot read is unknown,
never a reason to wait or to hold a page back.
"""

from __future__ import annotations

import json
from datetime import datetime

import urllib3

from queuewatch.github_status import GitHubStatus, parse_summary

SUMMARY_URL = "https://www.githubstatus.com/api/v2/summary.json"
TIMEOUT_SECONDS = 2.0  # connect and read together: a tick has better things to wait for
MAX_BYTES = 1_048_576  # the summary is a few KB; a page this large is not the document asked for


def read_github_status(
    http: urllib3.PoolManager, at: datetime, url: str = SUMMARY_URL, timeout: float = TIMEOUT_SECONDS
) -> GitHubStatus:
    """GitHub Actions' status as of `at`; unknown, with the reason, on any failure."""
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
