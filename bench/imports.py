"""Cold-start import time of each handler module against a bare `import boto3`, in fresh interpreters.

Each figure is the median of several runs, interleaved so that machine noise falls on all alike.
Bytecode is compiled once beforehand into a private cache, as a deployment package ships it.
The ratio is of CPU time, which other processes on a shared machine inflate far less than wall
time (an import is CPU-bound once the files are cached); wall time is recorded beside it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from queuewatch_cli.devkit.handlers import REPO_ROOT

RUNS = 7
# VmHWM: the peak RSS of this program (getrusage's ru_maxrss would carry the parent's over fork and exec).
PROBE = (
    "import time; _t, _c = time.perf_counter(), time.process_time(); {statement}\n"
    "_ms, _cpu_ms = (time.perf_counter() - _t) * 1000, (time.process_time() - _c) * 1000\n"
    "import json, pathlib\n"
    "_kb = next(int(l.split()[1]) for l in pathlib.Path('/proc/self/status').read_text().splitlines()"
    " if l.startswith('VmHWM:'))\n"
    "print(json.dumps({{'wall_ms': _ms, 'ms': _cpu_ms, 'rss_kb': _kb}}))"
)
# What every handler imports before any queuewatch code: boto3, and the Powertools Logger and Parser
# (pydantic) that the handlers are built on. Its ratio to boto3 is the floor of theirs.
LIBRARIES = (
    "import boto3; from aws_lambda_powertools import Logger; "
    "from aws_lambda_powertools.utilities.parser import BaseModel, event_parser"
)
SUBJECTS = {
    "import boto3": ("import boto3", REPO_ROOT),
    "libraries alone": (LIBRARIES, REPO_ROOT),
    "collect handler": ("import app", REPO_ROOT / "functions" / "collect"),
    "evaluate handler": ("import app", REPO_ROOT / "functions" / "evaluate"),
}


def lambda_environment(pycache: str) -> dict[str, str]:
    """The variables template.yaml sets that change what an import does, and no bytecode suppression."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPYCACHEPREFIX=pycache, AWS_REGION="us-east-1", AWS_DEFAULT_REGION="us-east-1")
    env.update(template_variables())  # the Powertools settings among them
    return env


def template_variables() -> dict[str, str]:
    """Plain `NAME: value` pairs of the template's Globals environment (values without intrinsics)."""
    text = (REPO_ROOT / "template.yaml").read_text(encoding="utf-8")
    block = text.split("      Variables:\n", 1)[1].split("\n\n", 1)[0]
    out: dict[str, str] = {}
    for line in block.splitlines():
        name, _, value = line.strip().partition(": ")
        if name.isupper() and value and not value.startswith("!"):
            out[name] = value.strip("\"'")
    return out


def _probe(statement: str, cwd: Path, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(statement=statement)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def measure(runs: int = RUNS) -> dict[str, dict[str, float]]:
    """Median import CPU and wall milliseconds and peak RSS (MB) per subject, and each handler's CPU ratio to boto3."""
    with tempfile.TemporaryDirectory(prefix="qw-pycache-") as pycache:
        env = lambda_environment(pycache)
        for statement, cwd in SUBJECTS.values():
            _probe(statement, cwd, env)  # compile the bytecode, warm the file cache
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in SUBJECTS}
        for _ in range(runs):
            for name, (statement, cwd) in SUBJECTS.items():
                samples[name].append(_probe(statement, cwd, env))
    out = {
        name: {
            "ms": statistics.median(s["ms"] for s in runs_of),
            "wall_ms": statistics.median(s["wall_ms"] for s in runs_of),
            "rss_mb": statistics.median(s["rss_kb"] for s in runs_of) / 1024,
        }
        for name, runs_of in samples.items()
    }
    base = out["import boto3"]["ms"]
    for name in ("libraries alone", "collect handler", "evaluate handler"):
        out[name]["ratio"] = out[name]["ms"] / base
    return out
