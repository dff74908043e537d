"""How fast `search_highlights` answers over MCP stdio in a library of 20,000 highlights.

Run it with `DEBUG=1 python -m bench.bench_mcp` (a few minutes on the 2-core machine). The
library is bench_search's (real vectors for its seed texts, consistent synthetic ones for the
rest; see that module), loaded into a throw-away database. Then `manage.py mcp` runs as a
real subprocess, as an assistant starts it, and the figures are the wall-clock round trips
of `tools/call search_highlights` (JSON-RPC written to its stdin, the answer read from its
stdout), p50/p95 per mode. The same queries through `books.library_api.library_search` in
this process give the protocol's own cost (process hop, JSON both ways) as a difference.
The server keeps its query-vector cache, as it would for an assistant; the queries are
distinct, so each still embeds its query once.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.bench_search import Matrix, load_library, make_queries, read_corpus
from bench.db import bench_database, setup_django

DATABASE = "exogram_bench_mcp"
SIZE = 20_000
QUERIES = 90
WARMUP = 10
MODES = ("auto", "keyword")
LIMIT = 10
SEED = 17
ROOT = Path(__file__).resolve().parent.parent


def _database_url() -> str:
    from django.db import connection

    params = connection.get_connection_params()
    user, password = params.get("user") or "", params.get("password") or ""
    host, port = params.get("host") or "", params.get("port") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    name = connection.settings_dict["NAME"]
    if host.startswith("/"):
        return f"postgresql://{auth}/{name}?host={host}"
    return f"postgresql://{auth}{host}:{port}/{name}"


class _Server:
    def __init__(self, username: str, data_dir: str) -> None:
        env = {**os.environ, "DATABASE_URL": _database_url(), "EXOGRAM_DATA_DIR": data_dir}
        self.log = open(os.path.join(data_dir, "mcp.log"), "w")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "mcp", "--user", username],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
        )  # fmt: skip
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the MCP server closed its stdout; see mcp.log")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer

    def start(self) -> None:
        self.request(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {},
             "clientInfo": {"name": "bench", "version": "1"}},
        )  # fmt: skip
        assert self.process.stdin is not None
        self.process.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        self.process.stdin.flush()

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def _percentiles(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(float(np.percentile(values, 50)), 1),
        "p95_ms": round(float(np.percentile(values, 95)), 1),
    }


def run(*, size: int = SIZE, queries: int = QUERIES) -> dict[str, Any]:
    setup_django()
    from books.embedding.encoder import get_encoder, get_encoders

    rng = random.Random(SEED)
    started = time.perf_counter()
    encoder = get_encoder()
    corpus = read_corpus(rng)
    seed_vectors: Matrix = encoder.encode(corpus.seeds)
    with bench_database(DATABASE) as database, tempfile.TemporaryDirectory() as data_dir:
        from django.db import connection

        from accounts.models import User
        from books.library_api import library_search
        from books.search.search import clear_query_cache

        print(f"bench_mcp: database {database}", flush=True)
        library = load_library(size, corpus, seed_vectors, get_encoders().model_id, rng)
        with connection.cursor() as cursor:
            # bench_search's rows carry no place in their book; a citation needs one.
            cursor.execute(
                "UPDATE books_highlight SET location_start = 10 * (id %% 5000) + 1, "
                "location_end = 10 * (id %% 5000) + 3 WHERE reader_id = %s",
                [library.reader_id],
            )
            cursor.execute("VACUUM ANALYZE books_highlight")
        asked = [q for q, _ in make_queries(library, corpus, rng, queries + WARMUP)]
        reader = User.objects.get(pk=library.reader_id)
        server = _Server(reader.username, data_dir)
        timings: dict[str, list[float]] = {mode: [] for mode in MODES}
        direct: dict[str, list[float]] = {mode: [] for mode in MODES}
        cited = 0
        try:
            began = time.perf_counter()
            server.start()
            startup_ms = 1000 * (time.perf_counter() - began)
            for number, query in enumerate(asked):
                for mode in MODES:
                    arguments = {"query": query, "mode": mode, "limit": LIMIT}
                    began = time.perf_counter()
                    answer = server.request(
                        "tools/call", {"name": "search_highlights", "arguments": arguments}
                    )
                    elapsed = 1000 * (time.perf_counter() - began)
                    results = answer["result"]["structuredContent"]["results"]
                    clear_query_cache()
                    began = time.perf_counter()
                    library_search(reader, query=query, mode=mode, limit=LIMIT)
                    in_process = 1000 * (time.perf_counter() - began)
                    if number >= WARMUP:
                        timings[mode].append(elapsed)
                        direct[mode].append(in_process)
                        cited += all(r["book"] and r["author"] and r["location"] for r in results)
        finally:
            server.close()
    report: dict[str, Any] = {
        "highlights": size,
        "queries": queries,
        "limit": LIMIT,
        "model": get_encoders().model_id,
        "server_start_ms": round(startup_ms, 1),
        "over_stdio": {mode: _percentiles(timings[mode]) for mode in MODES},
        "in_process": {mode: _percentiles(direct[mode]) for mode in MODES},
        "answers_with_citations": f"{cited} of {len(MODES) * queries}",
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    print(
        f"{size} highlights; load average {report['load_average']}\n"
        "search_highlights p50 / p95 ms, over stdio (in process):"
    )
    for mode in MODES:
        stdio, inproc = report["over_stdio"][mode], report["in_process"][mode]
        print(
            f"  {mode:>8}: {stdio['p50_ms']:.1f} / {stdio['p95_ms']:.1f}"
            f"  ({inproc['p50_ms']:.1f} / {inproc['p95_ms']:.1f})"
        )
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    run()
