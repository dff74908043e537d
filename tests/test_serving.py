"""The web server as `make run` and the Docker image start it (exogram/gunicorn_conf.py),
against clients that connect and then send nothing, or their headers a byte at a time.

Loopback only; every wait is a bounded deadline, not a speed assertion (the latency
figures are in `python -m bench.load --slow-clients`, docs/security.md).
"""

import contextlib
import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from accounts.models import User
from tests import worker
from tests.external_postgres import free_port
from tests.worker import ROOT, wait_for

SLOW_CLIENTS = 100
# Generous: on the gthread layout this was reached with no answer at all (every thread
# held by a slow client), on the async one the answer comes in milliseconds.
ANSWER_WAIT_SECONDS = 30


@pytest.fixture
def web_server(tmp_path: Path, transactional_db: None) -> Iterator[str]:
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k not in {"CELERY_BROKER_URL", "DEBUG"}},
        "DATABASE_URL": worker.test_database_url(),
        "EXOGRAM_DATA_DIR": str(tmp_path),
        "EXOGRAM_WARM_WEB": "0",
        "WEB_CONCURRENCY": "1",
        "SECRET_KEY": "serving-test-key",
        # Static files from the source folders: no collectstatic for a test server.
        "DEBUG": "1",
    }
    log = (tmp_path / "web.log").open("w")
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "--config", "python:exogram.gunicorn_conf",
         "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: _status(f"{base}/login/") == 200, timeout=120, what="the web server")
        yield base
    finally:
        web.terminate()
        try:
            web.wait(timeout=30)
        except subprocess.TimeoutExpired:
            web.kill()
        log.close()


def _status(url: str, opener: urllib.request.OpenerDirector | None = None) -> int:
    try:
        with (opener or urllib.request.build_opener()).open(url, timeout=10) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def _logged_in(base: str, username: str, password: str) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(f"{base}/login/", timeout=10) as response:
        page = response.read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    form = {"csrfmiddlewaretoken": token.group(1), "username": username, "password": password}
    request = urllib.request.Request(
        f"{base}/login/", data=urllib.parse.urlencode(form).encode(), headers={"Referer": base}
    )
    # Not followed: the home page loads the model, which a test server does not warm.
    no_redirect = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(jar), _NoRedirect()
    )
    with pytest.raises(urllib.error.HTTPError) as redirected:
        no_redirect.open(request, timeout=60)
    redirected.value.close()
    assert redirected.value.code == 302  # logged in
    return opener


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class _SlowClients:
    """Connections that send a request head one byte every `interval` seconds, forever."""

    HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000

    def __init__(self, base: str, count: int, interval: float = 1.0) -> None:
        host, port = urllib.parse.urlsplit(base).netloc.split(":")
        self.sockets = [
            socket.create_connection((host, int(port)), timeout=5) for _ in range(count)
        ]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._drip, args=(interval,), daemon=True)
        self._thread.start()

    def _drip(self, interval: float) -> None:
        position = 0
        while not self._stop.wait(interval) and position < len(self.HEAD):
            for sock in self.sockets:
                with contextlib.suppress(OSError):  # closed by the server
                    sock.sendall(self.HEAD[position : position + 1])
            position += 1

    def count_closed_by_server(self) -> int:
        closed = 0
        for sock in self.sockets:
            sock.settimeout(0.05)
            try:
                sock.recv(1024)
                closed += 1  # an end of stream, or the server's answer before it closes
            except TimeoutError:
                pass
            except OSError:
                closed += 1
        return closed

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for sock in self.sockets:
            sock.close()


class SlowClientsTests:
    def test_it_answers_others_while_a_hundred_slow_clients_hold_connections(
        self, web_server: str
    ) -> None:
        User.objects.create_user("alice", password="a long enough password")
        reader = _logged_in(web_server, "alice", "a long enough password")
        slow = _SlowClients(web_server, SLOW_CLIENTS)
        try:
            with urllib.request.urlopen(
                f"{web_server}/healthz", timeout=ANSWER_WAIT_SECONDS
            ) as health:
                assert health.status == 200
            with reader.open(f"{web_server}/settings/", timeout=ANSWER_WAIT_SECONDS) as page:
                assert page.status == 200
                assert page.url.endswith("/settings/")  # not sent to log in
            # ... and all that while every slow client was still connected.
            assert slow.count_closed_by_server() == 0
        finally:
            slow.close()

    def test_it_drops_a_client_that_does_not_finish_its_request_head(self, web_server: str) -> None:
        slow = _SlowClients(web_server, 5)
        try:
            # The server's header timeout, with room: a bounded wait, not a timing.
            wait_for(
                lambda: slow.count_closed_by_server() == 5, timeout=60, what="the server to close"
            )
        finally:
            slow.close()


class AccessLogTests:
    def test_it_logs_paths_without_their_query_strings(
        self, web_server: str, tmp_path: Path
    ) -> None:
        # A search's words are the reader's: they stay out of the log.
        assert _status(f"{web_server}/login/?next=/search/%3Fq%3Dprivate-words") == 200
        assert _status(f"{web_server}/healthz?q=more-private-words") == 200
        log = tmp_path / "web.log"
        # Written once the response is sent: the client may read it first.
        wait_for(lambda: '"GET /healthz" 200' in log.read_text(), timeout=30, what="the log")
        assert '"GET /login/" 200' in log.read_text()
        assert "private-words" not in log.read_text()
