"""Run the functions with `sam local invoke` against a moto server in a container.

The driver behind `make e2e` (test_sam_local.py), `make invoke-collect` and `make invoke-evaluate`:

- a moto server runs as a container on a user-defined docker network of its own; its image is
  built FROM the Lambda Python image with wheels downloaded on the host, so it builds offline;
- the host seeds moto through the port the container publishes on 127.0.0.1;
- `sam local invoke --docker-network NET --env-vars FILE` runs each function in the Lambda image
  on that network. The env-vars file sets the template's AWS_ENDPOINT_URL variable to the moto
  container: `sam local invoke` does not evaluate the template's `Fn::If`, it leaves the
  variable blank, so `--parameter-overrides AwsEndpointUrl=...` would not reach the functions.

    python tests/e2e/sam_local.py invoke CollectFunction events/collect_scheduled.json
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Self

import boto3

from queuewatch.runtime.schedule import scheduled_time
from queuewatch_cli.commands.demo.harness import HEALTHY_QUEUES, INCIDENT_QUEUE, job_message, put_age_datapoints
from queuewatch_cli.devkit.moto_tables import create_jobs_table, create_state_table

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO_ROOT / ".aws-sam" / "build"
BUILT_TEMPLATE = BUILD_DIR / "template.yaml"
EVENTS_DIR = REPO_ROOT / "events"
SAM = Path(os.environ.get("SAM", REPO_ROOT / ".venv-sam" / "bin" / "sam"))
LAMBDA_IMAGE = "public.ecr.aws/lambda/python:3.13-x86_64"  # the image SAM runs python3.13 functions in
SAM_IMAGE_REPOSITORY = "samcli/lambda-python"
MOTO_PORT = 5000
REGION = "us-east-1"
STATE_TABLE = "queuewatch-e2e-state"
TOPIC = "queuewatch-e2e-alerts"
INBOX = "queuewatch-e2e-pager-inbox"
CHAT_TOPIC = "queuewatch-e2e-chat"
CHAT_INBOX = "queuewatch-e2e-chat-inbox"
INCIDENT_AGE_SECONDS = 114 * 60
FUNCTIONS = {
    "collect": "CollectFunction",
    "evaluate": "EvaluateFunction",
    "track": "TrackFunction",
    "webhook": "WebhookFunction",
    "deliveries": "WebhookDeliveriesFunction",
    "digest": "DigestFunction",
}
JOBS_TABLE = "queuewatch-e2e-jobs"
WEBHOOK_SECRET = "queuewatch-local-webhook-secret"  # what signed events/webhook_workflow_job.json
WEBHOOK_QUEUE = "queuewatch-e2e-webhook-deliveries"
INVOKE_TIMEOUT_SECONDS = 300
IMPORT_RUNS = 5


class E2EError(Exception):
    """The e2e path cannot run, or a function failed; says which and why."""


def function_for(event_file: Path) -> str:
    """events/<stage>_*.json belong to the <stage> function."""
    stage = event_file.name.split("_", 1)[0]
    if stage not in FUNCTIONS:
        raise E2EError(f"{event_file}: no function for stage {stage!r}; expected one of {sorted(FUNCTIONS)}")
    return FUNCTIONS[stage]


def docker(*args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise E2EError(f"docker {' '.join(args[:3])} failed ({result.returncode}): {result.stderr.strip()[-2000:]}")
    return result


def image_present(image: str) -> bool:
    return docker("image", "inspect", image, check=False).returncode == 0


def why_not_runnable() -> str | None:
    """Why `sam local invoke` cannot run here, or None."""
    if shutil.which("docker") is None:
        return "no docker client on PATH (offline machine: ../shared/tools/start-docker.sh installs and starts one)"
    if docker("info", check=False, timeout=30).returncode != 0:
        return "no Docker daemon answers (offline machine: ../shared/tools/start-docker.sh)"
    if not SAM.exists():
        return f"no sam at {SAM} (make venv-sam)"
    if not BUILT_TEMPLATE.exists():
        return f"no build output at {BUILT_TEMPLATE} (make build)"
    return None


def pinned_moto_version() -> str:
    """moto's version as requirements-demo.txt pins it, so the container runs what the tests run."""
    text = (REPO_ROOT / "requirements-demo.txt").read_text(encoding="utf-8")
    match = re.search(r"^moto\[server\]==(\S+)", text, re.MULTILINE)
    if match is None:
        raise E2EError("requirements-demo.txt pins no moto[server]==VERSION")
    return match.group(1)


