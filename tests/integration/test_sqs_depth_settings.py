"""The lean GetQueueAttributes (adapters/sqs_depth.py) honours the client settings a user sets for botocore:
an endpoint URL with a path (signed and posted to that path, through a path-prefix proxy in front of a moto
server), the proxy variables (through a forward proxy on 127.0.0.1, and NO_PROXY), the CA bundle; and where it
cannot honour one, botocore reads instead, and the log says so once. With tracing on it still sends, each read
its own trace subsegment."""

from __future__ import annotations

import http.client
import json
import logging
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import botocore.client
import botocore.endpoint
import botocore.exceptions
import botocore.httpsession
import pytest
import urllib3
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config as BotoConfig

from bench.motoserver import MotoServer
from queuewatch.adapters.aws.clients import RETRY_CONFIG, AwsClients
from queuewatch.adapters.sqs import QueueDepth, read_queue_depth

REGION = "us-east-1"
PREFIX = "/sqs"
PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY")


class Relay(ThreadingHTTPServer):
    """On 127.0.0.1: a forward proxy (a request for an absolute URL is sent on to it) and a path-prefix proxy
    (a request under PREFIX is sent on to `upstream` without the prefix). It keeps what it was asked."""

    def __init__(self, upstream: str) -> None:
        super().__init__(("127.0.0.1", 0), _RelayHandler)
        self.upstream = upstream
        self.seen: list[tuple[str, dict[str, str], bytes]] = []
        self.endpoint = f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> Relay:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *_: object) -> None:
        self.shutdown()
        self.server_close()


class _RelayHandler(BaseHTTPRequestHandler):
    server: Relay

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.server.seen.append((self.path, dict(self.headers.items()), body))
        if self.path.startswith("http://"):
            target = urllib.parse.urlsplit(self.path)
        elif self.path == PREFIX or self.path.startswith(PREFIX + "/"):
            target = urllib.parse.urlsplit(self.server.upstream + self.path[len(PREFIX) :])
        else:
            self.send_error(404, "not under the prefix")
            return
        connection = http.client.HTTPConnection(target.netloc, timeout=10)
        forwarded = {k: v for k, v in self.headers.items() if not k.lower().startswith("proxy-")}
        connection.request("POST", target.path or "/", body=body, headers=forwarded)
        answer = connection.getresponse()
        payload = answer.read()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_: Any) -> None:
        pass


@pytest.fixture(scope="module")
def moto_server() -> Iterator[MotoServer]:
    with MotoServer() as server:
        yield server


@pytest.fixture
def queue(moto_server: MotoServer, monkeypatch: pytest.MonkeyPatch) -> str:
    moto_server.reset()
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server.endpoint)
    sqs = boto3.client("sqs", region_name=REGION)
    url: str = sqs.create_queue(QueueName="gh-ci-linux-queued-builds")["QueueUrl"]
    for _ in range(2):
        sqs.send_message(QueueUrl=url, MessageBody="job")
    return url


