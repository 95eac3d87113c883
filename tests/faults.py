"""Fault injection into real botocore clients (moto behind them), below botocore's retry machinery.

A fault is injected on `before-send`, per attempt, so botocore's standard retry mode
sees it exactly as it would see AWS: it retries throttling, 5xx and timeouts with
its backoff and gives up after its attempts; it does not retry access denied.
An error response is a real HTTP response with the service's error code; a timeout
is botocore's own ReadTimeoutError or ConnectTimeoutError. With `applied=True` the
request first reaches moto (a write takes effect) and only the response is lost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from botocore.awsrequest import AWSResponse
from botocore.exceptions import ConnectTimeoutError, ReadTimeoutError

RETRIED_FAULTS = ("throttling", "5xx", "read-timeout", "connect-timeout")
FAULTS = (*RETRIED_FAULTS, "access-denied")

# The error code each service answers with, per fault.
_CODES: dict[str, dict[str, tuple[int, str]]] = {
    "sqs": {"throttling": (400, "RequestThrottled"), "access-denied": (403, "AccessDenied")},
    "cloudwatch": {"throttling": (400, "Throttling"), "access-denied": (403, "AccessDenied")},
    "dynamodb": {"throttling": (400, "ThrottlingException"), "access-denied": (400, "AccessDeniedException")},
    "sns": {"throttling": (400, "Throttling"), "access-denied": (403, "AuthorizationError")},
    "ssm": {"throttling": (400, "ThrottlingException"), "access-denied": (400, "AccessDeniedException")},
}
_SERVER_ERROR = (503, "ServiceUnavailable")

# What the collector's reason says for each fault, as describe() words it.
REASON_WORDS = {
    "throttling": "throttled",
    "5xx": "ServiceUnavailable",
    "read-timeout": "timed out",
    "connect-timeout": "timed out",
    "access-denied": "AccessDenied",
}


class _Raw:
    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self._body


@dataclass
class Fault:
    """One fault on one operation of one client; counts what it saw."""

    operation: str
    kind: str
    when: Callable[[Mapping[str, Any]], bool] | None = None  # on the call's API parameters
    only_call: int | None = None  # fault just the n-th matching call (0-based); None: every one
    failing_attempts: int | None = None  # fault the first n attempts of a call; None: all of them
    applied: bool = False  # let the request take effect, then lose the response
    headers: dict[str, str] = field(default_factory=dict)
    on_attempt: Callable[[], None] | None = None  # e.g. advance a fake clock
    enabled: bool = True  # False: the fault is over, calls pass untouched
    calls: int = 0  # matching calls seen
    attempts: int = 0  # attempts sent of faulted calls
    faulted: int = 0  # attempts that failed
    _service: str = ""
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _on_call(self, params: Mapping[str, Any], **_: Any) -> None:
        selected = self.enabled and (self.when is None or self.when(params))
        if selected:
            with self._lock:
                index = self.calls
                self.calls += 1
            selected = self.only_call is None or self.only_call == index
        self._local.active = selected
        self._local.attempt = 0

    def _on_send(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        if not event_name.endswith(f".{self.operation}") or not getattr(self._local, "active", False):
            return None
        self._local.attempt += 1
        with self._lock:
            self.attempts += 1
        if self.on_attempt is not None:
            self.on_attempt()
        if self.failing_attempts is not None and self._local.attempt > self.failing_attempts:
            return None
        with self._lock:
            self.faulted += 1
        if self.kind == "read-timeout":
            raise ReadTimeoutError(endpoint_url=request.url)
        if self.kind == "connect-timeout":
            raise ConnectTimeoutError(endpoint_url=request.url)
        response = self._error_response(request)
        if not self.applied:
            # botocore calls every before-send handler and takes the first answer: point moto's at
            # nothing, so the refused request does not take effect there either.
            request.url = "https://fault-injected.invalid/"
        return response

    def _error_response(self, request: Any) -> AWSResponse:
        service = self._service
        status, code = _SERVER_ERROR if self.kind == "5xx" else _CODES[service][self.kind]
        self._local.code = code
        body = b""
        if service == "sns":  # the query protocol's parser needs its XML error body
            body = (
                "<ErrorResponse><Error><Type>Sender</Type>"
                f"<Code>{code}</Code><Message>injected {self.kind}</Message>"
                "</Error><RequestId>injected</RequestId></ErrorResponse>"
            ).encode()
        return AWSResponse(request.url, status, cast(Any, self.headers), _Raw(body))

    def _on_parse(self, customized_response_dict: dict[str, Any], **_: Any) -> None:
        # JSON and CBOR error bodies vary by protocol; set the parsed error directly instead.
        code = getattr(self._local, "code", None)
        if code is not None and getattr(self._local, "active", False):
            customized_response_dict["Error"] = {"Code": code, "Message": f"injected {self.kind}"}
            self._local.code = None

    def install(self, client: Any) -> Fault:
        assert not self.applied or self.kind.endswith("timeout"), "only a lost response can follow an applied write"
        self._service = client.meta.service_model.service_id.hyphenize()
        events = client.meta.events
        events.register(f"before-parameter-build.{self._service}.{self.operation}", self._on_call)
        # First, so moto never sees the request; last (after moto answered) when the write should apply.
        (events.register_last if self.applied else events.register_first)("before-send", self._on_send)
        events.register(f"before-parse.{self._service}.{self.operation}", self._on_parse)
        return self


def inject(client: Any, operation: str, kind: str, **options: Any) -> Fault:
    return Fault(operation, kind, **options).install(client)
