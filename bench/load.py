"""`make load`: 20 readers' browsers for 30 s against a real server, with an import running.

Starts the stack as `make run` does, on 127.0.0.1 only: gunicorn (exogram/gunicorn_conf.py,
DEBUG off, static files collected) and a Celery worker (one process per core), on a
throw-away database holding one reader's 20,000-highlight library with vectors and
connections. Then 20 client threads, each with
its own keep-alive connection, request the search, highlight, connections and library pages
in turn for 30 s, while the same reader uploads a 2,000-entry file. It reports requests/s,
p50/p95/p99 per page and overall, every error, whether every highlight of the concurrent
import got embedded (waiting at most --embed-timeout s once the clients stop), and the CPU
seconds the web server, the worker, the embedded PostgreSQL and the clients themselves spent
in the measured window: per request, the fair figure on a machine shared with other work.
Bounded in count and time; all traffic stays on the loopback interface.

`--slow-clients N` holds N more connections open through the measured window, each sending
a request head one byte a second (reconnecting when the server closes it), and
`--exports N` runs N threads of the same reader downloading the whole library as JSON,
again and again (waiting a second after a 429): what other readers' pages cost while
someone holds the server's connections and exports (issue 34; docs/security.md). The
report then adds the exports finished and refused, and the web processes' largest
resident memory, sampled every half second. `--reuse` runs on a
copy of a seeded library kept from an earlier `--reuse` run (seconds instead of minutes).

The library's vectors are random around 200 topics, not the model's: the pages do the same
work whatever the vectors say, and computing 20,000 real ones would take most of an hour
on two cores. Aims on two cores: 0 errors, >= 60 requests/s, p95 <= 400 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench.db import bench_database, cloned_database, setup_django
from bench.synthetic import make_clippings_file

ROOT = Path(__file__).resolve().parent.parent
CLIENTS = 20
SECONDS = 30.0
LIBRARY_ENTRIES = 25_500  # about 20,000 highlights once notes and bookmarks are set apart
IMPORT_ENTRIES = 2_000
PAGES = ["search", "highlight", "connections", "library"]
WARM_UP = 10.0
READER = "loadreader"
# The seeded library `--reuse` keeps between runs (bench.db.cloned_database).
SEED_DATABASE = "exogram_bench_load_seed"
# Raised whenever how a library is seeded or connected changes: a kept seed is made anew.
SEEDING = 2


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _seed_library(reader: Any, entries: int) -> None:
    """Import the library, give it vectors and connections, without the model's cost."""
    from django.db import connection

    import books.tasks
    from books.connections.services import highlights_connect
    from books.embedding.encoder import get_encoders
    from books.importing.services import clippings_import
    from books.models import THEME_DIMENSIONS, Highlight

    sent = books.tasks.enqueue_embedding
    books.tasks.enqueue_embedding = lambda ids: True  # seeding only: nothing is queued
    try:
        clippings_import(
            reader=reader, data=make_clippings_file(entries, seed=7), file_name="lib.txt"
        )
    finally:
        books.tasks.enqueue_embedding = sent
    model_id = get_encoders().model_id
    ids = list(Highlight.objects.filter(reader=reader).order_by("pk").values_list("pk", flat=True))
    # Each passage is about one of 200 topics, in both of the spaces the judge reads (the
    # model's and the theme model's): without theme vectors the judge connects nothing and
    # /connections/ would be measured empty.
    rng = np.random.default_rng(7)
    topics = rng.normal(size=(200, 384)).astype(np.float32)
    themes = rng.normal(size=(200, THEME_DIMENSIONS)).astype(np.float32)
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        about = rng.integers(0, 200, len(chunk))
        vectors = _near(topics[about], rng)
        theme_vectors = _near(themes[about], rng)
        values = ", ".join(["(%s, %s::vector, %s::vector)"] * len(chunk))
        params: list[Any] = []
        for pk, vector, theme in zip(chunk, vectors, theme_vectors, strict=True):
            params += [pk, _literal(vector), _literal(theme)]
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE books_highlight AS h SET embedding = v.e, theme_embedding = v.t, "
                f"embedding_model = %s, embedding_status = 'done' "
                f"FROM (VALUES {values}) AS v(id, e, t) WHERE h.id = v.id",
                [model_id, *params],
            )
    for start in range(0, len(ids), 500):
        highlights_connect(ids=ids[start : start + 500])
        print(f"  connections: {min(start + 500, len(ids))}/{len(ids)}", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def _near(topics: Any, rng: Any) -> Any:
    """Unit vectors near each of `topics` (one a row)."""
    vectors = topics + 0.35 * rng.normal(size=topics.shape).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _literal(vector: Any) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vector) + "]"


