"""Memory of a worker importing and embedding a large file: peak RSS of each process.

A 200,000-entry file (about 55 MB, made by bench.synthetic) is imported in the background
by a real worker (the path a large upload takes), which then embeds it. Every worker
process's resident memory is sampled twice a second, through the import and then for
`--embed-seconds` of embedding (the steady state: each task's memory is bounded, so a few
minutes show what hours would), or until everything is embedded. Aim: every worker
process under 450 MB, and no embedding process replaced for its memory: a process whose
peak passes EXOGRAM_WORKER_MAX_MEMORY_KB is replaced after its task, and the next one
loads the model again. `python -m bench.bench_memory [--entries N] [--embed-seconds S]
[--workers N]`. A throw-away database and a file broker in a temporary folder.
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

ENTRIES = 200_000
EMBED_SECONDS = 180
TARGET_MB = 450


def _rss_by_process(worker: psutil.Process) -> dict[int, int]:
    sizes = {}
    for process in [worker, *worker.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            sizes[process.pid] = process.memory_info().rss
    return sizes


def _cpu_seconds(worker: psutil.Process) -> float:
    """CPU time of the worker and all its processes, the live ones and those it reaped."""
    total = 0.0
    for process in [worker, *worker.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            times = process.cpu_times()
            total += times.user + times.system
            if process is worker:
                total += times.children_user + times.children_system
    return total


def run(
    *, entries: int = ENTRIES, embed_seconds: float = EMBED_SECONDS, workers: int | None = None
) -> dict[str, Any]:
    workers = workers or os.cpu_count() or 1
    data = make_clippings_file(entries)
    # The file is larger than the default upload limit; the worker reads the same variable.
    os.environ["EXOGRAM_MAX_UPLOAD_MB"] = str(len(data) // (1024 * 1024) + 2)
    setup_django()
    from django.conf import settings

    settings.EXOGRAM_MAX_UPLOAD_MB = int(os.environ["EXOGRAM_MAX_UPLOAD_MB"])
    from accounts.models import User
    from books.importing.background import import_queue
    from books.models import Highlight, Import
    from tests.worker import celery_worker

    load_before = os.getloadavg()
    with bench_database("exogram_bench_memory"), tempfile.TemporaryDirectory() as folder:
        reader = User.objects.create_user("memory")
        with celery_worker(
            broker_url="filesystem://", data_dir=Path(folder), concurrency=workers
        ) as worker:
            process = psutil.Process(worker.pid)
            time.sleep(8)  # Django and the model load, as in a running deployment
            idle = max(_rss_by_process(process).values())
            started = time.perf_counter()
            the_import = import_queue(reader=reader, data=data, file_name="bench.txt")
            del data
            peak: dict[int, int] = {}
            cpu_seconds = 0.0
            pool: set[int] = set()  # the pool's processes: the first ones and replacements
            import_seconds = None
            embed_started = None
            while True:
                for pid, rss in _rss_by_process(process).items():
                    peak[pid] = max(peak.get(pid, 0), rss)
                with contextlib.suppress(psutil.NoSuchProcess):
                    pool.update(child.pid for child in process.children())
                    cpu_seconds = _cpu_seconds(process)
                now = time.perf_counter()
                if import_seconds is None:
                    status = Import.objects.values_list("status", flat=True).get(pk=the_import.pk)
                    if status in (Import.Status.DONE, Import.Status.FAILED):
                        import_seconds = now - started
                        embed_started = now
                        if status == Import.Status.FAILED:
                            break
                elif embed_started is not None and now - embed_started > embed_seconds:
                    break
                if import_seconds is not None and not (
                    Highlight.objects.filter(reader=reader)
                    .exclude(embedding_status__in=["done", "failed"])
                    .exists()
                ):
                    break
                if now - started > 3600:
                    break
                time.sleep(0.5)
            embedded = Highlight.objects.filter(reader=reader, embedding_status="done").count()
            highlights = Highlight.objects.filter(reader=reader).count()
            status = Import.objects.values_list("status", flat=True).get(pk=the_import.pk)
    peak_mb = {pid: round(rss / 1024 / 1024) for pid, rss in peak.items()}
    embedding_seconds = time.perf_counter() - (embed_started or started)
    report = {
        "entries": entries,
        "import_status": status,
        "highlights": highlights,
        "import_seconds": round(import_seconds or 0, 1),
        "embedded": embedded,
        "embedding_seconds_sampled": round(embedding_seconds, 1),
        # Import and embedding together, so comparable under any load.
        "worker_cpu_seconds": round(cpu_seconds, 1),
        "highlights_embedded_per_worker_cpu_second": round(embedded / max(cpu_seconds, 1e-9), 2),
        "worker_processes": workers,
        "idle_rss_mb_largest_process": round(idle / 1024 / 1024),
        "peak_rss_mb_by_process": sorted(peak_mb.values(), reverse=True),
        "peak_rss_mb_largest_process": max(peak_mb.values()),
        # billiard logs nothing when it replaces a process for its memory: the pool's
        # process ids tell. A pool process is also replaced when it dies, which the
        # import and embedding here never make one do.
        "pool_processes_replaced": len(pool) - workers,
        "max_memory_per_child_kb": settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD,
        "target_rss_mb": TARGET_MB,
        "load_average_before": [round(x, 1) for x in load_before],
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
    }
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=ENTRIES)
    parser.add_argument("--embed-seconds", type=float, default=EMBED_SECONDS)
    parser.add_argument("--workers", type=int, help="worker processes (default: one per core)")
    arguments = parser.parse_args()
    run(entries=arguments.entries, embed_seconds=arguments.embed_seconds, workers=arguments.workers)