def test_an_endpoint_with_a_path_is_signed_for_and_sent_to_that_path(
    moto_server: MotoServer, queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Relay(moto_server.endpoint) as gateway:
        monkeypatch.setenv("AWS_ENDPOINT_URL", gateway.endpoint + PREFIX)
        session = boto3.Session()
        clients = AwsClients(session)
        assert clients.queue_depths(REGION).read(queue) == QueueDepth(visible=2, in_flight=0, delayed=0)
        assert read_queue_depth(clients.sqs(REGION), queue) == QueueDepth(visible=2, in_flight=0, delayed=0)
        [(path, headers, body), _botocores] = gateway.seen
    assert path == PREFIX + "/"
    # The signature is over the path it was sent to: signed again here for that URL, at its time, it is the same.
    signed = headers["Authorization"].split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    kept = {k: v for k, v in headers.items() if k.lower() in signed and k.lower() != "host"}
    again = AWSRequest(method="POST", url=gateway.endpoint + path, data=body, headers=kept)
    again.context["timestamp"] = headers["X-Amz-Date"]
    credentials = session.get_credentials()
    assert credentials is not None
    signer = SigV4Auth(credentials.get_frozen_credentials(), "sqs", REGION)
    signature = signer.signature(signer.string_to_sign(again, signer.canonical_request(again)), again)
    assert headers["Authorization"].endswith(f"Signature={signature}")


def test_the_proxy_variables_are_honoured_and_no_proxy_bypasses(
    moto_server: MotoServer, queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Relay(moto_server.endpoint) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.endpoint.replace("http://", "http://ci%40team:s3cret@"))
        reader = AwsClients(boto3.Session()).queue_depths(REGION)
        assert reader.read(queue) == QueueDepth(visible=2, in_flight=0, delayed=0)
        [(path, headers, _)] = proxy.seen
        assert path == moto_server.endpoint + "/"  # asked of the proxy by its absolute URL
        lowered = {key.lower(): value for key, value in headers.items()}
        assert lowered["proxy-authorization"] == "Basic Y2lAdGVhbTpzM2NyZXQ="  # "ci@team:s3cret", as botocore sends
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        direct = AwsClients(boto3.Session()).queue_depths(REGION)
        assert direct.proxy is None and direct.read(queue).visible == 2
        assert len(proxy.seen) == 1  # NO_PROXY: straight to the endpoint


def test_the_ca_bundle_botocore_verifies_with_is_the_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = tmp_path / "corporate-ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")  # never loaded: no connection is made here
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_CA_BUNDLE", str(bundle))
    reader = AwsClients(boto3.Session()).queue_depths(REGION)
    pool = reader._pool
    assert isinstance(pool, urllib3.HTTPSConnectionPool) and pool.ca_certs == str(bundle)


def test_a_setting_it_cannot_honour_falls_back_to_botocore_and_says_so_once(
    queue: str, caplog: pytest.LogCaptureFixture
) -> None:
    config = RETRY_CONFIG.merge(BotoConfig(proxies_config={"proxy_use_forwarding_for_https": True}))
    clients = AwsClients(boto3.Session(), config)
    with caplog.at_level(logging.WARNING, logger="queuewatch.adapters.sqs_depth"):
        depths = [clients.queue_depths(REGION).read(queue) for _ in range(3)]
    assert depths == [QueueDepth(visible=2, in_flight=0, delayed=0)] * 3  # read by the botocore client
    [said] = [r.getMessage() for r in caplog.records if r.name == "queuewatch.adapters.sqs_depth"]
    assert "read through botocore" in said and "proxies_config" in said


class BotocoreTransport:
    """botocore's own transport (the URLLib3Session every client sends through), wrapped to keep the operation of
    each request it sends: where a read goes, not what the log says about it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        original = botocore.httpsession.URLLib3Session.send

        def send(session: botocore.httpsession.URLLib3Session, request: Any) -> Any:
            self.sent.append(str(request.headers.get("X-Amz-Target", b"").decode() or "?"))
            return original(session, request)

        monkeypatch.setattr(botocore.httpsession.URLLib3Session, "send", send)


@pytest.mark.parametrize(
    "setting",
    [
        pytest.param({"proxies_config": {"proxy_use_forwarding_for_https": True}}, id="proxies_config"),
        pytest.param({"client_cert": "CERT"}, id="client_cert"),
    ],
)
def test_a_setting_it_cannot_honour_sends_each_read_through_botocores_transport(
    queue: str, setting: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request itself goes through botocore's client, which honours the setting: the lean reader's own pool
    sends nothing. Without such a setting, the same reads never touch botocore's transport."""
    certificate = tmp_path / "client.pem"
    certificate.write_text("not read over http\n")
    if setting.get("client_cert") == "CERT":
        setting = {"client_cert": str(certificate)}
    transport = BotocoreTransport(monkeypatch)
    lean = AwsClients(boto3.Session()).queue_depths(REGION)
    assert lean.read(queue).visible == 2 and transport.sent == []  # the lean reader sends on its own
    handed = AwsClients(boto3.Session(), RETRY_CONFIG.merge(BotoConfig(**setting))).queue_depths(REGION)
    depths = [handed.read(queue) for _ in range(3)]
    assert depths == [QueueDepth(visible=2, in_flight=0, delayed=0)] * 3
    assert transport.sent == ["AmazonSQS.GetQueueAttributes"] * 3