def seeded_library(entries: int, *, reuse: bool, name: str) -> AbstractContextManager[Any]:
    """A throw-away database `name` holding READER's library of `entries` entries.

    Without `reuse`, seeded anew (380 s at 25,500 entries on a quiet machine, most of it
    connecting 20,527 highlights). With `reuse`, a copy of the seeded database a previous
    run kept (SEED_DATABASE), seeded again when `entries`, the model or SEEDING changes.
    """
    if not reuse:
        return _fresh_library(entries, name=name)
    from books.embedding.encoder import get_encoders

    marker = f"entries={entries} model={get_encoders().model_id} seeding={SEEDING}"
    return cloned_database(
        name, template=SEED_DATABASE, make=partial(_seed, entries), marker=marker
    )


@contextmanager
def _fresh_library(entries: int, *, name: str) -> Iterator[None]:
    with bench_database(name):
        _seed(entries)
        yield


def _seed(entries: int) -> None:
    from accounts.models import User
    from books.models import Highlight

    reader = User.objects.create_user(READER)
    print(f"seeding a library of {entries} entries …", flush=True)
    seeding = time.perf_counter()
    _seed_library(reader, entries)
    library = Highlight.objects.filter(reader=reader).count()
    print(f"  {library} highlights in {time.perf_counter() - seeding:.0f} s", flush=True)


def _session_cookie(reader: Any) -> str:
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(reader.pk)
    from django.conf import settings

    # The configured backend: a session naming another one is not logged in (every page
    # answered 302 once login throttling brought its own backend).
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = reader.get_session_auth_hash()
    session.save()
    return f"sessionid={session.session_key}"


class Client:
    """One browser: a keep-alive connection to the server and the reader's session."""

    def __init__(self, port: int, cookie: str) -> None:
        self.port = port
        self.cookie = cookie
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, bytes]:  # fmt: skip
        all_headers = {"Cookie": self.cookie, **(headers or {})}
        try:
            self.connection.request(method, path, body=body, headers=all_headers)
            response = self.connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            raise


def _upload(client: Client, data: bytes) -> tuple[int, float]:
    """Post a file through the import form, as a browser does (CSRF token and cookie)."""
    status, page = client.request("GET", "/import/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    if status != 200 or token is None:
        raise RuntimeError(f"the import form did not load (HTTP {status})")
    csrf_cookie = token.group(1).decode()  # the form's token also works as the cookie's
    boundary = "----exogramload"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
            f'{csrf_cookie}\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="load.txt"\r\nContent-Type: text/plain\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    started = time.perf_counter()
    saved_cookie = client.cookie
    client.cookie = f"{saved_cookie}; csrftoken={csrf_cookie}"
    try:
        status, _ = client.request(
            "POST", "/import/", body=body,
            headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                     "Referer": f"http://127.0.0.1:{client.port}/import/"},
        )  # fmt: skip
    finally:
        client.cookie = saved_cookie
    return status, time.perf_counter() - started