def moto_image() -> str:
    """The moto server image, built once per moto version from wheels downloaded here."""
    version = pinned_moto_version()
    tag = f"queuewatch-e2e-moto:{version}"
    if image_present(tag):
        return tag
    if not image_present(LAMBDA_IMAGE):
        # `docker build` pulls it where a registry answers; offline it must be built first.
        print(f"{LAMBDA_IMAGE} is not present; docker build will try to pull it", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="queuewatch-moto-image-") as context:
        constraints = Path(context) / "constraints.txt"
        freeze = subprocess.run(
            [sys.executable, "-m", "pip", "freeze", "--exclude-editable"], capture_output=True, text=True, check=True
        )
        constraints.write_text(freeze.stdout, encoding="utf-8")
        platform = "--only-binary=:all: --python-version 3.13 --implementation cp --abi cp313 --platform "
        platform += "manylinux2014_x86_64 --platform manylinux_2_28_x86_64"  # what the Lambda image can load
        download = [sys.executable, "-m", "pip", "download", "--quiet", "--dest", f"{context}/wheels"]
        download += ["--constraint", str(constraints), *platform.split(), f"moto[server]=={version}", "pip"]
        result = subprocess.run(download, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise E2EError(f"pip download of moto[server]=={version} failed: {result.stderr.strip()[-2000:]}")
        shutil.copy(Path(__file__).with_name("moto.Dockerfile"), Path(context) / "Dockerfile")
        print(f"building {tag} from {LAMBDA_IMAGE}", file=sys.stderr)
        build_args = ["--build-arg", f"BASE_IMAGE={LAMBDA_IMAGE}", "--build-arg", f"MOTO_VERSION={version}"]
        docker("build", "--quiet", "--tag", tag, *build_args, context)
    return tag


def _interrupt_on_sigterm(signum: int, frame: FrameType | None) -> None:
    # As Ctrl-C does: pytest then stops and tears its fixtures down, and subprocess.run kills its child.
    raise KeyboardInterrupt(f"signal {signum}")


class MotoServer:
    """A moto server container on a docker network of its own; removes both, and anything left on it, on exit."""

    def __init__(self, prefix: str = "queuewatch-e2e") -> None:
        suffix = uuid.uuid4().hex[:8]
        self.network = f"{prefix}-{suffix}"
        self.container = f"{prefix}-moto-{suffix}"
        self.endpoint = ""  # as the host reaches it: the port published on 127.0.0.1

    @property
    def function_endpoint(self) -> str:
        """As the functions reach it, by container name on the shared network."""
        return f"http://{self.container}:{MOTO_PORT}"

    def __enter__(self) -> Self:
        # A terminated run (CI timeout, Ctrl-C) still goes through __exit__ and removes what it made.
        signal.signal(signal.SIGTERM, _interrupt_on_sigterm)
        image = moto_image()
        try:
            docker("network", "create", self.network)
            publish = f"127.0.0.1::{MOTO_PORT}"  # loopback only, on a port docker picks
            docker("run", "--detach", "--rm", "--name", self.container, "--network", self.network, "-p", publish, image)
            published = docker("port", self.container, str(MOTO_PORT)).stdout.split()[0]
            self.endpoint = f"http://{published}"
            self._wait_until_ready()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        # SAM removes each function container after its invoke; an interrupted invoke may leave one here.
        attached = docker("ps", "--all", "--quiet", "--filter", f"network={self.network}", check=False).stdout.split()
        docker("rm", "--force", self.container, *attached, check=False)
        docker("network", "rm", self.network, check=False)

    def _request(self, path: str, method: str = "GET") -> None:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never via a proxy
        with opener.open(urllib.request.Request(f"{self.endpoint}{path}", method=method), timeout=5):
            pass

    def _wait_until_ready(self, attempts: int = 60) -> None:
        for _ in range(attempts):
            try:
                self._request("/moto-api/")
                return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        logs = docker("logs", self.container, check=False)
        raise E2EError(f"moto did not answer on {self.endpoint}: {(logs.stdout + logs.stderr)[-2000:]}")

    def reset(self) -> None:
        """Forget every resource: each check starts from its own seed."""
        self._request("/moto-api/reset", method="POST")

    def session(self) -> boto3.Session:
        return boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION)

    def client(self, service: str) -> Any:
        return self.session().client(service, endpoint_url=self.endpoint)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Seeded:
    """What template.yaml would deploy, made in moto, plus an SQS inbox subscribed to each topic."""

    table: str
    topic_arn: str
    inbox_url: str
    chat_topic_arn: str
    chat_inbox_url: str
    jobs_table: str
    webhook_secret_arn: str
    webhook_queue_url: str


