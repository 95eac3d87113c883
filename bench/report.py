"""The benchmark's tables and the verdict on each target (issues 6 and 14)."""

from __future__ import annotations

from typing import Any, TextIO

from bench.functions import template_timeout_s
from bench.lambda_model import MODES, lambda_estimates, lambda_seconds
from queuewatch.adapters.aws.clients import TICK_MARGIN_SECONDS, worst_case_tail_seconds

RATIO_TARGET = 0.1  # with the yardstick's latency, a 1,000-runner-type tick takes at most 1/10 of the naive one's
RATIO_FLEET = "1000"
COLLECT_TARGET_S = 10.0  # the collector's Lambda time per tick at the promised maximum (issue 20)
COLLECT_TARGET_FLEET = "5000"
MEMORY_HEADROOM = 1.5  # MemorySize at least 1.5x the measured peak
CHECKED_CALLS = (
    "sqs.ListQueues",
    "sqs.GetQueueAttributes",
    "cloudwatch.GetMetricData",
    "cloudwatch.metrics_requested",
    "dynamodb.Query",
    "dynamodb.read_units",
    "dynamodb.writes",
    "sns.Publish",
)


class Printer:
    """Writes to the terminal the benchmark started with, whatever sys.stdout is later."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def line(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)


def imports(say: Printer, figures: dict[str, dict[str, float]]) -> None:
    base = figures["import boto3"]["ms"]
    say.line(f"  {'import':<18}{'CPU ms':>8}{'x boto3':>9}{'wall ms':>9}{'RSS MB':>8}")
    for name, row in figures.items():
        ratio = row["ms"] / base
        say.line(f"  {name:<18}{row['ms']:>8.0f}{ratio:>9.2f}{row['wall_ms']:>9.0f}{row['rss_mb']:>8.0f}")
    say.line("  (not judged: a function invoked every minute is almost always warm; see issue 14)")


def our_calls(figures: dict[str, Any]) -> dict[str, float]:
    """Our steady tick's calls, by the names the minimum uses."""
    ours = figures["ours"]
    calls: dict[str, float] = {}
    for stage in ("collect", "evaluate"):
        for name, count in ours[stage]["calls"].items():
            calls[name] = calls.get(name, 0) + count
    calls["dynamodb.writes"] = ours["writes"]
    calls["dynamodb.read_units"] = ours["state"]["read_units"] * calls.get("dynamodb.Query", 0)
    calls["cloudwatch.metrics_requested"] = ours["collect"]["metrics_requested"]
    return calls


def naive_calls(figures: dict[str, Any]) -> dict[str, float]:
    naive = figures["naive"]
    calls: dict[str, float] = dict(naive["calls"])
    calls["dynamodb.writes"] = naive["writes"]
    calls["cloudwatch.metrics_requested"] = naive["metrics_requested"]
    calls["dynamodb.read_units"] = calls.get("dynamodb.GetItem", 0)  # each consistent GetItem: at least 1
    return calls