def run(
    *,
    clients: int = CLIENTS,
    seconds: float = SECONDS,
    embed_timeout: float = 600,
    library_entries: int = LIBRARY_ENTRIES,
    reuse: bool = False,
    slow_clients: int = 0,
    exports: int = 0,
) -> dict[str, Any]:
    setup_django()
    from accounts.models import User
    from books.models import Highlight, Import
    from tests.worker import celery_worker, test_database_url

    with (
        seeded_library(library_entries, reuse=reuse, name="exogram_bench_load"),
        tempfile.TemporaryDirectory() as folder,
    ):
        reader = User.objects.get(username=READER)
        library = Highlight.objects.filter(reader=reader).count()
        alive = Highlight.objects.filter(reader=reader)
        codes = [str(code) for code in alive.values_list("code", flat=True)]
        words = ["memory", "time", "love", "river", "city", "war", "death", "light", "book"]
        cookie = _session_cookie(reader)
        port = _free_port()
        from django.conf import settings

        # As `make run` serves: DEBUG off, static files collected (WhiteNoise's manifest);
        # this process's key, so that the session made above is the server's too.
        env = {**os.environ, "DATABASE_URL": test_database_url(), "EXOGRAM_DATA_DIR": folder,
               "SECRET_KEY": settings.SECRET_KEY,
               # One reader's 20 browsers: their searches are not one person's.
               "EXOGRAM_SEARCHES_PER_READER": str(clients + 1)}  # fmt: skip
        env.pop("DEBUG", None)
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
            cwd=ROOT, env=env, check=True,
        )  # fmt: skip
        with celery_worker(
            broker_url="filesystem://", data_dir=Path(folder), concurrency=os.cpu_count() or 1
        ) as worker:
            env.pop("CELERY_BROKER_URL", None)
            web_log = (Path(folder) / "web.log").open("w")
            from exogram import gunicorn_conf

            # The application is named in the configuration since issue 34.
            app = [] if hasattr(gunicorn_conf, "wsgi_app") else ["exogram.wsgi"]
            web = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", *app, "--bind", f"127.0.0.1:{port}",
                 "--config", "python:exogram.gunicorn_conf", "--access-logfile", "/dev/null"],
                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=web_log,
            )  # fmt: skip
            try:
                _wait_up(port)
                # Unmeasured: each web process loads the model at its first search, and
                # the database's caches fill, as on a server that has been up a while.
                print(f"warming up for {WARM_UP:.0f} s …", flush=True)
                _load(port, cookie, codes, words, clients, WARM_UP, upload=False)
                print(f"{clients} clients for {seconds:.0f} s, an import alongside …", flush=True)
                trees = {"web": web.pid, "worker": worker.pid, "database": _postmaster_pid()}
                cpu_before = {name: _tree_cpu_seconds(pid) for name, pid in trees.items()}
                # The clients' own share of the cores: this process's threads.
                clients_before = time.process_time()
                hostile = _Hostile(port, cookie, web.pid, slow_clients, exports)
                try:
                    report = _load(port, cookie, codes, words, clients, seconds, upload=True)
                finally:
                    report_hostile = hostile.stop()
                if slow_clients or exports:
                    report["hostile"] = report_hostile
                report["cpu_seconds"] = {
                    name: round(_tree_cpu_seconds(pid) - cpu_before[name], 1)
                    for name, pid in trees.items()
                    if pid is not None
                }
                report["cpu_seconds"]["clients"] = round(time.process_time() - clients_before, 1)
                report["cpu_ms_per_request"] = {
                    name: round(1000 * spent / max(1, report["requests"]), 1)
                    for name, spent in report["cpu_seconds"].items()
                    if name != "worker"
                }
                print("waiting for the concurrent import to be embedded …", flush=True)
                report["import"].update(_wait_embedded(Highlight, Import, reader, embed_timeout))
            finally:
                web.terminate()
                web.wait(timeout=30)
                web_log.close()
    report["library_highlights"] = library
    report["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(report, indent=2))
    return report


class _Hostile:
    """Slow connections and repeated exports alongside the measured clients (bounded: they
    stop with the window)."""

    HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100_000

    def __init__(self, port: int, cookie: str, web_pid: int, slow: int, exports: int) -> None:
        self.port, self.cookie, self.web_pid = port, cookie, web_pid
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.counts = {"exports_finished": 0, "exports_refused": 0, "export_errors": 0,
                       "slow_reconnects": 0}  # fmt: skip
        self.export_seconds: list[float] = []
        self.rss_peak_mb = 0.0
        self.slow = slow
        self.threads = [threading.Thread(target=self._sample_memory)]
        if slow:
            self.threads.append(threading.Thread(target=self._drip, args=(slow,)))
        self.threads += [threading.Thread(target=self._export) for _ in range(exports)]
        for thread in self.threads:
            thread.start()

    def _connect(self) -> Any:
        import socket

        return socket.create_connection(("127.0.0.1", self.port), timeout=5)

    def _drip(self, count: int) -> None:
        sockets = [self._connect() for _ in range(count)]
        position = 0
        while not self.done.wait(1.0):
            for index, sock in enumerate(sockets):
                try:
                    sock.sendall(self.HEAD[position : position + 1])
                except OSError:  # closed by the server's header timeout: come back
                    sock.close()
                    sockets[index] = self._connect()
                    sockets[index].sendall(self.HEAD[:position])
                    with self.lock:
                        self.counts["slow_reconnects"] += 1
            position += 1
        for sock in sockets:
            sock.close()

    def _export(self) -> None:
        while not self.done.is_set():
            started = time.perf_counter()
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                connection.request("GET", "/export/?format=json", headers={"Cookie": self.cookie})
                response = connection.getresponse()
                while response.read(256 * 1024):
                    if self.done.is_set():
                        break
                status = response.status
                connection.close()
            except (OSError, http.client.HTTPException):
                with self.lock:
                    self.counts["export_errors"] += 1
                continue
            with self.lock:
                if status == 200 and not self.done.is_set():
                    self.counts["exports_finished"] += 1
                    self.export_seconds.append(time.perf_counter() - started)
                elif status == 429:
                    self.counts["exports_refused"] += 1
            if status == 429:
                self.done.wait(1.0)

    def _sample_memory(self) -> None:
        import psutil

        while not self.done.wait(0.5):
            try:
                web = psutil.Process(self.web_pid)
                rss = sum(p.memory_info().rss for p in [web, *web.children(recursive=True)])
            except psutil.Error:
                continue
            self.rss_peak_mb = max(self.rss_peak_mb, rss / 2**20)

    def stop(self) -> dict[str, Any]:
        self.done.set()
        for thread in self.threads:
            thread.join(timeout=130)
        seconds = self.export_seconds
        return {
            "slow_clients": self.slow,
            **self.counts,
            "export_p50_s": round(statistics.median(seconds), 1) if seconds else None,
            "web_rss_peak_mb": round(self.rss_peak_mb),
        }


def _postmaster_pid() -> int | None:
    """The embedded PostgreSQL's postmaster on this machine; None for another server."""
    from django.conf import settings

    if os.environ.get("DATABASE_URL"):
        return None
    pid_file = Path(settings.EXOGRAM_DATA_DIR) / "postgres" / "postmaster.pid"
    try:
        return int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _tree_cpu_seconds(root: int | None) -> float:
    """CPU seconds of a process and its descendants, those that ended included (counted
    in their parent's children's time): the server's own cost, whatever else runs."""
    if root is None:
        return 0.0
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        times[pid] = sum(int(x) for x in fields[11:15]) / tick
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        total += times.get(pid, 0.0)
        stack += [child for child, parent in parents.items() if parent == pid]
    return total


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_up(port: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/login/")
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the web server did not start")


def _load(port: int, cookie: str, codes: list[str], words: list[str], clients: int,
          seconds: float, *, upload: bool) -> dict[str, Any]:  # fmt: skip
    results: list[tuple[str, float, int]] = []  # page, seconds, HTTP status
    started_at: list[float] = []  # when each request of `results` was sent
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.perf_counter() + seconds
    load_before = os.getloadavg()

    def browse(index: int) -> None:
        rng = random.Random(index)
        client = Client(port, cookie)
        turn = index
        while time.perf_counter() < stop:
            page = PAGES[turn % len(PAGES)]
            turn += 1
            if page == "search":
                path = "/search/?" + urllib.parse.urlencode({"q": rng.choice(words)})
            elif page == "highlight":
                path = f"/highlights/{rng.choice(codes)}/"
            elif page == "connections":
                path = "/connections/"
            else:
                path = f"/library/?page={rng.randint(1, 20)}"
            started = time.perf_counter()
            try:
                status, _ = client.request("GET", path)
            except Exception as error:
                status = 0
                with lock:
                    errors.append(f"{path}: {type(error).__name__}: {error}")
            elapsed = time.perf_counter() - started
            with lock:
                results.append((page, elapsed, status))
                started_at.append(started)
                if status not in (0, 200):
                    errors.append(f"{path}: HTTP {status}")

    uploaded: dict[str, Any] = {}
    the_file = make_clippings_file(IMPORT_ENTRIES, seed=99)

    upload_ends: list[float] = []

    def importer() -> None:
        status, elapsed = _upload(Client(port, cookie), the_file)
        uploaded.update(http_status=status, upload_seconds=round(elapsed, 2))
        upload_ends.append(time.perf_counter())

    started = time.perf_counter()
    threads = [threading.Thread(target=browse, args=(i,)) for i in range(clients)]
    if upload:
        threads.append(threading.Thread(target=importer))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 120)
    wall = time.perf_counter() - started
    latencies = [elapsed for _, elapsed, _ in results]
    if upload_ends:
        # The import runs inside the upload's request, in one of the web processes.
        uploading = [
            e for (_, e, _), at in zip(results, started_at, strict=True) if at < upload_ends[0]
        ]
        uploaded["p95_ms_of_pages_meanwhile"] = round(1000 * _percentile(uploading, 0.95))
    by_page = {
        page: {
            "requests": len(values),
            "p50_ms": round(1000 * statistics.median(values)) if values else 0,
            "p95_ms": round(1000 * _percentile(values, 0.95)),
        }
        for page in PAGES
        for values in [[e for p, e, _ in results if p == page]]
    }
    return {
        "clients": clients,
        "seconds": round(wall, 1),
        "requests": len(results),
        "requests_per_second": round(len(results) / wall, 1),
        "p50_ms": round(1000 * statistics.median(latencies)) if latencies else 0,
        "p95_ms": round(1000 * _percentile(latencies, 0.95)),
        "p99_ms": round(1000 * _percentile(latencies, 0.99)),
        "errors": len(errors),
        "first_errors": errors[:5],
        "by_page": by_page,
        "import": uploaded,
        "load_average_before": [round(x, 1) for x in load_before],
    }


def _wait_embedded(Highlight: Any, Import: Any, reader: Any, timeout: float) -> dict[str, Any]:
    the_import = Import.objects.filter(reader=reader, file_name="load.txt").first()
    if the_import is None:
        return {"status": "missing"}
    started = time.perf_counter()
    while True:
        the_import.refresh_from_db()
        mine = Highlight.objects.filter(source_import=the_import)
        total = mine.count()
        embedded = mine.filter(embedding_status="done").count()
        under_way = the_import.status in Import.UNDER_WAY
        if (not under_way and embedded == total) or time.perf_counter() - started > timeout:
            break
        time.sleep(1)
    return {
        "status": the_import.status,
        "highlights": total,
        "embedded": embedded,
        "every_highlight_embedded": total > 0 and embedded == total,
        "seconds_after_the_clients_stopped": round(time.perf_counter() - started, 1),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--seconds", type=float, default=SECONDS)
    parser.add_argument("--embed-timeout", type=float, default=600)
    parser.add_argument("--library-entries", type=int, default=LIBRARY_ENTRIES)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="run on a copy of the seeded library kept by an earlier --reuse run (seeded "
        "and kept on the first one)",
    )
    parser.add_argument("--slow-clients", type=int, default=0)
    parser.add_argument("--exports", type=int, default=0)
    arguments = parser.parse_args()
    run(
        clients=arguments.clients,
        seconds=arguments.seconds,
        embed_timeout=arguments.embed_timeout,
        library_entries=arguments.library_entries,
        reuse=arguments.reuse,
        slow_clients=arguments.slow_clients,
        exports=arguments.exports,
    )