def seed_incident(moto: MotoServer, at: datetime) -> Seeded:
    """The demo's incident at `at`: 14 jobs queued on linux.2xlarge, the oldest 114 minutes old.

    moto makes no AWS/SQS metrics, so the age datapoints the collector reads are put here, for the
    minute before the tick, as CloudWatch would publish them.
    """
    sqs: SQSClient = moto.client("sqs")
    urls = {name: sqs.create_queue(QueueName=name)["QueueUrl"] for name in [INCIDENT_QUEUE, *HEALTHY_QUEUES]}
    for job_id in range(14):
        sqs.send_message(QueueUrl=urls[INCIDENT_QUEUE], MessageBody=job_message(9_000_000 + job_id))
    put_age_datapoints(moto.client("cloudwatch"), at, INCIDENT_AGE_SECONDS)
    create_state_table(moto.client("dynamodb"), STATE_TABLE)
    topic_arn, inbox_url = _topic_with_inbox(moto, TOPIC, INBOX)
    chat_topic_arn, chat_inbox_url = _topic_with_inbox(moto, CHAT_TOPIC, CHAT_INBOX)
    create_jobs_table(moto.client("dynamodb"), JOBS_TABLE)
    secret = moto.client("secretsmanager").create_secret(Name="queuewatch-e2e-webhook", SecretString=WEBHOOK_SECRET)
    webhook_queue = sqs.create_queue(QueueName=WEBHOOK_QUEUE)["QueueUrl"]
    return Seeded(
        STATE_TABLE, topic_arn, inbox_url, chat_topic_arn, chat_inbox_url, JOBS_TABLE, secret["ARN"], webhook_queue
    )


def _topic_with_inbox(moto: MotoServer, topic: str, inbox: str) -> tuple[str, str]:
    sqs: SQSClient = moto.client("sqs")
    sns = moto.client("sns")
    topic_arn: str = sns.create_topic(Name=topic)["TopicArn"]
    inbox_url = sqs.create_queue(QueueName=inbox)["QueueUrl"]
    inbox_arn = sqs.get_queue_attributes(QueueUrl=inbox_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic_arn, Protocol="sqs", Endpoint=inbox_arn)
    return topic_arn, inbox_url


def received(moto: MotoServer, inbox_url: str) -> list[dict[str, Any]]:
    """The SNS notifications a subscribed inbox holds, as a subscriber reads them; removes them."""
    sqs: SQSClient = moto.client("sqs")
    envelopes = []
    while messages := sqs.receive_message(QueueUrl=inbox_url, MaxNumberOfMessages=10).get("Messages", []):
        for message in messages:
            envelopes.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=inbox_url, ReceiptHandle=message["ReceiptHandle"])
    return envelopes


def write_env_vars(path: Path, moto: MotoServer, seeded: Seeded) -> Path:
    """The --env-vars file: the endpoint override for both functions, and the resources moto holds."""
    env_vars = {
        "Parameters": {"AWS_ENDPOINT_URL": moto.function_endpoint},
        # Locally SAM resolves these template references to logical ids, which are no table name or ARN.
        "EvaluateFunction": {
            "STATE_TABLE": seeded.table,
            "ALERT_TOPIC_ARN": seeded.topic_arn,
            "CHAT_TOPIC_ARN": seeded.chat_topic_arn,
            "DASHBOARD_NAME": "queuewatch-e2e-queuewatch",  # as ${AWS::StackName}-queuewatch would be
        },
        "CollectFunction": {"JOBS_TABLE": ""},  # tracking off, as the stack's default
        "TrackFunction": {"JOBS_TABLE": seeded.jobs_table},
        "WebhookFunction": {
            "WEBHOOK_SECRET_ARN": seeded.webhook_secret_arn,
            "WEBHOOK_QUEUE_URL": seeded.webhook_queue_url,
        },
        "WebhookDeliveriesFunction": {"JOBS_TABLE": seeded.jobs_table},
        # The e2e config declares no SLOs: the digest reads no table and sends nothing, but starts as deployed.
        "DigestFunction": {
            "SLO_TABLE": "queuewatch-e2e-slos",
            "JOBS_TABLE": seeded.jobs_table,
            "STATE_TABLE": seeded.table,
            "CHAT_TOPIC_ARN": seeded.chat_topic_arn,
        },
    }
    path.write_text(json.dumps(env_vars, indent=2), encoding="utf-8")
    return path


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def event_time(event: dict[str, Any]) -> datetime:
    """The tick an event is about, as the collector takes it: the scheduled time its own shape (or a
    destination record's request) gives, else now, as the collector's clock for Scheduler's default."""
    return scheduled_time(event.get("requestPayload", event)) or datetime.now(UTC)


