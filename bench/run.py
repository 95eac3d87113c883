"""`make bench`: real collect and evaluate ticks against a moto server, per fleet size, beside a naive watcher.

python -m bench.run [--fleets 10,100,1000,5000] [--latency-ms 15] [--out bench/results.json]

Each fleet's steady ticks run twice: against moto directly (0 ms), and through a
latency proxy that adds --latency-ms to every call (the AWS-like yardstick); the
naive watcher likewise. Then the time-to-page timeline (bench/time_to_page.py).
Prints a table per fleet and the targets; exits 1 if one is missed. Writes every
figure to a JSON file, from which bench/cost.py makes docs/COST.md (full runs only).
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
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import moto

from bench import report
from bench.cost import COST_DOC
from bench.cost import render as render_cost
from bench.counting import CallLog, counting_session, writes
from bench.fleet import (
    HOME_REGION,
    JOBS_TABLE,
    NAIVE_TABLE,
    REGIONS,
    STATE_TABLE,
    T0,
    Fleet,
    drain_inbox,
    seed,
    seed_jobs,
    state_read_floor,
)
from bench.floor import rounds
from bench.functions import Functions, Invocation, template_memory_mb
from bench.imports import measure as measure_imports
from bench.imports import template_variables
from bench.latency_proxy import DEFAULT_LATENCY_MS, LatencyProxy, parse_api_latencies
from bench.motoserver import MotoServer
from bench.naive import NaiveWatcher
from queuewatch.collect import MAX_THREADS
from queuewatch.config.load import load_config
from queuewatch.runtime.wire import decode_snapshot
from queuewatch_cli.devkit.handlers import ACCOUNT_ID, REPO_ROOT, destination_record, scheduled_event

DEFAULT_FLEETS = (10, 100, 1000, 5000)
RESULTS = REPO_ROOT / "bench" / "results.json"
NAIVE_MAX = 1000  # above this the naive watcher takes minutes a tick; its ratio target is at 1,000


def steady_ticks(size: int) -> int:
    return 3 if size > 1000 else 5


def naive_ticks(size: int) -> int:
    return 2 if size >= 1000 else 3


PROXIED_TICKS = 3  # steady ticks through the proxy, after the direct ones: all within metric_lookback of T0


def steady_failures(label: str, outcome: str, writes_: int, publishes: int) -> list[str]:
    """Why a steady tick is not what a steady tick must be: unchanged, nothing written, nothing published."""
    wrong = []
    if outcome != "unchanged":
        wrong.append(f"outcome {outcome}")
    if writes_:
        wrong.append(f"{writes_} writes")
    if publishes:
        wrong.append(f"{publishes} publishes")
    return [f"{label}: {', '.join(wrong)}"] if wrong else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fleets", default=",".join(map(str, DEFAULT_FLEETS)))
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--latency-ms", type=float, default=DEFAULT_LATENCY_MS, help="per-call delay of the AWS-like yardstick"
    )
    parser.add_argument(
        "--api-latency-ms",
        action="append",
        default=[],
        metavar="OPERATION=MS",
        help="a delay for one API instead of --latency-ms, e.g. GetMetricData=25 (cite where the figure comes from)",
    )
    args = parser.parse_args(argv)
    if args.latency_ms <= 0:
        parser.error("--latency-ms must be above 0: the 0 ms figures are always measured")
    try:
        api_latency = parse_api_latencies(args.api_latency_ms)
    except ValueError as error:
        parser.error(str(error))
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
        "yardstick": {"latency_ms": args.latency_ms, "api_latency_ms": api_latency, "concurrency": MAX_THREADS},
        "fleets": {},
    }
    say.line("time to page: the real collect and evaluate on a simulated timeline (in-process moto) ...")
    results["time_to_page"] = _time_to_page()
    report.time_to_page(say, results["time_to_page"])
    with MotoServer() as server, tempfile.TemporaryDirectory(prefix="qw-bench-") as work:
        say.line(f"moto {moto.__version__} server on {server.endpoint} (pid {server.pid})")
        _environment(server.endpoint)
        functions = Functions()  # from here on, stdout is the functions' log sink
        for size in sizes:
            yardstick = Yardstick(server, args.latency_ms, api_latency)
            figures = run_fleet(Fleet(size), yardstick, functions, Path(work), say)
            results["fleets"][str(size)] = figures
            report.fleet(say, figures)
    results["elapsed_s"] = time.perf_counter() - started
    results["targets"] = report.targets(say, results)
    out_path.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    say.line(f"\nfigures written to {out_path.relative_to(REPO_ROOT)}; whole run {results['elapsed_s']:.0f}s")
    if out_path == RESULTS:
        COST_DOC.write_text(render_cost(results), encoding="utf-8")
        say.line(f"{COST_DOC.relative_to(REPO_ROOT)} regenerated from them")
    missed = report.missed(results["targets"])
    if missed:
        say.line(f"MISSED: {', '.join(missed)}")
        return 1
    return 0


class Yardstick:
    """Where the ticks send their calls: moto directly, or through the latency proxy; and the CPU it all costs."""

    def __init__(self, server: MotoServer, latency_ms: float, api_latency_ms: dict[str, float]) -> None:
        self.server = server
        self.latency_ms = latency_ms
        self.api_latency_ms = api_latency_ms
        self.proxy: LatencyProxy | None = None

    def server_cpu(self) -> float:
        return self.server.cpu_seconds()

    def proxy_cpu(self) -> float:
        return self.proxy.cpu_seconds() if self.proxy else 0.0


def _time_to_page() -> dict[str, Any]:
    """In its own interpreter: mock_aws there, and no AWS_ENDPOINT_URL, so nothing reaches the moto server."""
    with tempfile.TemporaryDirectory(prefix="qw-ttp-") as work:
        out = Path(work) / "time_to_page.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "QUEUEWATCH_", "POWERTOOLS_"))}
        subprocess.run(
            [sys.executable, "-m", "bench.time_to_page", "--json", str(out)],
            cwd=REPO_ROOT,
            env=env,
            check=True,
            timeout=900,
            stdout=subprocess.DEVNULL,
        )
        return json.loads(out.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


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
    fleet: Fleet, yardstick: Yardstick, functions: Functions, work: Path, say: report.Printer
) -> dict[str, Any]:
    server = yardstick.server
    say.line(f"\nfleet of {fleet.size:,}: seeding moto ...")
    server.reset()
    functions.new_evaluator_container()  # a new deployment: its timeline starts at T0 again
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
    direct = steady_ticks(fleet.size)
    say.line(f"  cold tick paged {cold_pages}; {direct} steady ticks at 0 ms ...")

    ticks = [_tick(functions, yardstick, T0 + timedelta(minutes=n)) for n in range(1, direct + 1)]
    say.line(f"  {PROXIED_TICKS} steady ticks at {yardstick.latency_ms:g} ms a call ...")
    with _proxied(yardstick, functions):
        proxied = [_tick(functions, yardstick, T0 + timedelta(minutes=direct + n)) for n in range(1, PROXIED_TICKS + 1)]
    steady_pages = drain_inbox(seeded.inbox_url)
    state = state_read_floor(STATE_TABLE)
    failures = [
        failure
        for n, tick in enumerate(ticks + proxied, start=1)
        for failure in steady_failures(
            f"steady tick {n} ({'0 ms' if n <= direct else f'{yardstick.latency_ms:g} ms'})",
            tick["evaluate"].result["outcome"],
            writes(tick["collect"].calls + tick["evaluate"].calls),
            tick["evaluate"].calls["sns.Publish"],
        )
    ]
    for failure in failures:
        say.line(f"  !! {failure}: a steady tick must be unchanged and write nothing")
    shape = rounds(fleet.tick_shape(), MAX_THREADS)

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
            "outcomes": sorted({t["evaluate"].result["outcome"] for t in ticks + proxied}),
            "degraded": max(len(t["evaluate"].result["degraded"]) for t in ticks),
            "writes": max(writes(t["collect"].calls + t["evaluate"].calls) for t in ticks + proxied),
            "publishes": max(t["evaluate"].calls["sns.Publish"] for t in ticks + proxied),
            "pages_received": steady_pages,
            "steady_failures": failures,
            "state": state,
            "snapshot": ticks[-1]["snapshot"],
            "cold": {**cold, "pages_received": cold_pages},
        },
        "naive": None,
        "latency": {
            "ms": yardstick.latency_ms,
            "rounds": {**shape.__dict__, "total": shape.total, "concurrency": MAX_THREADS},
            "floor_s": shape.floor_s(yardstick.latency_ms / 1000),
            "ours": {
                **_proxied_figures(proxied),
                "collect_cpu_s": statistics.median(t["collect"].cpu_s for t in proxied),
            },
            "naive": None,
        },
    }
    if fleet.size <= NAIVE_MAX:
        say.line(f"  naive watcher, {naive_ticks(fleet.size)} ticks at 0 ms ...")
        figures["naive"] = _naive(fleet, config_path, seeded.topic_arn, yardstick, first_minute=0)
        figures["ratio"] = figures["ours"]["tick_wall_s"] / figures["naive"]["wall_s"]
        say.line(f"  naive watcher, {naive_ticks(fleet.size)} ticks at {yardstick.latency_ms:g} ms a call ...")
        with _proxied(yardstick, functions):
            naive = _naive(fleet, config_path, seeded.topic_arn, yardstick, first_minute=naive_ticks(fleet.size))
        figures["latency"]["naive"] = naive
        figures["latency"]["ratio"] = figures["latency"]["ours"]["tick_wall_s"] / naive["wall_s"]
    figures["tracked"] = run_tracked(fleet, yardstick, functions, say, first_minute=direct + PROXIED_TICKS + 1)
    return figures


def run_tracked(
    fleet: Fleet, yardstick: Yardstick, functions: Functions, say: report.Printer, first_minute: int
) -> dict[str, Any]:
    """The same fleet with tracking on, the jobs judged (queue_source: jobs): every tick reads every queue
    beside the jobs, the first tick as the steady ones."""
    at = T0 + timedelta(minutes=first_minute)
    seed_jobs(fleet, at)
    os.environ["JOBS_TABLE"] = JOBS_TABLE
    try:
        first = _tick(functions, yardstick, at)
        direct = steady_ticks(fleet.size)
        say.line(f"  tracking on: first tick {first['evaluate'].result['outcome']}; {direct} steady ticks at 0 ms ...")
        minutes = [at + timedelta(minutes=n) for n in range(1, direct + PROXIED_TICKS + 1)]
        ticks = [_tick(functions, yardstick, when) for when in minutes[:direct]]
        say.line(f"  tracking on: {PROXIED_TICKS} steady ticks at {yardstick.latency_ms:g} ms a call ...")
        with _proxied(yardstick, functions):
            proxied = [_tick(functions, yardstick, when) for when in minutes[direct:]]
    finally:
        os.environ.pop("JOBS_TABLE", None)
    failures = [
        failure
        for n, tick in enumerate(ticks + proxied, start=1)
        for failure in steady_failures(
            f"tracking on, steady tick {n}",
            tick["evaluate"].result["outcome"],
            writes(tick["collect"].calls + tick["evaluate"].calls),
            tick["evaluate"].calls["sns.Publish"],
        )
    ]
    for failure in failures:
        say.line(f"  !! {failure}: a steady tick must be unchanged and write nothing")
    over = {}
    for when, tick in zip(minutes, ticks + proxied, strict=True):
        floor = fleet.tracked_minimum_calls(when)
        calls = dict(tick["collect"].calls)
        for name, count in tick["evaluate"].calls.items():
            calls[name] = calls.get(name, 0) + count
        calls["cloudwatch.metrics_requested"] = tick["collect"].metrics_requested
        calls["dynamodb.writes"] = writes(tick["collect"].calls + tick["evaluate"].calls)
        wrong = {name: (calls.get(name, 0), want) for name, want in floor.items() if calls.get(name, 0) != want}
        wrong.update({name: (n, 0) for name, n in calls.items() if n and name not in floor})
        if wrong:
            over[when.strftime("%H:%M")] = wrong
    return {
        "steady_ticks": len(ticks),
        "first": {
            "collect": {
                "cpu_s": first["collect"].cpu_s,
                "wall_s": first["collect"].wall_s,
                "calls": dict(first["collect"].calls),
            },
            "outcome": first["evaluate"].result["outcome"],
        },
        "collect": _median_stage(ticks, "collect"),
        "evaluate": _median_stage(ticks, "evaluate"),
        "latency": _proxied_figures(proxied),
        "outcomes": sorted({t["evaluate"].result["outcome"] for t in ticks + proxied}),
        "degraded": max(len(t["evaluate"].result["degraded"]) for t in ticks + proxied),
        "steady_failures": failures,
        "over_minimum": over,
    }


@contextmanager
def _proxied(yardstick: Yardstick, functions: Functions) -> Iterator[None]:
    """Every client made inside goes through a fresh latency proxy; afterwards, straight to moto again."""
    with LatencyProxy(yardstick.server.endpoint, yardstick.latency_ms, yardstick.api_latency_ms) as proxy:
        yardstick.proxy = proxy
        os.environ["AWS_ENDPOINT_URL"] = proxy.endpoint
        functions.connect()
        try:
            yield
        finally:
            os.environ["AWS_ENDPOINT_URL"] = yardstick.server.endpoint
            functions.connect()
            yardstick.proxy = None


def _proxied_figures(ticks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "steady_ticks": len(ticks),
        "tick_wall_s": statistics.median(t["collect"].wall_s + t["evaluate"].wall_s for t in ticks),
        "collect_wall_s": statistics.median(t["collect"].wall_s for t in ticks),
        "evaluate_wall_s": statistics.median(t["evaluate"].wall_s for t in ticks),
        "cpu_s": statistics.median(t["collect"].cpu_s + t["evaluate"].cpu_s for t in ticks),
        "collect_cpu_s": statistics.median(t["collect"].cpu_s for t in ticks),
        "evaluate_cpu_s": statistics.median(t["evaluate"].cpu_s for t in ticks),
        "collect_calls": dict(ticks[-1]["collect"].calls),
        "evaluate_calls": dict(ticks[-1]["evaluate"].calls),
        "server_cpu_s": statistics.median(t["collect"].server_cpu_s + t["evaluate"].server_cpu_s for t in ticks),
        "proxy_cpu_s": statistics.median(t["proxy_cpu_s"] for t in ticks),
        "http_attempts": int(statistics.median(t["collect"].attempts + t["evaluate"].attempts for t in ticks)),
    }


def _tick(functions: Functions, yardstick: Yardstick, at: Any) -> dict[str, Any]:
    event = scheduled_event(at)
    proxy_before = yardstick.proxy_cpu()
    before = yardstick.server_cpu()
    collected = functions.invoke("collect", event)
    collected.server_cpu_s = yardstick.server_cpu() - before
    record = destination_record(event, collected.result, at=at + timedelta(seconds=2))
    before = yardstick.server_cpu()
    evaluated = functions.invoke("evaluate", record)
    evaluated.server_cpu_s = yardstick.server_cpu() - before
    snapshot = decode_snapshot(collected.result)
    return {
        "collect": collected,
        "evaluate": evaluated,
        "proxy_cpu_s": yardstick.proxy_cpu() - proxy_before,
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


def _naive(fleet: Fleet, config_path: Path, topic_arn: str, yardstick: Yardstick, first_minute: int) -> dict[str, Any]:
    log = CallLog()
    watcher = NaiveWatcher(load_config(config_path), counting_session(log), NAIVE_TABLE, topic_arn, HOME_REGION)
    runs: list[dict[str, Any]] = []
    for n in range(first_minute, first_minute + naive_ticks(fleet.size)):
        log.take()
        wall, cpu, server_cpu = time.perf_counter(), time.process_time(), yardstick.server_cpu()
        proxy_cpu = yardstick.proxy_cpu()
        pages = watcher.tick(T0 + timedelta(minutes=n), ACCOUNT_ID)
        runs.append(
            {
                "wall_s": time.perf_counter() - wall,
                "cpu_s": time.process_time() - cpu,
                "server_cpu_s": yardstick.server_cpu() - server_cpu,
                "proxy_cpu_s": yardstick.proxy_cpu() - proxy_cpu,
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
        "proxy_cpu_s": statistics.median(r["proxy_cpu_s"] for r in runs),
        "calls": dict(sorted(calls.items())),
        "metrics_requested": runs[-1]["metrics_requested"],
        "writes": writes(calls),
        "pages_first_tick": runs[0]["pages"],
    }


if __name__ == "__main__":
    sys.exit(main())
