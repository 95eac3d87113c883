"""`make bench`: real collect and evaluate ticks against a moto server, per fleet size, beside a naive watcher.

python -m bench.run [--fleets 10,100,1000,5000] [--out bench/results.json]

Prints a table per fleet and the targets of issue 6; writes every figure to a JSON
file, from which bench/cost.py makes docs/COST.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import moto

from bench import report
from bench.cost import COST_DOC
from bench.cost import render as render_cost
from bench.counting import CallLog, counting_session, writes
from bench.fleet import HOME_REGION, NAIVE_TABLE, REGIONS, STATE_TABLE, T0, Fleet, drain_inbox, seed, state_read_floor
from bench.functions import Functions, Invocation, template_memory_mb
from bench.imports import measure as measure_imports
from bench.imports import template_variables
from bench.motoserver import MotoServer
from bench.naive import NaiveWatcher
from queuewatch.config.load import load_config
from queuewatch.wire import decode_snapshot
from queuewatch_cli.localrun import ACCOUNT_ID, REPO_ROOT, destination_record, scheduled_event

DEFAULT_FLEETS = (10, 100, 1000, 5000)
RESULTS = REPO_ROOT / "bench" / "results.json"
NAIVE_MAX = 1000  # above this the naive watcher takes minutes a tick; its ratio target is at 1,000


def steady_ticks(size: int) -> int:
    return 3 if size > 1000 else 5


def naive_ticks(size: int) -> int:
    return 2 if size >= 1000 else 3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fleets", default=",".join(map(str, DEFAULT_FLEETS)))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    sizes = [int(n.replace("_", "")) for n in args.fleets.split(",") if n.strip()]
    out_path = args.out or (
        RESULTS if tuple(sizes) == DEFAULT_FLEETS else RESULTS.with_name(f"results.{'-'.join(map(str, sizes))}.json")
    )
    say = report.Printer(sys.stdout)
    started = time.perf_counter()
    say.line(f"queuewatch benchmark: fleets {', '.join(f'{n:,}' for n in sizes)} over {len(REGIONS)} regions")
    say.line("cold-start imports, fresh interpreters (median of 7, interleaved) ...")
    imports = measure_imports()
    report.imports(say, imports)
    results: dict[str, Any] = {
        "moto": moto.__version__,
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "memory_mb": {stage: template_memory_mb(stage) for stage in ("collect", "evaluate")},
        "imports": imports,
        "fleets": {},
    }
    with MotoServer() as server, tempfile.TemporaryDirectory(prefix="qw-bench-") as work:
        say.line(f"moto {moto.__version__} server on {server.endpoint} (pid {server.pid})")
        _environment(server.endpoint)
        functions = Functions()  # from here on, stdout is the functions' log sink
        for size in sizes:
            figures = run_fleet(Fleet(size), server, functions, Path(work), say)
            results["fleets"][str(size)] = figures
            report.fleet(say, figures)
    results["elapsed_s"] = time.perf_counter() - started
    results["targets"] = report.targets(say, results)
    out_path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    say.line(f"\nfigures written to {out_path.relative_to(REPO_ROOT)}; whole run {results['elapsed_s']:.0f}s")
    if out_path == RESULTS:
        COST_DOC.write_text(render_cost(results), encoding="utf-8")
        say.line(f"{COST_DOC.relative_to(REPO_ROOT)} regenerated from them")
    return 0


def _environment(endpoint: str) -> None:
    os.environ.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION=HOME_REGION,
        AWS_DEFAULT_REGION=HOME_REGION,
        STATE_TABLE=STATE_TABLE,
        STACK_NAME="queuewatch-bench",
        POWERTOOLS_SERVICE_NAME="queuewatch",
        POWERTOOLS_METRICS_NAMESPACE="Queuewatch",
        POWERTOOLS_LOG_LEVEL="INFO",
    )
    os.environ.update(template_variables())
    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "POWERTOOLS_METRICS_DISABLED"):
        os.environ.pop(key, None)


def run_fleet(
    fleet: Fleet, server: MotoServer, functions: Functions, work: Path, say: report.Printer
) -> dict[str, Any]:
    say.line(f"\nfleet of {fleet.size:,}: seeding moto ...")
    server.reset()
    seeded_at = time.perf_counter()
    seeded = seed(fleet)
    config_path = work / f"fleet-{fleet.size}.yaml"
    config_path.write_text(fleet.config_text(), encoding="utf-8")
    os.environ.update(QUEUEWATCH_CONFIG=str(config_path), ALERT_TOPIC_ARN=seeded.topic_arn)
    say.line(f"  seeded in {time.perf_counter() - seeded_at:.0f}s; cold tick in fresh interpreters ...")

    cold = _cold_tick(work, server)
    cold_pages = drain_inbox(seeded.inbox_url)
    if len(cold["evaluate"]["firing"]) != fleet.count("firing"):
        raise RuntimeError(f"the fleet should fire {fleet.count('firing')}, fired {cold['evaluate']['firing']}")
    say.line(f"  cold tick paged {cold_pages}; {steady_ticks(fleet.size)} steady ticks ...")

    ticks = []
    for n in range(1, steady_ticks(fleet.size) + 1):
        ticks.append(_tick(functions, server, T0 + timedelta(minutes=n)))
    steady_pages = drain_inbox(seeded.inbox_url)
    state = state_read_floor(STATE_TABLE)

    figures: dict[str, Any] = {
        "runner_types": fleet.size,
        "regions": len(REGIONS),
        "memory_mb": {stage: template_memory_mb(stage) for stage in ("collect", "evaluate")},
        "queued": fleet.count("queued"),
        "firing": fleet.count("firing"),
        "minimum": {**fleet.minimum_calls(), "dynamodb.read_units": state["read_units"]},
        "ours": {
            "steady_ticks": len(ticks),
            "collect": _median_stage(ticks, "collect"),
            "evaluate": _median_stage(ticks, "evaluate"),
            "tick_wall_s": statistics.median(t["collect"].wall_s + t["evaluate"].wall_s for t in ticks),
            "outcomes": sorted({t["evaluate"].result["outcome"] for t in ticks}),
            "degraded": max(len(t["evaluate"].result["degraded"]) for t in ticks),
            "writes": max(writes(t["collect"].calls + t["evaluate"].calls) for t in ticks),
            "publishes": max(t["evaluate"].calls["sns.Publish"] for t in ticks),
            "pages_received": steady_pages,
            "state": state,
            "snapshot": ticks[-1]["snapshot"],
            "cold": {**cold, "pages_received": cold_pages},
        },
        "naive": None,
    }
    if fleet.size <= NAIVE_MAX:
        say.line(f"  naive watcher, {naive_ticks(fleet.size)} ticks ...")
        figures["naive"] = _naive(fleet, config_path, seeded.topic_arn, server)
        figures["ratio"] = figures["ours"]["tick_wall_s"] / figures["naive"]["wall_s"]
    return figures


def _tick(functions: Functions, server: MotoServer, at: Any) -> dict[str, Any]:
    event = scheduled_event(at)
    before = server.cpu_seconds()
    collected = functions.invoke("collect", event)
    collected.server_cpu_s = server.cpu_seconds() - before
    record = destination_record(event, collected.result, at=at + timedelta(seconds=2))
    before = server.cpu_seconds()
    evaluated = functions.invoke("evaluate", record)
    evaluated.server_cpu_s = server.cpu_seconds() - before
    snapshot = decode_snapshot(collected.result)
    return {
        "collect": collected,
        "evaluate": evaluated,
        "snapshot": {
            "encoding": collected.result.get("encoding", "plain"),
            "plain_bytes": len(json.dumps(snapshot.model_dump(mode="json", exclude_none=True))),
            "sent_bytes": len(json.dumps(collected.result)),
            "record_bytes": len(json.dumps(record)),
        },
    }


def _median_stage(ticks: list[dict[str, Any]], stage: str) -> dict[str, Any]:
    runs: list[Invocation] = [t[stage] for t in ticks]
    calls: Counter[str] = Counter()
    for name in {name for run in runs for name in run.calls}:
        calls[name] = int(statistics.median(run.calls[name] for run in runs))
    return {
        "wall_s": statistics.median(r.wall_s for r in runs),
        "cpu_s": statistics.median(r.cpu_s for r in runs),
        "server_cpu_s": statistics.median(r.server_cpu_s for r in runs),
        "calls": dict(sorted(calls.items())),
        "http_attempts": int(statistics.median(r.attempts for r in runs)),
        "metrics_requested": int(statistics.median(r.metrics_requested for r in runs)),
        "log_bytes": int(statistics.median(r.log["bytes"] for r in runs)),
        "emf_bytes": int(statistics.median(r.log["emf_bytes"] for r in runs)),
    }


def _cold_tick(work: Path, server: MotoServer) -> dict[str, Any]:
    """Tick 0 (the one that pages) in fresh interpreters: a new container's init, time and peak memory."""
    event = scheduled_event(T0)
    out: dict[str, Any] = {}
    for stage in ("collect", "evaluate"):
        if stage == "collect":
            payload = event
        else:
            payload = destination_record(event, out["collect"].pop("result"), at=T0 + timedelta(seconds=2))
        source, target = work / f"{stage}-in.json", work / f"{stage}-out.json"
        source.write_text(json.dumps(payload))
        before = server.cpu_seconds()
        subprocess.run(
            [sys.executable, "-m", "bench.cold_tick", stage, str(source), str(target)],
            cwd=REPO_ROOT,
            check=True,
            timeout=600,
        )
        out[stage] = json.loads(target.read_text())
        out[stage]["server_cpu_s"] = server.cpu_seconds() - before
    result = out["evaluate"].pop("result")
    out["evaluate"]["outcome"] = result["outcome"]
    out["evaluate"]["firing"] = result["firing"]
    return out