ISO_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def shift_to_now(event: dict[str, Any]) -> timedelta:
    """How far to move an events/ file so its tick is this minute: the evaluator in the container reads
    the real clock and refuses observations stamped far from it, as it would a replay."""
    return datetime.now(UTC).replace(second=0, microsecond=0) - event_time(event)


def restamped(value: Any, shift: timedelta) -> Any:
    """The event with every ISO-8601 instant in it moved by `shift`, in the same notation."""
    if isinstance(value, dict):
        return {key: restamped(item, shift) for key, item in value.items()}
    if isinstance(value, list):
        return [restamped(item, shift) for item in value]
    if isinstance(value, str) and ISO_INSTANT.match(value):
        moved = (datetime.fromisoformat(value) + shift).isoformat()
        return moved.replace("+00:00", "Z") if value.endswith("Z") else moved
    return value


@dataclass(frozen=True)
class Invocation:
    function: str
    command: list[str]
    payload: Any
    report: dict[str, str]  # the REPORT line's fields, e.g. "Init Duration": "0.14 ms"
    log: str


def sam_command(function: str, event: Path, env_vars: Path, network: str) -> list[str]:
    command = [str(SAM), "local", "invoke", function, "--template", str(BUILT_TEMPLATE), "--event", str(event)]
    command += ["--env-vars", str(env_vars), "--docker-network", network]
    # An image already here is used as it is: offline, nothing could be pulled; elsewhere, SAM pulls it.
    if image_present(LAMBDA_IMAGE):
        command.append("--skip-pull-image")
    return command


def sam_images() -> set[str]:
    """The ids of the images SAM builds to invoke functions in (the runtime image plus the layers)."""
    return set(docker("images", "--quiet", "--no-trunc", SAM_IMAGE_REPOSITORY, check=False).stdout.split())


