"""The first requests after a web process starts: search, a highlight page, /connections/.

Run it with `DEBUG=1 python -m bench cold` (about 2 minutes on the 2-core machine).

A throw-away database gets one reader with a synthetic 400-entry clippings file, imported
and embedded in-process by the real model (so connections exist). Then, ROUNDS times for
each way, a real gunicorn (one worker, exogram.gunicorn_conf, as `make run` starts it) is
started against that database, and the wall clock of each page's *first* request is taken,
then of a second one (warm). Two ways:

- **cold**: EXOGRAM_WARM_WEB=0, as before the warm-up existed: the model loads inside the
  first search.
- **warmed**: the post_worker_init hook (exogram.warm) loads URLs, a database connection,
  the templates and the encoder before the worker accepts requests; its boot time is
  reported apart (the time from spawn to the first answer), since the reader no longer waits
  for it inside a page.

Medians over the rounds; the load average is printed beside them, since on a shared machine
other work's turns count in a wall clock.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from typing import Any

from bench.db import bench_database, setup_django
from bench.synthetic import make_clippings_file

DATABASE = "exogram_bench_cold"
ROUNDS = 3
ENTRIES = 400
USERNAME = "cold-reader"
PASSWORD = "a long and unguessable passphrase"
QUERY = "why we forget what we read"
BOOT_TIMEOUT = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _database_url(name: str) -> str:
    from django.db import connection

    params = connection.get_connection_params()
    user = urllib.parse.quote(str(params.get("user") or ""))
    password = params.get("password")
    auth = f"{user}:{urllib.parse.quote(str(password))}@" if password else f"{user}@"
    host = str(params.get("host") or "")
    port = params.get("port")
    if host.startswith("/"):  # a Unix socket folder, libpq's spelling
        return f"postgresql://{auth}/{name}?host={urllib.parse.quote(host)}"
    return f"postgresql://{auth}{host}{f':{port}' if port else ''}/{name}"


def _library() -> dict[str, str]:
    """Import and embed the reader's library; the paths the first requests open."""
    from accounts.models import User
    from books.importing.services import clippings_import
    from books.models import Connection, Highlight
    from exogram.celery import app

    reader = User.objects.create_user(USERNAME, password=PASSWORD)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        clippings_import(reader=reader, data=make_clippings_file(ENTRIES), file_name="c.txt")
    finally:
        app.conf.task_always_eager = eager
    pair = Connection.objects.filter(reader=reader).order_by("distance").first()
    highlight = (
        Highlight.objects.get(pk=pair.highlight_a_id)
        if pair
        else Highlight.objects.filter(reader=reader).exclude(text="").first()
    )
    assert highlight is not None
    return {
        "search": f"/search/?q={urllib.parse.quote_plus(QUERY)}",
        "highlight": highlight.get_absolute_url(),
        "connections": "/connections/",
    }


class _Browser:
    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def get(self, path: str) -> tuple[float, str]:
        started = time.perf_counter()
        with self.opener.open(self.base + path, timeout=120) as response:
            body = response.read().decode()
        return time.perf_counter() - started, body

    def log_in(self) -> None:
        _, page = self.get("/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, "no CSRF token on the login page"
        data = urllib.parse.urlencode(
            {"username": USERNAME, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)}
        ).encode()
        request = urllib.request.Request(self.base + "/login/", data=data)
        with self.opener.open(request, timeout=60) as response:
            assert "/login/" not in response.geturl(), "the bench reader could not log in"


def _one_start(database_url: str, paths: dict[str, str], *, warm: bool) -> dict[str, float]:
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "EXOGRAM_WARM_WEB": "1" if warm else "0",
        "LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "-m", "gunicorn",
               "--config", "python:exogram.gunicorn_conf",
               "--bind", f"127.0.0.1:{port}", "--workers", "1"]  # fmt: skip
    spawned = time.perf_counter()
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        browser = _Browser(f"http://127.0.0.1:{port}")
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"gunicorn stopped: {server.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                browser.get("/login/")
                break
            except OSError:
                if time.perf_counter() - spawned > BOOT_TIMEOUT:
                    raise
                time.sleep(0.05)
        figures = {"boot_s": time.perf_counter() - spawned}
        browser.log_in()
        for name, path in paths.items():
            figures[f"{name}_first_s"], _ = browser.get(path)
        for name, path in paths.items():
            figures[f"{name}_second_s"], _ = browser.get(path)
        return figures
    finally:
        server.terminate()
        server.wait(timeout=30)


def run(*, rounds: int = ROUNDS) -> dict[str, Any]:
    setup_django()
    load_before = os.getloadavg()
    started = time.perf_counter()
    with bench_database(DATABASE) as name:
        paths = _library()
        url = _database_url(name)
        from django.db import connections

        connections.close_all()
        runs: dict[str, list[dict[str, float]]] = {"cold": [], "warmed": []}
        for _ in range(rounds):
            for way in runs:
                runs[way].append(_one_start(url, paths, warm=way == "warmed"))
    report: dict[str, Any] = {}
    for way, figures in runs.items():
        report[way] = {
            key: round(statistics.median(f[key] for f in figures), 3) for key in figures[0]
        }
    for page in paths:
        cold, warmed = report["cold"][f"{page}_first_s"], report["warmed"][f"{page}_first_s"]
        report[f"{page}_first_cold_over_warmed"] = round(cold / warmed, 1) if warmed else None
    report["rounds"] = rounds
    report["load_average"] = [round(load_before[0], 2), round(os.getloadavg()[0], 2)]
    report["total_seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    run()
