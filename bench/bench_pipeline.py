"""The whole pipeline: import 10,000 clippings, then wait until a real worker has embedded
(and connected) every highlight. Prints the wall time and the worker's peak memory.

The worker runs as `make run` runs it: one process per core, each with the configured
ONNX Runtime threads (EXOGRAM_EMBEDDING_THREADS) and model (EXOGRAM_EMBEDDING_MODEL).
`python -m bench.bench_pipeline [--entries N] [--workers N]`; besides the wall time, the
worker's and its database backends' CPU seconds over the same span (the figures to compare
on a shared machine; a backend's last half second before it closes can be missed). Aims
on the 2-core machine: with multilingual-e5-small (the default) ≤ 150 s and peak RSS of a
worker process ≤ 450 MB; with minilm-l6 ≤ 90 s and ≤ 400 MB. A throw-away database and a
file broker in a temporary folder: the developer's data and queue are never touched.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.db import bench_database, setup_django
from bench.synthetic import make_clippings_file
from books.embedding.profiles import E5, MINILM

ENTRIES = 10_000
# model -> (seconds, peak RSS MB of a worker process)
TARGETS = {E5.choice: (150, 450), MINILM.choice: (90, 400)}


def _cpu(process: psutil.Process, seen: dict[int, float]) -> None:
    """Record the CPU seconds (user + system) so far of the worker and each of its
    processes, by pid: a pool process that exits keeps its last reading."""
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = p.cpu_times()
            seen[p.pid] = max(seen.get(p.pid, 0.0), times.user + times.system)


def _database_cpu(seen: dict[int, float]) -> None:
    """The same for the PostgreSQL backends serving this database (the worker's neighbour
    queries run there), read from /proc: nothing when the server is on another machine."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        pids = [int(row[0]) for row in cursor.fetchall()]
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            seen[pid] = max(seen.get(pid, 0.0), times.user + times.system)


def _rss(process: psutil.Process) -> tuple[int, int]:
    """(largest, total) resident memory of the worker's processes."""
    sizes = [0]
    for p in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            sizes.append(p.memory_info().rss)
    return max(sizes), sum(sizes)


def run(
    *, entries: int = ENTRIES, workers: int | None = None, timeout: float = 900
) -> dict[str, Any]:
    workers = workers or os.cpu_count() or 1
    setup_django()
    from django.conf import settings

    from accounts.models import User
    from books.importing.services import clippings_import
    from books.models import Connection, Highlight
    from tests.worker import celery_worker

    data = make_clippings_file(entries)
    with bench_database("exogram_bench_pipeline"), tempfile.TemporaryDirectory() as folder:
        reader = User.objects.create_user("pipeline")
        with celery_worker(
            broker_url="filesystem://", data_dir=Path(folder), concurrency=workers
        ) as worker:
            process = psutil.Process(worker.pid)
            # Let the worker load Django and the model before the clock starts, as a
            # running deployment would have.
            time.sleep(8)
            cpu_before: dict[int, float] = {}
            _cpu(process, cpu_before)
            cpu_after: dict[int, float] = {}
            database_before: dict[int, float] = {}
            _database_cpu(database_before)
            database_after: dict[int, float] = {}
            started = time.perf_counter()
            clippings_import(reader=reader, data=data, file_name="bench.txt")
            imported = time.perf_counter() - started
            total = Highlight.objects.filter(reader=reader).count()
            peak = peak_total = 0
            while True:
                largest, total_rss = _rss(process)
                peak, peak_total = max(peak, largest), max(peak_total, total_rss)
                _cpu(process, cpu_after)
                _database_cpu(database_after)
                pending = (
                    Highlight.objects.filter(reader=reader)
                    .exclude(embedding_status__in=["done", "failed"])
                    .count()
                )
                if pending == 0 or time.perf_counter() - started > timeout:
                    break
                time.sleep(0.5)
            elapsed = time.perf_counter() - started
        connections = Connection.objects.filter(reader=reader).count()
    report = {
        "entries": entries,
        "highlights": total,
        "still_pending": pending,
        "import_seconds": round(imported, 2),
        "all_embedded_seconds": round(elapsed, 1),
        "highlights_per_second": round(total / elapsed, 1),
        # The worker's own CPU time (every process): on a shared machine the fair figure
        # to compare, where the wall time also counts other work's turns on the cores.
        "worker_cpu_seconds": round(sum(cpu_after.values()) - sum(cpu_before.values()), 1),
        "database_cpu_seconds": round(
            sum(database_after.values())
            - sum(database_before.get(pid, 0.0) for pid in database_after),
            1,
        ),
        "connections": connections,
        "worker_processes": workers,
        "peak_rss_mb_largest_process": round(peak / 1024 / 1024),
        "peak_rss_mb_all_worker_processes": round(peak_total / 1024 / 1024),
        "model": settings.EXOGRAM_EMBEDDING_MODEL,
        "target_seconds": TARGETS[settings.EXOGRAM_EMBEDDING_MODEL][0],
        "target_rss_mb": TARGETS[settings.EXOGRAM_EMBEDDING_MODEL][1],
    }
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=ENTRIES)
    parser.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    arguments = parser.parse_args()
    run(entries=arguments.entries, workers=arguments.workers)