def _naive(fleet: Fleet, config_path: Path, topic_arn: str, server: MotoServer) -> dict[str, Any]:
    log = CallLog()
    watcher = NaiveWatcher(load_config(config_path), counting_session(log), NAIVE_TABLE, topic_arn, HOME_REGION)
    runs: list[dict[str, Any]] = []
    for n in range(naive_ticks(fleet.size)):
        log.take()
        wall, cpu, server_cpu = time.perf_counter(), time.process_time(), server.cpu_seconds()
        pages = watcher.tick(T0 + timedelta(minutes=n), ACCOUNT_ID)
        runs.append(
            {
                "wall_s": time.perf_counter() - wall,
                "cpu_s": time.process_time() - cpu,
                "server_cpu_s": server.cpu_seconds() - server_cpu,
                **dict(zip(("calls", "attempts", "metrics_requested"), log.take(), strict=True)),
                "pages": pages,
            }
        )
    calls = runs[-1]["calls"]
    return {
        "ticks": len(runs),
        "wall_s": statistics.median(r["wall_s"] for r in runs),
        "cpu_s": statistics.median(r["cpu_s"] for r in runs),
        "server_cpu_s": statistics.median(r["server_cpu_s"] for r in runs),
        "calls": dict(sorted(calls.items())),
        "metrics_requested": runs[-1]["metrics_requested"],
        "writes": writes(calls),
        "pages_first_tick": runs[0]["pages"],
    }


if __name__ == "__main__":
    sys.exit(main())