def fleet(say: Printer, figures: dict[str, Any]) -> None:
    ours, naive, minimum = figures["ours"], figures["naive"], figures["minimum"]
    say.line(
        f"\n== {figures['runner_types']:,} runner types over {figures['regions']} regions: "
        f"{figures['queued']} with jobs waiting, {figures['firing']} firing; "
        f"median of {ours['steady_ticks']} steady ticks =="
    )
    head = f"  {'':<30}{'queuewatch':>12}{'minimum':>10}{'naive':>12}"
    say.line(head)
    naive_wall = f"{naive['wall_s']:.2f} s" if naive else "-"
    say.line(f"  {'wall time per tick':<30}{ours['tick_wall_s']:>10.2f} s{'':>10}{naive_wall:>12}")
    for stage in ("collect", "evaluate"):
        say.line(f"  {'  ' + stage:<30}{ours[stage]['wall_s']:>10.2f} s")
    cpu = ours["collect"]["cpu_s"] + ours["evaluate"]["cpu_s"]
    naive_cpu = f"{naive['cpu_s']:.2f} s" if naive else "-"
    say.line(f"  {'client CPU per tick':<30}{cpu:>10.2f} s{'':>10}{naive_cpu:>12}")
    server = ours["collect"]["server_cpu_s"] + ours["evaluate"]["server_cpu_s"]
    naive_server = f"{naive['server_cpu_s']:.2f} s" if naive else "-"
    say.line(f"  {'moto server CPU per tick':<30}{server:>10.2f} s{'':>10}{naive_server:>12}")
    say.line("  AWS calls per tick")
    mine = our_calls(figures)
    theirs = naive_calls(figures) if naive else {}
    names = list(CHECKED_CALLS) + sorted((set(mine) | set(theirs)) - set(CHECKED_CALLS))
    for name in names:
        floor = minimum.get(name)
        floor_text = f"{floor:,}" if floor is not None else "-"
        flag = "" if floor is None or mine.get(name, 0) == floor else "  <- over the minimum"
        other = f"{theirs.get(name, 0):,.0f}" if naive else "-"
        say.line(f"  {'  ' + name:<30}{mine.get(name, 0):>12,.0f}{floor_text:>10}{other:>12}{flag}")
    state = ours["state"]
    say.line(f"  {'state read':<30}{state['items']} items, {state['bytes']:,} bytes in one strongly consistent Query")
    snap = ours["snapshot"]
    say.line(
        f"  {'snapshot':<30}{snap['plain_bytes'] / 1024:,.1f} KiB as JSON; sent {snap['encoding']}: "
        f"{snap['sent_bytes'] / 1024:,.1f} KiB (destination record {snap['record_bytes'] / 1024:,.1f} KiB; "
        "Lambda's async limit 1 MB, ours 240 KiB)"
    )
    say.line(
        f"  {'log output per tick':<30}collect {ours['collect']['log_bytes']:,} B, evaluate "
        f"{ours['evaluate']['log_bytes']:,} B (EMF {ours['evaluate']['emf_bytes']:,} B)"
    )
    cold = ours["cold"]
    for stage in ("collect", "evaluate"):
        c = cold[stage]
        say.line(
            f"  {'cold ' + stage:<30}init {c['init_s']:.2f} s + tick {c['wall_s']:.2f} s, "
            f"peak RSS {c['peak_rss_mb']:.0f} MB"
        )
    say.line(f"  {'':<30}(the cold tick is the first: it paged {cold['pages_received']} time(s))")
    retries = sum(ours[s]["http_attempts"] - sum(ours[s]["calls"].values()) for s in ("collect", "evaluate"))
    say.line(
        f"  {'steady ticks':<30}outcome {', '.join(ours['outcomes'])}; {ours['writes']} writes, "
        f"{ours['publishes']} publishes, {ours['pages_received']} pages received; "
        f"{ours['degraded']} runner types degraded, {retries} retried calls"
    )
    estimates = lambda_estimates(figures)
    for mode in MODES:
        if mode in estimates:
            row = estimates[mode]
            say.line(
                f"  {'est. Lambda, ' + mode:<30}collect {row['collect']:.2f} s, evaluate {row['evaluate']:.2f} s "
                f"(from {row['collect_cpu_s']:.2f} s of collect CPU over kept-alive connections; "
                f"{row['collect_direct']:.2f} s from the 0 ms ticks' CPU)"
            )
    tracked = figures.get("tracked")
    if tracked:
        calls = tracked["collect"]["calls"]
        say.line(
            f"  {'tracking on, steady':<30}GetQueueAttributes {calls.get('sqs.GetQueueAttributes', 0):,} of "
            f"{figures['runner_types']:,} queues; outcome {', '.join(tracked['outcomes'])}; "
            f"{tracked['degraded']} degraded; first tick of the container ({tracked['first']['outcome']}) read "
            f"{tracked['first']['collect']['calls'].get('sqs.GetQueueAttributes', 0):,}"
        )
        for failure in tracked["steady_failures"]:
            say.line(f"  {'NOT STEADY':<30}{failure}")
    if ours["steady_failures"]:
        say.line(f"  {'NOT STEADY':<30}{'; '.join(ours['steady_failures'])}")
    latency(say, figures)


def latency(say: Printer, figures: dict[str, Any]) -> None:
    """The AWS-like yardstick: each call held for a round trip; our tick beside its floor and the naive one's."""
    lat = figures["latency"]
    ours, naive, shape = lat["ours"], lat["naive"], lat["rounds"]
    ms = f"{lat['ms']:g} ms"
    say.line(f"  with {ms} a call (latency proxy; median of {ours['steady_ticks']} ticks)")
    naive_text = f"{naive['wall_s']:.2f} s" if naive else "not run"
    say.line(
        f"  {'  wall time per tick':<30}{ours['tick_wall_s']:>10.2f} s (collect {ours['collect_wall_s']:.2f} s, "
        f"evaluate {ours['evaluate_wall_s']:.2f} s); naive {naive_text}"
    )
    say.line(
        f"  {'  floor':<30}{lat['floor_s']:>10.2f} s = {shape['total']} rounds x {ms}: listing {shape['listing']}, "
        f"ceil(Q/{shape['concurrency']}) = {shape['queue_reads']}, GetMetricData {shape['judged_metrics']} + "
        f"{shape['evidence_metrics']}, evaluate {shape['evaluate']}"
    )
    say.line(
        f"  {'  over the floor':<30}{ours['tick_wall_s'] - lat['floor_s']:>10.2f} s; in that tick moto's server "
        f"used {ours['server_cpu_s']:.2f} s CPU, the proxy {ours['proxy_cpu_s']:.2f} s, "
        f"the handlers {ours['cpu_s']:.2f} s"
    )
    if naive:
        say.line(f"  {'  naive: moto / proxy CPU':<30}{naive['server_cpu_s']:>10.2f} s / {naive['proxy_cpu_s']:.2f} s")
    direct = f"{figures['ratio']:.3f}" if figures.get("naive") else "-"
    proxied = f"{lat['ratio']:.3f}" if naive else "-"
    note = ""
    if naive and str(figures["runner_types"]) == RATIO_FLEET:
        note = f" ({'meets' if lat['ratio'] <= RATIO_TARGET else 'MISSES'} the 1/10 target at {ms})"
    say.line(f"  {'queuewatch / naive wall time':<30}0 ms: {direct}; {ms}: {proxied}{note}")


