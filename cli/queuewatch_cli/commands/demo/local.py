"""`queuewatch local up|down`: a stack to try the operator commands on without AWS.

`up` starts a moto server on 127.0.0.1 (its pid in ~/.cache/queuewatch/local.pid), plays the demo's incident
into it, and registers a CloudFormation stack `queuewatch-demo` whose outputs name the demo's table, so
`queuewatch status --stack queuewatch-demo` finds it as it would a deployed one. It prints the environment
the commands need. `down` stops the server; its state goes with it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest.mock import patch

from queuewatch.base.errors import QueuewatchError
from queuewatch_cli.common.stacks import LOCAL_STACK

DEFAULT_PORT = 5077
HOST = "127.0.0.1"
STACK = LOCAL_STACK
STARTUP_SECONDS = 30.0
DEMO_SPAN = timedelta(minutes=25)  # the demo's ticks span 21 minutes from its start


class LocalError(QueuewatchError):
    """The local stack cannot be started or stopped; says why."""


def state_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "queuewatch"


def pid_file() -> Path:
    return state_dir() / "local.pid"


def environment(port: int) -> dict[str, str]:
    """What the commands need to reach the local stack: its endpoint, throwaway keys, its region and name."""
    return {
        "AWS_ENDPOINT_URL": f"http://{HOST}:{port}",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "QUEUEWATCH_STACK": STACK,
    }


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/moto-api/", timeout=1):
            return True
    except (urllib.error.URLError, OSError):
        return False


def _running() -> int | None:
    """The pid of the local server if one is running."""
    try:
        pid = int(json.loads(pid_file().read_text())["pid"])
        os.kill(pid, 0)
    except (OSError, ValueError, KeyError):
        return None
    return pid


def register_stack(client: Callable[[str], object], rehearsal: bool = False) -> None:
    """A CloudFormation stack whose outputs are those of template.yaml that the commands read: the demo's
    tables, or the rehearsal's state table alone."""
    from queuewatch_cli.commands.demo.harness import DEMO_ENV, JOBS_TABLE, STATE_TABLE
    from queuewatch_cli.commands.demo.rehearsal import TABLE
    from queuewatch_cli.commands.demo.slo import SLO_TABLE

    outputs = {
        "StateTableName": {"Value": TABLE if rehearsal else STATE_TABLE},
        "MetricsNamespace": {"Value": DEMO_ENV["POWERTOOLS_METRICS_NAMESPACE"]},
    }
    if not rehearsal:
        outputs |= {
            "DashboardName": {"Value": DEMO_ENV["DASHBOARD_NAME"]},
            "JobsTableName": {"Value": JOBS_TABLE},
            "SloTableName": {"Value": SLO_TABLE},
        }
    template = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}, "Outputs": outputs}
    client("cloudformation").create_stack(StackName=STACK, TemplateBody=json.dumps(template))  # type: ignore[attr-defined]


def up(port: int, out: Callable[[str], None] = print, config: Path | None = None) -> int:
    if (pid := _running()) is not None:
        raise LocalError(f"a local stack is already running (pid {pid}); `queuewatch local down` stops it")
    env = environment(port)
    url = env["AWS_ENDPOINT_URL"]
    if _answers(url):
        raise LocalError(f"something already answers on {url}; pick another --port")
    state_dir().mkdir(parents=True, exist_ok=True)
    log = state_dir() / "local.log"
    with log.open("wb") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this command; `local down` stops it
        )
    pid_file().write_text(json.dumps({"pid": server.pid, "port": port}))
    deadline = time.monotonic() + STARTUP_SECONDS
    while not _answers(url):
        if server.poll() is not None or time.monotonic() > deadline:
            pid_file().unlink(missing_ok=True)
            raise LocalError(f"the moto server did not start on {url}; see {log}")
        time.sleep(0.2)
    if config is not None:
        code = _rehearse_into(url, config, out)
        played = f"the rehearsal of {config}"
    else:
        from queuewatch_cli.commands.demo.run import run_demo

        # The demo's 17 minutes end before now, so that status and history see them as past; then one fires.
        past = datetime.now(UTC).replace(second=0, microsecond=0) - DEMO_SPAN
        code = run_demo(out=lambda _line: None, endpoint_url=url, after=register_stack, start=past)
        played = "the demo's incident"
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    out(f"local stack {STACK} running at {url} (pid {server.pid}, in {pid_file()}), with {played}.")
    out("Point the commands at it in this shell:")
    out(f"  export {exports}")
    out("  queuewatch status; queuewatch history --since 2h; queuewatch silence list")
    out("Stop it with: queuewatch local down")
    return code


def _rehearse_into(url: str, config: Path, out: Callable[[str], None]) -> int:
    """`queuewatch demo --config`'s rehearsal, played into the server, with the stack registered on it."""
    import boto3

    from queuewatch_cli.commands.demo.rehearsal import rehearse

    env = {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
    with patch.dict(os.environ, {**env, "AWS_DEFAULT_REGION": "us-east-1"}):
        code = rehearse(config, out)
        register_stack(lambda service: boto3.client(service, region_name="us-east-1"), rehearsal=True)  # type: ignore[call-overload]
    return code


def _wait_gone(pid: int) -> None:
    """Until the server has exited, so that "stopped" is true when it is said."""
    try:
        os.waitpid(pid, 0)  # started by this very process (the tests): reap it
        return
    except ChildProcessError:
        pass
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        time.sleep(0.1)
    raise LocalError(f"the local server (pid {pid}) did not stop; stop it with kill {pid}")


def down(out: Callable[[str], None] = print) -> int:
    pid = _running()
    if pid is not None and not _answers(
        environment(int(json.loads(pid_file().read_text())["port"]))["AWS_ENDPOINT_URL"]
    ):
        pid = None  # a stale file: that pid is some other process now, never ours to stop
    if pid is None:
        pid_file().unlink(missing_ok=True)
        out("no local stack running")
        return 0
    os.killpg(pid, signal.SIGTERM)  # its own session: the server and nothing else
    _wait_gone(pid)
    pid_file().unlink(missing_ok=True)
    out(f"local stack stopped (pid {pid}); its state is gone")
    return 0


def add_arguments(local: argparse.ArgumentParser) -> None:
    actions = local.add_subparsers(dest="action", required=True)
    start = actions.add_parser("up", help="start a moto server on 127.0.0.1 with the demo's incident in it")
    start.add_argument("--port", type=int, default=DEFAULT_PORT)
    start.add_argument(
        "--config",
        type=Path,
        default=None,
        metavar="FILE",
        help="play the rehearsal of your config (queuewatch demo --config) into it instead of the demo's incident",
    )
    actions.add_parser("down", help="stop it")


def run_local(args: argparse.Namespace) -> int:
    return up(args.port, config=args.config) if args.action == "up" else down()
