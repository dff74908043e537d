"""How long the clippings parser takes on a large library: 10,000 entries, about 3 MB.

Run it with `python -m bench.bench_parse`. The target on the project's 2-core machine is a
median of 0.3 s or less.
"""

from __future__ import annotations

import json
import statistics
import time

from bench.synthetic import make_clippings_file
from books.importing.clippings import parse_clippings

ENTRIES = 10_000
RUNS = 7
TARGET_SECONDS = 0.3


def run(*, entries: int = ENTRIES, runs: int = RUNS) -> dict[str, float | int | bool]:
    if runs < 1:
        raise ValueError("runs must be at least 1")
    data = make_clippings_file(entries)
    timings: list[float] = []
    cpu_timings: list[float] = []
    for _ in range(runs):
        started, cpu_started = time.perf_counter(), time.process_time()
        result = parse_clippings(data)
        timings.append(time.perf_counter() - started)
        cpu_timings.append(time.process_time() - cpu_started)
    # A benchmark that parses nothing would be fast and meaningless.
    if len(result.clippings) != entries or result.problems:
        raise RuntimeError(
            f"the synthetic file did not parse cleanly: {len(result.clippings)} clippings, "
            f"{len(result.problems)} problems"
        )
    median = statistics.median(timings)
    report: dict[str, float | int | bool] = {
        "entries": entries,
        "bytes": len(data),
        "runs": runs,
        "median_seconds": round(median, 4),
        "min_seconds": round(min(timings), 4),
        "max_seconds": round(max(timings), 4),
        # On a shared machine the wall clock also counts other processes' turns.
        "median_cpu_seconds": round(statistics.median(cpu_timings), 4),
        "target_seconds": TARGET_SECONDS,
        "within_target": median <= TARGET_SECONDS,
    }
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    run()