def time_to_page(say: Printer, figures: dict[str, Any]) -> None:
    """When the page goes out after a queue breaches, beside a CloudWatch alarm and a 5-minute cron."""
    say.line("\n== time to page (simulated timeline; minutes after the oldest job crossed the threshold) ==")
    for note in figures["assumptions"]:
        say.line(f"  {note}")
    head = f"  {'source':<34}{'lag':>6}{'visible':>9}{'queuewatch':>12}{'alarm 3/3':>11}{'cron 5m':>9}  verdict"
    say.line(head)
    for row in figures["rows"]:
        late = row["page_s"] - row["visible_s"] - row["pending_s"]
        verdict = "met" if row["met"] else "MISSED"
        say.line(
            f"  {row['source']:<34}{row['lag_s'] / 60:>5.1f}m{row['visible_s'] / 60:>8.1f}m{row['page_s'] / 60:>11.1f}m"
            f"{row['alarm_s'] / 60:>10.1f}m{row['cron_s'] / 60:>8.1f}m  {verdict}: {late:.0f} s after visible"
            + (f" + pending {row['pending_s'] / 60:g}m" if row["pending_s"] else "")
        )
    quiet = figures.get("dead_source")
    if quiet:
        say.line(
            f"  dead job source: quiet visible {quiet['visible_s'] / 60:.1f}m after the last event, monitor paged at "
            f"{quiet['page_s'] / 60:.1f}m ({'met' if quiet['met'] else 'MISSED'}: within its for "
            f"{quiet['for_s'] / 60:g}m and a tick)"
        )
    for missing in figures["not_measured"]:
        say.line(f"  {missing}")


def tick_budget_s(stage: str) -> float:
    """The Lambda time a tick may take before its deadline: its Timeout less the tail and the margin."""
    return template_timeout_s(stage) - worst_case_tail_seconds() - TICK_MARGIN_SECONDS


def stage_memory(figures: dict[str, Any], stage: str) -> int:
    return int(figures["memory_mb"][stage])


