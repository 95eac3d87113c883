"""One cold invocation in a fresh interpreter, as a new Lambda container runs it: time, calls, peak memory.

python -m bench.cold_tick collect|evaluate INPUT.json OUTPUT.json
INPUT holds the event; OUTPUT gets the figures and what the handler returned.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

START = time.perf_counter()


def main(stage: str, source: Path, target: Path) -> None:
    real_stdout = sys.stdout
    from bench.functions import Functions, peak_rss_mb

    functions = Functions(stages=(stage,))
    loaded = time.perf_counter() - START
    invocation = functions.invoke(stage, json.loads(source.read_text()))
    sys.stdout = real_stdout
    figures = {
        "init_s": loaded,
        "wall_s": invocation.wall_s,
        "cpu_s": invocation.cpu_s,
        "calls": dict(invocation.calls),
        "attempts": invocation.attempts,
        "metrics_requested": invocation.metrics_requested,
        "log": invocation.log,
        "peak_rss_mb": peak_rss_mb(),
        "result": invocation.result,
    }
    target.write_text(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))
