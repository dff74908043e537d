"""Backup and restore of a 20,000-highlight library, and what such a library costs.

`python -m bench.bench_backup [--readers 4] [--entries 6000]`. The first run builds the
library in a kept template database (readers importing invented clippings, embedded and
connected by a real worker, its CPU time measured: worker processes and the PostgreSQL
server's); each run then copies it and measures:
- `manage.py backup` (size, seconds), and the same dump without the vectors (what a backup
  that re-computes them would weigh);
- `manage.py restore` into an empty database (seconds, the HNSW index rebuilt included);
- the database's, the highlight table's and the HNSW index's sizes, per highlight;
- the embedding CPU time of one highlight (the encoder alone, in this process), against the
  worker's whole time per highlight (embedding + connections), for docs/operations.md's
  capacity table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.db import cloned_database, setup_django
from bench.synthetic import make_clippings_file

READERS = 4
ENTRIES = 6_200  # per reader: about 5,000 highlights each after notes and duplicates
REAL = 3_000  # embedded and connected by a real worker; the rest made up from them


def _cpu_seconds(process: psutil.Process) -> float:
    """CPU time of a process, its waited-for children and its live ones."""
    times = process.cpu_times()
    total = times.user + times.system + times.children_user + times.children_system
    for child in process.children(recursive=True):
        try:
            child_times = child.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += child_times.user + child_times.system
    return float(total)


def _postmaster() -> psutil.Process:
    from django.conf import settings

    from exogram.embedded_postgres import server

    pid = server.postmaster_pid(Path(settings.EXOGRAM_DATA_DIR))
    assert pid is not None, "the benchmark runs on the embedded server"
    return psutil.Process(pid)


def _build(readers: int, entries: int, real: int, stats_file: Path) -> None:
    """Import every reader's clippings; a real worker embeds and connects the first `real`
    highlights (its CPU time measured); the rest get vectors and connections made up from
    those (see _complete), because on a shared 2-core machine embedding 20,000 took hours."""
    from accounts.models import User
    from books.importing.services import clippings_import
    from books.models import Highlight
    from tests.worker import celery_worker

    for number in range(readers):
        reader = User.objects.create_user(f"reader{number}")
        data = make_clippings_file(entries, seed=number)
        clippings_import(reader=reader, data=data, file_name="My Clippings.txt")
    with (
        tempfile.TemporaryDirectory() as folder,
        celery_worker(
            broker_url="filesystem://", data_dir=Path(folder), concurrency=os.cpu_count() or 1
        ) as worker,
    ):
        process, postmaster = psutil.Process(worker.pid), _postmaster()
        worker_cpu, server_cpu = _cpu_seconds(process), _cpu_seconds(postmaster)
        started = time.perf_counter()
        while Highlight.objects.filter(embedding_status="done").count() < real:
            time.sleep(1)
        done = Highlight.objects.filter(embedding_status="done").count()
        stats = {
            "really_embedded": done,
            "real_wall_seconds": round(time.perf_counter() - started, 1),
            "worker_cpu_seconds": round(_cpu_seconds(process) - worker_cpu, 1),
            "server_cpu_seconds": round(_cpu_seconds(postmaster) - server_cpu, 1),
        }
    _complete()
    stats_file.write_text(json.dumps(stats))


def _complete(seed: int = 0) -> None:
    """Vectors and connections for every highlight the worker did not reach: each a real
    vector plus noise, and as many connections per highlight as the real ones have, to
    other highlights of its reader in other books. Sizes and restore work match a library
    embedded for real; what it says does not matter here."""
    import numpy as np
    from django.db import connection, transaction

    from books.models import Connection, Highlight

    rng = np.random.default_rng(seed)
    real = Highlight.objects.filter(embedding_status="done")
    model = real.values_list("embedding_model", flat=True).first()
    vectors = np.array([np.asarray(v) for v in real.values_list("embedding", flat=True)])
    per_highlight = Connection.objects.count() / max(len(vectors), 1)
    Highlight.objects.exclude(embedding_status="done").update(
        embedding_status="pending", embedding_claimed_at=None, embedding_claimed_by=""
    )
    rows = list(
        Highlight.objects.filter(embedding_status="pending").values_list(
            "pk", "reader_id", "book_id"
        )
    )
    made = vectors[rng.integers(0, len(vectors), len(rows))] + rng.normal(0, 0.02, (len(rows), 384))
    made /= np.linalg.norm(made, axis=1, keepdims=True)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            "UPDATE books_highlight SET embedding = %s::vector, embedding_status = 'done', "
            "embedding_model = %s WHERE id = %s",
            [
                (str(vector.tolist()), model, pk)
                for (pk, _, _), vector in zip(rows, made, strict=True)
            ],
        )
    by_reader: dict[int, list[tuple[int, int]]] = {}
    for pk, reader_id, book_id in Highlight.objects.values_list("pk", "reader_id", "book_id"):
        by_reader.setdefault(reader_id, []).append((pk, book_id))
    pairs: dict[tuple[int, int], Connection] = {}
    for pk, reader_id, book_id in rows:
        others = by_reader[reader_id]
        for _ in range(int(per_highlight) + (rng.random() < per_highlight % 1)):
            other, other_book = others[int(rng.integers(0, len(others)))]
            if other_book == book_id:
                continue
            a, b = min(pk, other), max(pk, other)
            pairs[(a, b)] = Connection(
                reader_id=reader_id, highlight_a_id=a, highlight_b_id=b,
                book_low_id=min(book_id, other_book), book_high_id=max(book_id, other_book),
                distance=float(rng.uniform(0.08, 0.25)), embedding_model=model or "",
            )  # fmt: skip
    Connection.objects.bulk_create(pairs.values(), ignore_conflicts=True, batch_size=2000)


def _sizes() -> dict[str, int]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_database_size(current_database()), "
            "pg_total_relation_size('books_highlight'), "
            "pg_relation_size('highlight_embedding_hnsw'), "
            "pg_total_relation_size('books_connection')"
        )
        database, highlights, hnsw, pairs = cursor.fetchone()
    return {"database": database, "highlights": highlights, "hnsw": hnsw, "connections": pairs}


def _encoder_cpu_per_highlight(sample: int = 400) -> float:
    from books.embedding.encoder import get_encoder
    from books.models import Highlight

    texts = list(Highlight.objects.values_list("text", flat=True)[:sample])
    encoder = get_encoder()
    encoder.encode(texts[:16])  # loaded and warm
    started = time.process_time()
    encoder.encode(texts)
    return (time.process_time() - started) / len(texts)


def _timed_backup(folder: Path) -> tuple[float, int]:
    from backups.services import backup_create

    started = time.perf_counter()
    manifest = backup_create(to=folder)
    return time.perf_counter() - started, sum(f["bytes"] for f in manifest["files"].values())


def run(*, readers: int = READERS, entries: int = ENTRIES, real: int = REAL) -> dict[str, Any]:
    setup_django()
    from django.db import connection

    from backups.services import backup_restore
    from books.models import Connection, Highlight

    stats_file = Path(tempfile.gettempdir()) / f"exogram-bench-backup-{readers}x{entries}.json"
    marker = f"backup library v2 {readers}x{entries} real {real}"
    with (
        cloned_database(
            "exogram_bench_backup",
            template="exogram_bench_backup_template",
            make=lambda: _build(readers, entries, real, stats_file),
            marker=marker,
        ),
        tempfile.TemporaryDirectory() as folder,
    ):
        highlights = Highlight.objects.count()
        pairs = Connection.objects.count()
        sizes = _sizes()
        encoder_cpu = _encoder_cpu_per_highlight()
        backup_seconds, backup_bytes = _timed_backup(Path(folder) / "full")
        # The restore, into a new empty database on the same server.
        name = connection.settings_dict["NAME"]
        with connection._nodb_cursor() as cursor:
            cursor.execute('DROP DATABASE IF EXISTS "exogram_bench_restored"')
            cursor.execute('CREATE DATABASE "exogram_bench_restored"')
        connection.close()
        connection.settings_dict["NAME"] = "exogram_bench_restored"
        try:
            started = time.perf_counter()
            backup_restore(source=Path(folder) / "full")
            restore_seconds = time.perf_counter() - started
        finally:
            connection.close()
            connection.settings_dict["NAME"] = name
            with connection._nodb_cursor() as cursor:
                cursor.execute('DROP DATABASE "exogram_bench_restored" WITH (FORCE)')
        # The same library without its vectors (in this throw-away copy only).
        Highlight.objects.update(embedding=None)
        shutil.rmtree(Path(folder) / "full")
        bare_seconds, bare_bytes = _timed_backup(Path(folder) / "bare")
    built = json.loads(stats_file.read_text()) if stats_file.exists() else {}
    per = 1 / max(highlights, 1)
    report = {
        "readers": readers,
        "highlights": highlights,
        "connections": pairs,
        "backup_mb": round(backup_bytes / 1e6, 1),
        "backup_seconds": round(backup_seconds, 1),
        "restore_seconds": round(restore_seconds, 1),
        "backup_without_vectors_mb": round(bare_bytes / 1e6, 1),
        "backup_without_vectors_seconds": round(bare_seconds, 1),
        "database_mb": round(sizes["database"] / 1e6, 1),
        "bytes_per_highlight": {key: round(value * per) for key, value in sizes.items()},
        "encoder_cpu_ms_per_highlight": round(encoder_cpu * 1000, 2),
        "recompute_vectors_cpu_seconds": round(encoder_cpu * highlights, 1),
        **built,
        "load_average": os.getloadavg(),
    }
    if built:
        real_per = 1000 / built["really_embedded"]
        report["worker_cpu_ms_per_highlight"] = round(built["worker_cpu_seconds"] * real_per, 2)
        if built.get("server_cpu_seconds") is not None:
            server = built["server_cpu_seconds"] * real_per
            report["server_cpu_ms_per_highlight"] = round(server, 2)
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--readers", type=int, default=READERS)
    parser.add_argument("--entries", type=int, default=ENTRIES, help="clippings per reader")
    parser.add_argument("--real", type=int, default=REAL, help="highlights really embedded")
    arguments = parser.parse_args()
    run(readers=arguments.readers, entries=arguments.entries, real=arguments.real)