def targets(say: Printer, results: dict[str, Any]) -> dict[str, Any]:
    """Each target of issue 6, met or not, with the figure that decides it."""
    fleets = results["fleets"]
    verdicts: dict[str, Any] = {}
    over = {
        size: {
            n: (our_calls(f).get(n, 0), f["minimum"][n])
            for n in f["minimum"]
            if our_calls(f).get(n, 0) != f["minimum"][n]
        }
        for size, f in fleets.items()
    }
    extra = {
        size: sorted(
            n for n, count in our_calls(f).items() if count and n not in f["minimum"] and n != "dynamodb.read_units"
        )
        for size, f in fleets.items()
    }
    verdicts["calls_at_minimum"] = {
        "met": not any(over.values()) and not any(extra.values()),
        "over": {s: o for s, o in over.items() if o},
        "unexpected_calls": {s: e for s, e in extra.items() if e},
    }
    if RATIO_FLEET in fleets and fleets[RATIO_FLEET]["latency"].get("naive"):
        lat = fleets[RATIO_FLEET]["latency"]
        verdicts[f"ratio_1000_at_{lat['ms']:g}ms"] = {
            "met": lat["ratio"] <= RATIO_TARGET,
            "ratio": round(lat["ratio"], 4),
            "at_0ms": round(fleets[RATIO_FLEET]["ratio"], 4),
        }
    tracked_over = {
        s: f["tracked"]["over_minimum"] for s, f in fleets.items() if f.get("tracked", {}).get("over_minimum")
    }
    verdicts["calls_at_minimum"]["met"] = verdicts["calls_at_minimum"]["met"] and not tracked_over
    verdicts["calls_at_minimum"]["tracking_on_over"] = tracked_over
    failures = {
        s: f["ours"]["steady_failures"] + (f.get("tracked") or {}).get("steady_failures", []) for s, f in fleets.items()
    }
    verdicts["steady_writes_nothing"] = {
        "met": all(
            f["ours"]["writes"] == 0
            and f["ours"]["publishes"] == 0
            and f["ours"]["outcomes"] == ["unchanged"]
            and (not f.get("tracked") or f["tracked"]["outcomes"] == ["unchanged"])
            and not failures[s]
            for s, f in fleets.items()
        ),
        "failures": {s: found for s, found in failures.items() if found},
    }
    estimates = {s: lambda_estimates(f) for s, f in fleets.items()}
    budgets = {stage: tick_budget_s(stage) for stage in ("collect", "evaluate")}
    late = {
        f"{s} {mode} {stage}": round(row[stage], 2)
        for s, by_mode in estimates.items()
        for mode, row in by_mode.items()
        for stage in ("collect", "evaluate")
        if row[stage] > budgets[stage]
    }
    late.update(
        {
            f"{s} cold {stage}": round(seconds, 2)
            for s, f in fleets.items()
            for stage in ("collect", "evaluate")
            if (seconds := lambda_seconds(f["ours"]["cold"][stage], stage_memory(f, stage))) > budgets[stage]
        }
    )
    verdicts["ticks_within_deadline"] = {"met": not late, "budget_s": budgets, "over": late}
    target = estimates.get(COLLECT_TARGET_FLEET, {})
    # With tracking on every build queue is read: the tracked ticks' calls are at their floor, which counts one
    # GetQueueAttributes per queue (bench/fleet.py tracked_minimum_calls).
    every_queue = not any(
        "sqs.GetQueueAttributes" in wrong
        for f in fleets.values()
        for wrong in (f.get("tracked") or {}).get("over_minimum", {}).values()
    )
    verdicts["collector_at_most_10s_at_5000"] = {
        "met": all(row["collect"] <= COLLECT_TARGET_S for row in target.values()) and every_queue
        if len(target) == 2
        else None,
        "tracking_on_reads_every_queue": every_queue,
        "collect_s": {
            s: {mode: round(row["collect"], 2) for mode, row in by_mode.items()} for s, by_mode in estimates.items()
        },
    }
    if "time_to_page" in results:
        rows = results["time_to_page"]["rows"]
        verdicts["page_within_a_tick_of_visible"] = {
            "met": all(row["met"] for row in rows),
            "late_s": {row["source"]: row["page_s"] - row["visible_s"] - row["pending_s"] for row in rows},
        }
        blind = [row for row in rows if row["source"].startswith("tracking blind")]
        verdicts["blind_tracking_pages_within_a_tick"] = {
            "met": all(row["met"] for row in blind) if blind else None,
            "late_s": {row["source"]: row["page_s"] - row["visible_s"] for row in blind},
        }
        quiet = results["time_to_page"].get("dead_source")
        verdicts["dead_source_pages_within_its_for"] = {
            "met": quiet["met"] if quiet else None,
            "after_visible_s": quiet["page_s"] - quiet["visible_s"] if quiet else None,
        }
    ratios = {n: results["imports"][n]["ratio"] for n in ("collect handler", "evaluate handler")}
    verdicts["import_time"] = {  # retired as a target (issue 14): measured and printed, not judged
        "met": None,
        "ratios": ratios,
        "libraries_alone": results["imports"]["libraries alone"]["ratio"],
    }
    peaks = {
        stage: max(f["ours"]["cold"][stage]["peak_rss_mb"] for f in fleets.values())
        for stage in ("collect", "evaluate")
    }
    memory = results["memory_mb"]
    verdicts["memory_sized_from_peak"] = {
        "met": all(memory[s] >= MEMORY_HEADROOM * peaks[s] for s in peaks),
        "peak_rss_mb": peaks,
        "memory_mb": memory,
    }
    say.line("\n== targets ==")
    for name, verdict in verdicts.items():
        detail = {k: v for k, v in verdict.items() if k != "met" and v}
        if name == "steady_writes_nothing" and verdict["met"] is False:
            say.line("  !! STEADY TICKS NOT UNCHANGED: the run fails (see each fleet's NOT STEADY lines)")
        mark = {True: "met       ", False: "MISSED    ", None: "not judged"}[verdict["met"]]
        say.line(f"  {mark}  {name}  {detail if detail else ''}")
    return verdicts


def missed(verdicts: dict[str, Any]) -> list[str]:
    """The targets judged and not met: any of them fails the run."""
    return [name for name, verdict in verdicts.items() if verdict["met"] is False]
