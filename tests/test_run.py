"""`make run` as a reader runs it (`python -m exogram.run`), on a data folder of its own:
production mode, its embedded database restarted when it dies, a killed run leaving no web
server behind, and its database adopted by the next run, which leaves it running: a run
stops only the database it started."""

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from exogram.embedded_postgres import server
from tests.test_embedded_postgres import private_data_dir

ROOT = Path(__file__).resolve().parent.parent
# Bounded waits for other processes (start-up migrates a new database): not timings.
START_WAIT_SECONDS = 300


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, ""


def _wait_for(url: str, status: int = 200) -> tuple[int, str]:
    answer = (0, "")
    for _ in range(START_WAIT_SECONDS):
        answer = _get(url)
        if answer[0] == status:
            return answer
        time.sleep(1)
    return answer


class _Run:
    def __init__(self, data_dir: Path, port: int) -> None:
        env = {
            k: v
            for k, v in os.environ.items()
            if k
            not in {
                "DEBUG",
                "SECRET_KEY",
                "DATABASE_URL",
                "CELERY_BROKER_URL",
                "DJANGO_ALLOW_ASYNC_UNSAFE",  # set by the browser tests for themselves
            }
        }
        env |= {
            "EXOGRAM_DATA_DIR": str(data_dir),
            "PORT": str(port),
            "WEB_CONCURRENCY": "1",
            "EXOGRAM_WORKER_CONCURRENCY": "1",
        }
        self.log = data_dir.parent / f"run-{time.monotonic_ns()}.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "exogram.run"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def output(self) -> str:
        return self.log.read_text()

    def children(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []


@pytest.fixture
def data_dir() -> Iterator[Path]:
    folder = private_data_dir()
    yield folder
    server.stop(folder)
    shutil.rmtree(folder.parent, ignore_errors=True)


def _command(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # ended, or a zombie waiting for its parent
        return ""


def _gone(processes: list[psutil.Process]) -> bool:
    _dead, alive = psutil.wait_procs(processes, timeout=60)
    return not alive


class MakeRunTests:
    def test_it_runs_as_a_product_and_survives_its_faults(self, data_dir: Path) -> None:
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        first = _Run(data_dir, port)
        try:
            status, body = _wait_for(f"{base}/healthz")
            assert status == 200, first.output()
            assert json.loads(body) == {"database": "ok", "broker": "ok"}
            # Production mode: a kept key, the site's 404 page, hashed static files.
            key = data_dir / "secret_key"
            assert stat.S_IMODE(key.stat().st_mode) == 0o600
            status, body = _get(f"{base}/no-such-page/")
            assert status == 404
            assert "Nothing here" in body
            assert "URLconf" not in body
            _status, login = _get(f"{base}/login/")
            assert "/static/css/exogram." in login
            assert "/static/css/exogram.css" not in login  # the collected, hashed copy

            # The database dies (every process at once, as in a crash: SIGQUIT, PostgreSQL's
            # immediate shutdown): the run starts it again, PostgreSQL recovers from its
            # log, and the pages come back. Waited on by its pid, not by its pid file as
            # `pg_ctl stop` waits: the run may have written the next server's file already.
            before = server.postmaster_pid(data_dir)
            assert before is not None
            postmaster = psutil.Process(before)
            postmaster.send_signal(signal.SIGQUIT)
            postmaster.wait(timeout=60)
            status, _body = _wait_for(f"{base}/healthz")
            assert status == 200, first.output()
            restarted = server.postmaster_pid(data_dir)
            assert restarted is not None
            assert restarted != before

            # The run is killed outright: its web server and worker go with it... (Named by
            # command: the database's watchdog outlives the run by design, and just after a
            # restart the run's tree can still hold pg_ctl and the server it started, until
            # pg_ctl's last look at the server's pid file.)
            commands = {child: _command(child) for child in first.children()}
            children = [
                child
                for child, command in commands.items()
                if "gunicorn" in command or "celery" in command
            ]
            assert any("gunicorn" in commands[child] for child in children)
            assert any("celery" in commands[child] for child in children)
            first.process.send_signal(signal.SIGKILL)
            first.process.wait()
            assert _gone(children), [_command(c) for c in children if c.is_running()]
            # ...and the database, which several processes share, is still there.
            pid = server.postmaster_pid(data_dir)
            assert pid is not None
        finally:
            if first.process.poll() is None:
                first.process.kill()
                first.process.wait()

        second = _Run(data_dir, port)
        try:
            assert _wait_for(f"{base}/healthz")[0] == 200, second.output()
            assert f"Adopting the embedded PostgreSQL already running in {data_dir}" in (
                second.output()
            )
            assert server.postmaster_pid(data_dir) == pid
            assert (data_dir / "secret_key").read_text() == key.read_text()
            # A server this run did not start is not its to stop: other processes (a
            # command, a test session, another run) may be using it.
            second.process.send_signal(signal.SIGINT)
            assert second.process.wait(timeout=240) == 0, second.output()
            assert "left running: it was started by another process" in second.output()
            assert "The embedded PostgreSQL has stopped." not in second.output()
            assert server.postmaster_pid(data_dir) == pid
        finally:
            if second.process.poll() is None:
                second.process.kill()
                second.process.wait()

        # A run that starts the server (here, again after the adopted one died) stops it.
        third = _Run(data_dir, port)
        try:
            assert _wait_for(f"{base}/healthz")[0] == 200, third.output()
            postmaster = psutil.Process(pid)
            postmaster.send_signal(signal.SIGQUIT)
            postmaster.wait(timeout=60)
            assert _wait_for(f"{base}/healthz")[0] == 200, third.output()
            assert server.postmaster_pid(data_dir) not in {None, pid}
            third.process.send_signal(signal.SIGINT)
            # Up to 30 s for each child, a minute for a fast shutdown, then an immediate one.
            assert third.process.wait(timeout=240) == 0, third.output()
            assert "The embedded PostgreSQL has stopped." in third.output()
            assert not server.is_running(data_dir)
        finally:
            if third.process.poll() is None:
                third.process.kill()
                third.process.wait()
