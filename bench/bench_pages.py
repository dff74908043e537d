"""What each page of `make load` costs the server, one request at a time, in-process.

`python -m bench pages` (or `python -m bench.bench_pages [--reuse]`): a throw-away database
gets the load test's library (bench.load: 20,000 highlights with vectors and connections),
then each page the load hits is requested ROUNDS times through Django's test client with the
reader logged in, as the load's clients ask for them (search words, random highlights,
/connections/, /library/?page=N). Per page, medians of:

- `python_cpu_ms`: this process's CPU time for the request (time.process_time), view,
  middleware, template and the database driver included;
- `database_cpu_ms` (a mean: the kernel counts in 10 ms ticks): the PostgreSQL backend's
  CPU time for it, read from /proc (the embedded server runs on this machine; 0
  elsewhere): on 2 cores it competes with Python;
- `queries` and `query_ms` (wall time of the queries as the driver saw them);
- `template_ms`: wall time inside render_to_string, queries a template triggers included;
- `wall_ms` and `wall_ms_p95`: the request's wall time, median and 95th percentile, and
  `python_cpu_ms_p95`: the 95th percentile of the first figure (a page's slow tail, such as
  `/connections/` without a cache, shows there, not in the medians).

CPU times, not wall clocks, are the figures to compare on a shared machine: another
process's turn on the core does not count in them. `--reuse` runs on a copy of the seeded
library `make load --reuse` keeps (bench.load.seeded_library) instead of seeding anew, for
before/after comparisons.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from bench.db import setup_django

DATABASE = "exogram_bench_pages"
ROUNDS = 40
WARM_UP = 5
WORDS = ["memory", "time", "love", "river", "city", "war", "death", "light", "book"]


def _backend_cpu_seconds(pid: int) -> float:
    """utime + stime of a PostgreSQL backend on this machine, 0.0 when it is elsewhere."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _percentile(values: list[float], share: float) -> float:
    """The value below which `share` of `values` lie (nearest rank, as bench.load)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


@contextmanager
def _template_timer() -> Iterator[list[float]]:
    """Wall time spent in render_to_string (django.shortcuts.render calls it by module)."""
    from django.template import loader

    spent: list[float] = []
    real = loader.render_to_string

    def timed(*args: Any, **kwargs: Any) -> str:
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    loader.render_to_string = timed  # type: ignore[assignment]
    try:
        yield spent
    finally:
        loader.render_to_string = real


def measure(paths: Callable[[random.Random], str], client: Any, rounds: int) -> dict[str, Any]:
    """Medians per request of one page; `paths` picks each request's path."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    rng = random.Random(7)
    for _ in range(WARM_UP):
        client.get(paths(rng))
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = int(cursor.fetchone()[0])
    python_cpu, database_cpu, queries, query_ms, template_ms, bytes_out = [], [], [], [], [], []
    wall: list[float] = []
    for _ in range(rounds):
        path = paths(rng)
        with CaptureQueriesContext(connection) as captured, _template_timer() as spent:
            database_before = _backend_cpu_seconds(backend)
            started = time.process_time()
            started_wall = time.perf_counter()
            response = client.get(path)
            wall.append(1000 * (time.perf_counter() - started_wall))
            python_cpu.append(1000 * (time.process_time() - started))
            database_cpu.append(1000 * (_backend_cpu_seconds(backend) - database_before))
        if response.status_code != 200:
            raise RuntimeError(f"{path}: HTTP {response.status_code}")
        queries.append(len(captured.captured_queries))
        query_ms.append(sum(1000 * float(q["time"]) for q in captured.captured_queries))
        template_ms.append(1000 * sum(spent))
        bytes_out.append(len(response.content))
    return {
        "python_cpu_ms": round(statistics.median(python_cpu), 1),
        "python_cpu_ms_p95": round(_percentile(python_cpu, 0.95), 1),
        "wall_ms": round(statistics.median(wall), 1),
        "wall_ms_p95": round(_percentile(wall, 0.95), 1),
        # A mean: the kernel counts a process's CPU in ticks of 10 ms.
        "database_cpu_ms": round(statistics.mean(database_cpu), 1),
        "queries": round(statistics.median(queries)),
        "query_ms": round(statistics.median(query_ms), 1),
        "template_ms": round(statistics.median(template_ms), 1),
        "kb": round(statistics.median(bytes_out) / 1024, 1),
    }


def pages_measure(reader: Any, rounds: int) -> dict[str, Any]:
    from django.test import Client

    from books.models import Highlight

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(reader)
    codes = [str(c) for c in Highlight.objects.filter(reader=reader).values_list("code", flat=True)]
    pages: dict[str, Callable[[random.Random], str]] = {
        "search": lambda rng: f"/search/?q={rng.choice(WORDS)}",
        "highlight": lambda rng: f"/highlights/{rng.choice(codes)}/",
        "connections": lambda rng: "/connections/",
        "library": lambda rng: f"/library/?page={rng.randint(1, 20)}",
    }
    return {name: measure(paths, client, rounds) for name, paths in pages.items()}


def run(*, reuse: bool = False, rounds: int = ROUNDS, entries: int | None = None) -> dict[str, Any]:
    setup_django()
    from accounts.models import User
    from bench.load import LIBRARY_ENTRIES, READER, seeded_library
    from books.models import Highlight

    entries = entries or LIBRARY_ENTRIES
    with seeded_library(entries, reuse=reuse, name=DATABASE):
        reader = User.objects.get(username=READER)
        report: dict[str, Any] = {
            "library_highlights": Highlight.objects.filter(reader=reader).count(),
            "rounds": rounds,
            "load_average_before": [round(x, 1) for x in os.getloadavg()],
        }
        with _static_files_from_the_source():
            report["pages"] = pages_measure(reader, rounds)
        report["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))
    return report


@contextmanager
def _static_files_from_the_source() -> Iterator[None]:
    """As the tests do: pages link static files by their plain names, no collectstatic
    (the static files are WhiteNoise's to serve, not the pages' cost)."""
    from django.conf import settings
    from django.test import override_settings

    plain = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}
    with override_settings(STORAGES={**settings.STORAGES, "staticfiles": plain}):
        yield


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--library-entries", type=int, default=None)
    arguments = parser.parse_args()
    run(reuse=arguments.reuse, rounds=arguments.rounds, entries=arguments.library_entries)
