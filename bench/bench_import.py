"""Importing a large clippings file: 10,000 entries into an empty library, then again.

`python -m bench.bench_import`. Aims on the 2-core machine: import ≤ 2 s, re-import of the
same file (which adds nothing) ≤ 1 s. Runs in a throw-away database; the embedding tasks
the import enqueues go to an in-memory broker that nothing consumes.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from bench.db import bench_database, setup_django
from bench.synthetic import make_clippings_file

ENTRIES = 10_000
RUNS = 5


def run(*, entries: int = ENTRIES, runs: int = RUNS) -> dict[str, Any]:
    setup_django()
    from accounts.models import User
    from books.importing.services import clippings_import
    from books.models import Highlight
    from exogram.celery import app

    app.conf.update(broker_url="memory://")
    data = make_clippings_file(entries)
    first: list[float] = []
    again: list[float] = []
    # This process's CPU seconds too: on a shared machine the wall clock counts waiting.
    first_cpu: list[float] = []
    with bench_database("exogram_bench_import"):
        for attempt in range(runs):
            reader = User.objects.create_user(f"bench-{attempt}")
            started, cpu = time.perf_counter(), time.process_time()
            the_import = clippings_import(reader=reader, data=data, file_name="bench.txt")
            first.append(time.perf_counter() - started)
            first_cpu.append(time.process_time() - cpu)
            started = time.perf_counter()
            repeat = clippings_import(reader=reader, data=data, file_name="bench.txt")
            again.append(time.perf_counter() - started)
            if repeat.counts["new_highlights"] != 0:
                raise RuntimeError("the re-import added highlights: it is not idempotent")
        highlights = Highlight.objects.filter(reader=reader).count()
    report = {
        "entries": entries,
        "bytes": len(data),
        "highlights_stored": highlights,
        "new_highlights": the_import.counts["new_highlights"],
        "runs": runs,
        "import_median_seconds": round(statistics.median(first), 3),
        "import_min_seconds": round(min(first), 3),
        "import_median_python_cpu_seconds": round(statistics.median(first_cpu), 3),
        "reimport_median_seconds": round(statistics.median(again), 3),
        "reimport_min_seconds": round(min(again), 3),
        "import_target_seconds": 2.0,
        "reimport_target_seconds": 1.0,
    }
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    run()
