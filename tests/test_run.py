"""`make run` as a reader runs it (`python -m exogram.run`), on a data folder of its own:
production mode, its embedded database restarted when it dies, a killed run leaving no web
server behind, its database taken over by the next run (its starter has ended), a server
whose starter still runs left running, a dead worker or web server started again with
nothing of the old one left behind, and `stop_database` refusing while a run supervises."""

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
    def __init__(self, data_dir: Path, port: int, *, worker_concurrency: str = "1") -> None:
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
            "EXOGRAM_WORKER_CONCURRENCY": worker_concurrency,
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
            health = json.loads(body)
            assert (health["database"], health["broker"]) == ("ok", "ok")
            # The worker's first heartbeat may come just after the web server's first page.
            assert health["worker"] in {"ok", "never seen"}
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

        # A server whose starter still runs (here this test, as a test session or a command
        # still at work) is not the run's to stop: that process may be using it.
        server.stop(data_dir)
        server.start(data_dir)
        pid = server.postmaster_pid(data_dir)
        second = _Run(data_dir, port)
        try:
            assert _wait_for(f"{base}/healthz")[0] == 200, second.output()
            assert f"Adopting the embedded PostgreSQL already running in {data_dir}" in (
                second.output()
            )
            assert f"started by process {os.getpid()}, which still runs" in second.output()
            assert server.postmaster_pid(data_dir) == pid
            assert (data_dir / "secret_key").read_text() == key.read_text()
            second.process.send_signal(signal.SIGINT)
            assert second.process.wait(timeout=240) == 0, second.output()
            assert f"left running: process {os.getpid()}, which started it" in second.output()
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


def _manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "DEBUG"}}
    env["EXOGRAM_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=START_WAIT_SECONDS,
    )


def _the(run: _Run, word: str) -> psutil.Process | None:
    """The run's own child whose command holds `word` (gunicorn, celery), if one runs."""
    for child in run.children():
        if child.ppid() == run.process.pid and word in _command(child):
            return child
    return None


def _wait_for_new(run: _Run, word: str, old: int) -> psutil.Process | None:
    for _ in range(START_WAIT_SECONDS):
        child = _the(run, word)
        if child is not None and child.pid != old:
            return child
        time.sleep(1)
    return None


def _wait_for_text(run: _Run, text: str, count: int = 1) -> bool:
    for _ in range(START_WAIT_SECONDS):
        if run.output().count(text) >= count:
            return True
        time.sleep(1)
    return False


class SupervisionTests:
    def test_a_dead_worker_or_web_server_is_started_again_and_leaves_nothing(
        self, data_dir: Path
    ) -> None:
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        # A command starts the server and exits: it says it leaves it running.
        command = _manage(data_dir, "showmigrations", "books")
        assert command.returncode == 0, command.stderr
        assert "is left running. `python manage.py stop_database` stops it" in command.stderr
        pid = server.postmaster_pid(data_dir)
        assert pid is not None

        run = _Run(data_dir, port)
        try:
            assert _wait_for(f"{base}/healthz")[0] == 200, run.output()
            # Its starter has ended: the run takes it over.
            assert f"Taking over the embedded PostgreSQL already running in {data_dir}" in (
                run.output()
            )
            # While the run supervises it, stop_database refuses (the run would restart it).
            refused = _manage(data_dir, "stop_database")
            assert refused.returncode != 0
            assert f"make run (pid {run.process.pid}) is supervising" in refused.stderr
            assert server.postmaster_pid(data_dir) == pid
            # And a second run on the same data folder refuses to start (two beats).
            twin = _Run(data_dir, _free_port())
            assert twin.process.wait(timeout=START_WAIT_SECONDS) == 2
            assert f"Another make run (pid {run.process.pid})" in twin.output()

            # The worker's main process is killed (the OOM killer): its beat and pool go
            # with it, the log names it, a new worker with a new beat starts, and the web
            # server serves on.
            assert _wait_for_text(run, "beat: Starting..."), run.output()
            worker = _the(run, "celery")
            assert worker is not None, run.output()
            forked = worker.children(recursive=True)
            assert forked  # the beat and the pool's process
            worker.kill()
            assert _wait_for_text(
                run, f"The worker (pid {worker.pid}) exited with signal 9 (SIGKILL)"
            ), run.output()
            assert _gone(forked), [_command(c) for c in forked if c.is_running()]
            assert _wait_for_new(run, "celery", worker.pid) is not None, run.output()
            assert _wait_for_text(run, "beat: Starting...", count=2), run.output()
            assert _get(f"{base}/healthz")[0] == 200

            # The same for the web server, whose workers go with it.
            web = _the(run, "gunicorn")
            assert web is not None
            web_workers = web.children(recursive=True)
            assert web_workers
            web.kill()
            assert _wait_for_text(
                run, f"The web server (pid {web.pid}) exited with signal 9 (SIGKILL)"
            ), run.output()
            assert _gone(web_workers)
            assert _wait_for_new(run, "gunicorn", web.pid) is not None, run.output()
            assert _wait_for(f"{base}/healthz")[0] == 200, run.output()

            # Ctrl-C: the run stops the server it took over, and removes its record.
            run.process.send_signal(signal.SIGINT)
            assert run.process.wait(timeout=240) == 0, run.output()
            assert "The embedded PostgreSQL has stopped." in run.output()
            assert not server.is_running(data_dir)
            assert not (data_dir / server.SUPERVISOR_FILE).exists()
        finally:
            if run.process.poll() is None:
                run.process.kill()
                run.process.wait()

    def test_a_worker_that_keeps_dying_stops_the_run_and_says_so(self, data_dir: Path) -> None:
        port = _free_port()
        run = _Run(data_dir, port, worker_concurrency="not-a-number")
        try:
            # celery refuses the option at once, every time: after five restarts the run
            # gives up (systemd's Restart=on-failure then acts on its status 1).
            assert run.process.wait(timeout=START_WAIT_SECONDS) == 1, run.output()
            output = run.output()
            assert "The worker (pid" in output
            assert "exited with code 2; starting it again in 1 s." in output
            assert "its 6th exit in 10 minutes: starting it again will not mend this" in output
            assert "The embedded PostgreSQL has stopped." in output
            assert not server.is_running(data_dir)
        finally:
            if run.process.poll() is None:
                run.process.kill()
                run.process.wait()