@contextmanager
def one_invoke_at_a_time() -> Iterator[None]:
    """Holds a lock that every checkout's driver on this machine shares, for one invoke.

    SAM names the image it builds for a function after the runtime and the layers' logical ids
    alone, and a second SAM process that finds that image being built waits for it and then uses
    it: two checkouts invoking at once would run one checkout's layers under the other's code.
    """
    with (Path(tempfile.gettempdir()) / "queuewatch-sam-local-invoke.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def sam_local_invoke(function: str, event: Path, env_vars: Path, network: str) -> Invocation:
    """One `sam local invoke`; raises unless the function returned without error."""
    command = sam_command(function, event, env_vars, network)
    env = {**os.environ, "SAM_CLI_TELEMETRY": "0"}
    with one_invoke_at_a_time():
        images_before = sam_images()
        try:
            limit = INVOKE_TIMEOUT_SECONDS
            result = subprocess.run(
                command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=limit, check=False
            )
        except subprocess.TimeoutExpired as error:
            raise E2EError(
                f"{function} on {event.name}: sam local invoke ran over {INVOKE_TIMEOUT_SECONDS}s"
            ) from error
        finally:
            # SAM rebuilds its image on every invoke (the layers are local) and leaves the one it replaced untagged.
            superseded = images_before - sam_images()
            if superseded:
                docker("rmi", *superseded, check=False)
    where = f"{function} on {event.name}"
    if result.returncode != 0:
        raise E2EError(f"{where}: sam local invoke exited {result.returncode}:\n{result.stderr[-4000:]}")
    try:
        payload = json.loads(result.stdout)
    except json.JSONDecodeError as error:
        raise E2EError(
            f"{where}: the response is not JSON: {result.stdout[:500]!r}\n{result.stderr[-4000:]}"
        ) from error
    if isinstance(payload, dict) and "errorType" in payload:
        raise E2EError(
            f"{where} failed: {payload['errorType']}: {payload.get('errorMessage')}\n{result.stderr[-4000:]}"
        )
    return Invocation(function, command, payload, parse_report(result.stderr), result.stderr)


def parse_report(log: str) -> dict[str, str]:
    """The fields of the runtime's REPORT line ("Init Duration: 0.14 ms" -> {"Init Duration": "0.14 ms"})."""
    match = re.search(r"^REPORT RequestId: \S+\s+(.*)$", log, re.MULTILINE)
    if match is None:
        return {}
    fields = (field.split(": ", 1) for field in match.group(1).split("\t") if ": " in field)
    return {key.strip(): value.strip() for key, value in fields}


IMPORT_PROBE = f"""
import json, statistics, subprocess, sys
def median_ms(module):
    code = "import time; t = time.perf_counter(); import " + module + "; print((time.perf_counter() - t) * 1000)"
    runs = [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout)
            for _ in range({IMPORT_RUNS})]
    return statistics.median(runs)
print(json.dumps({{"app": median_ms("app"), "boto3": median_ms("boto3")}}))
"""


def import_times(function: str, build_dir: Path = BUILD_DIR) -> dict[str, float]:
    """Median import time (ms) of the handler module and of boto3 alone, each in fresh interpreters.

    Runs in the Lambda image on the build output, mounted read-only as Lambda mounts it, so
    Python uses the bytecode the build holds but cannot write any of its own.
    """
    function_dir, layer_dir = build_dir / function, build_dir / "QueuewatchLayer"
    mounts = ["-v", f"{function_dir}:/var/task:ro", "-v", f"{layer_dir}:/opt:ro"]
    env = ["-e", "PYTHONPATH=/var/task:/opt/python:/var/runtime", "-e", f"AWS_REGION={REGION}"]
    python = "/var/lang/bin/python3.13"
    result = docker("run", "--rm", "--entrypoint", python, *mounts, *env, LAMBDA_IMAGE, "-c", IMPORT_PROBE)
    return {key: float(value) for key, value in json.loads(result.stdout).items()}


def copy_without_bytecode(function: str, dest: Path) -> Path:
    """The function's and the layer's build output without __pycache__: the build as `sam build` alone leaves it."""
    for name in (function, "QueuewatchLayer"):
        shutil.copytree(BUILD_DIR / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def invoke_main(function: str, event: Path) -> int:
    """`make invoke-collect` / `make invoke-evaluate`: moto up and seeded, one invoke, what it paged; moto down."""
    reason = why_not_runnable()
    if reason is not None:
        print(f"cannot run sam local invoke: {reason}", file=sys.stderr)
        return 2
    event_data = load_json(event)
    shift = shift_to_now(event_data)
    with MotoServer() as moto, tempfile.TemporaryDirectory(prefix="queuewatch-invoke-") as scratch:
        seeded = seed_incident(moto, event_time(event_data) + shift)
        env_vars = write_env_vars(Path(scratch) / "env.json", moto, seeded)
        event = Path(scratch) / event.name
        event.write_text(json.dumps(restamped(event_data, shift)), encoding="utf-8")
        print(f"{event.name}: its times moved by {shift} to this minute", file=sys.stderr)
        print(f"moto: {moto.container} on network {moto.network}, seeded with the 114-minute incident", file=sys.stderr)
        try:
            invocation = sam_local_invoke(function, event, env_vars, moto.network)
        except E2EError as error:
            print(error, file=sys.stderr)
            return 1
        print(invocation.log, file=sys.stderr)
        print("$ " + " ".join(invocation.command), file=sys.stderr)
        print(json.dumps(invocation.payload, indent=2))
        for envelope in received(moto, seeded.inbox_url):
            print("--- paged: the alert topic's Message, as an SQS subscriber receives it", file=sys.stderr)
            print(json.dumps(json.loads(envelope["Message"]), indent=2), file=sys.stderr)
        for envelope in received(moto, seeded.chat_inbox_url):
            print("--- the chat topic's Message (AWS Chatbot custom notification)", file=sys.stderr)
            print(json.dumps(json.loads(envelope["Message"]), indent=2), file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    invoke = commands.add_parser("invoke", help="sam local invoke one function on one event against a seeded moto")
    invoke.add_argument("function", choices=sorted(FUNCTIONS.values()))
    invoke.add_argument("event", type=Path, help="the event file, e.g. events/collect_scheduled.json")
    args = parser.parse_args(argv)
    return invoke_main(args.function, args.event.resolve())


if __name__ == "__main__":
    sys.exit(main())