@pytest.fixture
def xray_traced_botocore(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """botocore patched by the X-Ray SDK, as Powertools Tracer patches it, and unpatched after the test."""
    from aws_xray_sdk.core import xray_recorder  # type: ignore[import-untyped]
    from aws_xray_sdk.ext.botocore.patch import patch  # type: ignore[import-untyped]

    original = botocore.client.BaseClient._make_api_call  # type: ignore[attr-defined]
    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", original)
    monkeypatch.setattr(botocore.endpoint.Endpoint, "prepare_request", botocore.endpoint.Endpoint.prepare_request)
    monkeypatch.setenv("AWS_XRAY_CONTEXT_MISSING", "IGNORE_ERROR")
    patch()
    xray_recorder.begin_segment("collect")
    try:
        yield xray_recorder
    finally:
        xray_recorder.clear_trace_entities()
        delattr(botocore.client, "_xray_enabled")


def test_with_tracing_on_the_lean_reader_sends_each_read_as_a_subsegment_named_in_its_trace_header(
    moto_server: MotoServer, queue: str, monkeypatch: pytest.MonkeyPatch, xray_traced_botocore: Any
) -> None:
    """Where the X-Ray SDK traces botocore, the lean reader still sends (the promise's CPU), and records each
    read as the SDK records a botocore call: a subsegment `sqs` with the operation, region, queue and status,
    its request carrying the subsegment's trace header; a refused read is flagged on its own subsegment."""
    with Relay(moto_server.endpoint) as gateway:
        monkeypatch.setenv("AWS_ENDPOINT_URL", gateway.endpoint + PREFIX)
        reader = AwsClients(boto3.Session()).queue_depths(REGION)
        assert reader.fallback is None
        assert reader.read(queue).visible == 2
        with pytest.raises(botocore.exceptions.ClientError):
            reader.read(queue.replace("linux", "gone"))
        [(_, headers, _), _] = gateway.seen
    traced, refused = (json.loads(sub.serialize()) for sub in xray_traced_botocore.current_segment().subsegments)
    assert (traced["name"], traced["namespace"]) == ("sqs", "aws")
    assert traced["aws"]["operation"] == "GetQueueAttributes" and traced["aws"]["region"] == REGION
    assert traced["aws"]["queue_url"] == queue
    assert traced["http"]["response"]["status"] == 200 and not {"error", "fault", "throttle"} & set(traced)
    assert headers["X-Amzn-Trace-Id"] == f"Root={traced['trace_id']};Parent={traced['id']};Sampled=1"
    assert (refused["name"], refused.get("error"), refused["http"]["response"]["status"]) == ("sqs", True, 400)


def test_lambdas_trace_header_goes_on_each_lean_read_as_botocore_puts_it(
    moto_server: MotoServer, queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tracing=Active without the SDK: Lambda's trace id, which botocore's hook puts on every call."""
    trace = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "collect")
    monkeypatch.setenv("_X_AMZN_TRACE_ID", trace)
    with Relay(moto_server.endpoint) as gateway:
        monkeypatch.setenv("AWS_ENDPOINT_URL", gateway.endpoint + PREFIX)
        assert AwsClients(boto3.Session()).queue_depths(REGION).read(queue).visible == 2
        [(_, headers, _)] = gateway.seen
    assert headers["X-Amzn-Trace-Id"] == trace


def test_with_tracing_off_the_lean_reader_sends(queue: str) -> None:
    assert not hasattr(botocore.client, "_xray_enabled")
    assert AwsClients(boto3.Session()).queue_depths(REGION).fallback is None
