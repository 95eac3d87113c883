"""The collector's one hot call, GetQueueAttributes for a queue's depth, without botocore's per-call machinery.

botocore spends about 2 ms of CPU on each call (parameter validation, endpoint rules, event hooks, the
user agent, response parsing): at 5,000 runner types, one read each a tick, that is most of the
collector's Lambda time. This reader makes the same request over SQS's JSON protocol, signed by botocore's
own SigV4 signer and sent over a urllib3 connection pool, in about half that. Everything else stays on
botocore clients.

It is made from the region's botocore client and keeps its contract: the client's endpoint, region,
credentials, timeouts and retry budget; its before-call and before-send hooks (the tick's deadline, moto's
mock, the benchmark's counters); errors raised as botocore raises them (ClientError with SQS's error code,
ConnectTimeoutError, ReadTimeoutError, EndpointConnectionError), so a page words them alike. Retries
follow botocore's standard mode: throttling, 5xx, transient codes and connection failures, each wait at
most what adapters/aws/clients.py budgets (retry_delay_bound); its client-side retry quota is not kept.

It honours the client settings a user sets for botocore: an endpoint URL with a path (a proxy or gateway
in front of SQS: signed and posted to that path), the CA bundle (`AWS_CA_BUNDLE`, `ca_bundle`), the
proxies (`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`, or the client config's `proxies`), and tracing: Lambda's
trace header goes on each request as botocore puts it there, and where the X-Ray SDK traces botocore's calls
(as Powertools Tracer patches it), each read is a subsegment of its own as the SDK records a botocore call
(named `sqs`, the operation, region, queue and status, a fault or throttle flagged), and its request carries
that subsegment's trace header. A setting it cannot honour (a proxy's own CA bundle or client certificate, a
client certificate, a proxy that is not http(s)) makes it read through the botocore client instead, and it
says so once, in the log.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

import botocore.client
import urllib3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config as BotoConfig
from botocore.credentials import Credentials
from botocore.exceptions import (
    ClientError,
    ConnectTimeoutError,
    EndpointConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)
from botocore.httpsession import get_cert_path
from botocore.utils import get_environ_proxies

from queuewatch.adapters.aws.errors import THROTTLING_CODES
from queuewatch.adapters.sqs import DEPTH_ATTRIBUTES, QueueDepth, depth_of, read_queue_depth

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

OPERATION = "GetQueueAttributes"
HEADERS = {
    "Content-Type": "application/x-amz-json-1.0",
    "X-Amz-Target": f"AmazonSQS.{OPERATION}",
    "x-amzn-query-mode": "true",  # errors carry SQS's query-protocol codes, as botocore asks for them
}
TRANSIENT_CODES = frozenset({"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete"})
TRANSIENT_STATUS = frozenset({500, 502, 503, 504})
BACKOFF_CAP_SECONDS = 20.0  # botocore's standard mode caps each wait here
THROTTLING_BACKOFF_SECONDS = 1.0
OTHER_BACKOFF_SECONDS = 0.05

logger = logging.getLogger(__name__)


def unsupported_setting(config: BotoConfig, proxy: str | None) -> str | None:
    """The client setting this reader cannot honour, named; None when it honours them all."""
    if getattr(config, "client_cert", None):
        return "client_cert (a client certificate)"
    if getattr(config, "proxies_config", None):
        return "proxies_config (a proxy's CA bundle, client certificate or forwarding)"
    if proxy is not None and urlsplit(proxy).scheme not in ("http", "https"):
        return f"a {urlsplit(proxy).scheme or 'schemeless'} proxy"
    return None


class QueueDepthReader:
    """Reads queue depths in one region; safe to share across the collector's threads."""

    def __init__(
        self,
        client: SQSClient,
        credentials: Credentials | None,
        config: BotoConfig,
        *,
        attempts: int,
        pool_size: int,
        sleep: Callable[[float], None] | None = None,
        jitter: Callable[[], float] = random.random,
        ca_bundle: str | None = None,
    ) -> None:
        self._client = client
        self._credentials = credentials
        self._region = client.meta.region_name
        # With its path: a gateway in front of SQS is signed for, and sent to, the path it serves.
        self._endpoint = client.meta.endpoint_url.rstrip("/") + "/"
        self._path = urlsplit(self._endpoint).path
        self._attempts = attempts
        scheme = urlsplit(self._endpoint).scheme
        proxies = getattr(config, "proxies", None) or get_environ_proxies(self._endpoint)
        proxy = proxies.get(scheme)
        self.fallback = unsupported_setting(config, proxy)  # None: this reader sends; else botocore's client reads
        if self.fallback is not None:
            logger.warning(
                "queue depths in %s are read through botocore: the lean reader cannot honour %s",
                self._region,
                self.fallback,
            )
        options: dict[str, Any] = {
            "maxsize": pool_size,
            "block": True,  # at most pool_size connections, as botocore's max_pool_connections
            "timeout": urllib3.Timeout(
                connect=getattr(config, "connect_timeout"),  # noqa: B009 - untyped in the stubs
                read=getattr(config, "read_timeout"),  # noqa: B009
            ),
            "retries": False,
            **({"ca_certs": ca_bundle or get_cert_path(True)} if scheme == "https" else {}),
        }
        self.proxy = None if self.fallback else proxy
        # Through a proxy, its manager asks for the absolute URL: forwarded (http) with the proxy's credentials,
        # or through a tunnel (CONNECT, https). Without one, one pool to the endpoint, asked for its path.
        self._pool = self._connections(self.proxy, options)
        self._target = self._endpoint if self.proxy else self._path
        self._operation = client.meta.service_model.operation_model(OPERATION)
        self._sleep = sleep  # None: time.sleep, looked up when it waits (the tests record it instead)
        self._jitter = jitter

    def _connections(
        self, proxy: str | None, options: dict[str, Any]
    ) -> urllib3.HTTPConnectionPool | urllib3.ProxyManager:
        """The pool to the endpoint, or the manager of the proxy that applies (its credentials as Basic auth,
        as botocore sends them)."""
        if proxy is None:
            return urllib3.connection_from_url(self._endpoint, **options)
        parts = urlsplit(proxy)
        headers = {}
        if parts.username is not None:
            credentials = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
            headers = urllib3.make_headers(proxy_basic_auth=credentials)
            proxy = parts._replace(netloc=f"{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")).geturl()
        return urllib3.ProxyManager(proxy, proxy_headers=headers, num_pools=1, **options)

    def read(self, url: str) -> QueueDepth:
        """One GetQueueAttributes call (with its retries). Raises botocore's errors, as the client would."""
        if self.fallback is not None:
            return read_queue_depth(self._client, url)
        if getattr(botocore.client, "_xray_enabled", False):  # set by the X-Ray SDK's patch of botocore
            return self._traced_read(url)
        depth, _ = self._read(url, {})
        return depth

    def _traced_read(self, url: str) -> QueueDepth:
        """The read as the X-Ray SDK records a botocore call: a subsegment with its metadata, and the request
        carrying that subsegment's trace header. The SDK is imported only here: where botocore is traced, it is
        loaded already (the layer does not ship it)."""
        from aws_xray_sdk.core import xray_recorder  # type: ignore[import-untyped]
        from aws_xray_sdk.ext.boto_utils import aws_meta_processor  # type: ignore[import-untyped]
        from aws_xray_sdk.ext.util import inject_trace_header  # type: ignore[import-untyped]

        def call(operation: str, api_params: dict[str, Any]) -> dict[str, Any]:
            trace_headers: dict[str, str] = {}
            inject_trace_header(trace_headers, xray_recorder.current_subsegment())
            depth, request_id = self._read(api_params["QueueUrl"], trace_headers)
            return {"depth": depth, "ResponseMetadata": {"RequestId": request_id, "HTTPStatusCode": 200}}

        answer = xray_recorder.record_subsegment(
            call, self._client, (OPERATION, {"QueueUrl": url}), {},
            name="sqs", namespace="aws", meta_processor=aws_meta_processor,
        )  # fmt: skip
        depth: QueueDepth = answer["depth"]
        return depth

    def _read(self, url: str, trace_headers: dict[str, str]) -> tuple[QueueDepth, str | None]:
        """The depth and SQS's request id. `trace_headers` override the trace header botocore's hooks add."""
        api_params = {"QueueUrl": url, "AttributeNames": list(DEPTH_ATTRIBUTES)}
        events, name = self._client.meta.events, f"sqs.{OPERATION}"
        events.emit(f"before-parameter-build.{name}", params=api_params, model=self._operation, context={})
        body = json.dumps(api_params).encode()
        request_dict: dict[str, Any] = {"url_path": "/", "method": "POST", "headers": {}, "body": body}
        events.emit(f"before-call.{name}", model=self._operation, params=request_dict, request_signer=None, context={})
        # Lambda's X-Amzn-Trace-Id, as botocore adds it; the X-Ray SDK's subsegment's instead, where it traces
        headers = {**HEADERS, **request_dict["headers"], **trace_headers}
        for attempt in range(1, self._attempts + 1):
            try:
                status, answer_headers, payload = self._send(body, headers)
            except (ConnectTimeoutError, ReadTimeoutError, EndpointConnectionError):
                if attempt == self._attempts:
                    raise
                self._wait(OTHER_BACKOFF_SECONDS, attempt)
                continue
            if status == 200:
                request_id = {key.lower(): value for key, value in answer_headers.items()}.get("x-amzn-requestid")
                return depth_of(json.loads(payload).get("Attributes", {})), request_id
            error = self._client_error(status, answer_headers, payload)
            code = error.response["Error"]["Code"]
            throttled = code in THROTTLING_CODES or status == 429
            if attempt == self._attempts or not (throttled or code in TRANSIENT_CODES or status in TRANSIENT_STATUS):
                raise error
            scale = THROTTLING_BACKOFF_SECONDS if throttled else OTHER_BACKOFF_SECONDS
            self._wait(scale, attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _wait(self, scale: float, attempt: int) -> None:
        (self._sleep or time.sleep)(self._jitter() * min(scale * 2.0 ** (attempt - 1), BACKOFF_CAP_SECONDS))

    def _send(self, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        request = AWSRequest(method="POST", url=self._endpoint, data=body, headers=headers)
        if self._credentials is None:
            raise NoCredentialsError()
        SigV4Auth(self._credentials.get_frozen_credentials(), "sqs", self._region).add_auth(request)
        prepared = request.prepare()
        # The hooks botocore runs before each attempt: the tick's deadline (it raises), moto's mock (it answers).
        answered = self._client.meta.events.emit(f"before-send.sqs.{OPERATION}", request=prepared)
        mocked: Any = next((response for _, response in answered if response is not None), None)
        if mocked is not None:
            return int(mocked.status_code), dict(mocked.headers), bytes(mocked.content)
        try:
            headers = dict(prepared.headers.items())
            response = self._pool.urlopen("POST", self._target, body=body, headers=headers, redirect=False)
        except urllib3.exceptions.ConnectTimeoutError as failure:
            raise ConnectTimeoutError(endpoint_url=self._endpoint, error=failure) from failure
        except urllib3.exceptions.ReadTimeoutError as failure:
            raise ReadTimeoutError(endpoint_url=self._endpoint, error=failure) from failure
        except urllib3.exceptions.HTTPError as failure:
            raise EndpointConnectionError(endpoint_url=self._endpoint, error=failure) from failure
        return response.status, dict(response.headers.items()), response.data

    def _client_error(self, status: int, headers: dict[str, str], payload: bytes) -> ClientError:
        """SQS's error as botocore words it: the query-protocol code SQS sends beside its JSON type."""
        try:
            document = json.loads(payload or b"{}")
        except ValueError:
            document = {}
        lowered = {key.lower(): value for key, value in headers.items()}
        code = str(document.get("__type", "")).rsplit("#", 1)[-1] or str(status)
        if query_error := lowered.get("x-amzn-query-error", ""):
            code = query_error.split(";", 1)[0]
        error = {"Code": code, "Message": str(document.get("message") or document.get("Message") or "")}
        customized: dict[str, Any] = {}  # what a before-parse hook says instead (the tests' injected faults)
        self._client.meta.events.emit(
            f"before-parse.sqs.{OPERATION}",
            operation_model=self._operation,
            response_dict={"status_code": status, "headers": headers, "body": payload},
            customized_response_dict=customized,
        )
        error.update(customized.get("Error", {}))
        return ClientError({"Error": error, "ResponseMetadata": {"HTTPStatusCode": status}}, OPERATION)  # type: ignore[typeddict-item]
