"""The embedded PostgreSQL's life: adopted when found running, watched, restarted, and
stopped once its data folder is gone. Each test starts its own cluster in a temporary
folder (never the one the other tests use)."""

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from exogram.embedded_postgres import server

ROOT = Path(__file__).resolve().parent.parent


def private_data_dir() -> Path:
    """A new data folder under the checkout's var/, not pytest's tmp_path: the server runs as
    another system user, which must be able to reach its folder, and pytest's base folder
    (mode 0700) is reset by every pytest session started on the machine."""
    parent = Path(tempfile.mkdtemp(prefix="test-", dir=ROOT / "var"))
    parent.chmod(0o755)
    return parent / "data"


@pytest.fixture
def data_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("EXOGRAM_PG_WATCHDOG_SECONDS", "0.2")
    folder = private_data_dir()
    yield folder
    if folder.exists():
        server.stop(folder)
    shutil.rmtree(folder.parent, ignore_errors=True)


def _wait_until_gone(pid: int) -> bool:
    # Bounded wait for another process to act; not a timing assertion.
    for _ in range(300):
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.1)
    return False


class EmbeddedServerTests:
    def test_it_adopts_a_server_left_running_instead_of_starting_another(
        self, data_dir: Path
    ) -> None:
        socket_dir = server.start(data_dir)
        pid = server.postmaster_pid(data_dir)
        assert pid is not None
        # What a process finds after its predecessor was killed with SIGKILL: the server.
        assert server.start(data_dir) == socket_dir
        assert server.postmaster_pid(data_dir) == pid
        with psycopg.connect(host=str(socket_dir), user="postgres", dbname="exogram") as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)

    def test_it_starts_with_its_own_settings(self, data_dir: Path, settings: object) -> None:
        settings.EXOGRAM_PG_SHARED_BUFFERS = "160MB"  # type: ignore[attr-defined]
        socket_dir = server.start(data_dir)
        with psycopg.connect(host=str(socket_dir), user="postgres", dbname="exogram") as conn:
            assert conn.execute("SHOW shared_buffers").fetchone() == ("160MB",)
        # A new value at the next start; the include line is written once.
        server.stop(data_dir)
        settings.EXOGRAM_PG_SHARED_BUFFERS = "192MB"  # type: ignore[attr-defined]
        socket_dir = server.start(data_dir)
        with psycopg.connect(host=str(socket_dir), user="postgres", dbname="exogram") as conn:
            assert conn.execute("SHOW shared_buffers").fetchone() == ("192MB",)
        conf = (data_dir / "postgres" / "postgresql.conf").read_text()
        assert conf.count(f"include_if_exists = '{server.SETTINGS_FILE}'") == 1

    def test_it_starts_again_after_the_server_stopped(self, data_dir: Path) -> None:
        server.start(data_dir)
        server.stop(data_dir)
        assert not server.is_running(data_dir)
        socket_dir = server.start(data_dir)
        assert server.is_running(data_dir)
        with psycopg.connect(host=str(socket_dir), user="postgres", dbname="exogram") as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)

    def test_a_crash_loses_nothing_committed(self, data_dir: Path) -> None:
        socket_dir = server.start(data_dir)
        with psycopg.connect(host=str(socket_dir), user="postgres", dbname="exogram") as conn:
            conn.execute("CREATE TABLE kept (note text)")
            conn.execute("INSERT INTO kept VALUES ('written before the crash')")
        server.stop(data_dir, immediate=True)  # no checkpoint: every process ends at once
        assert not server.is_running(data_dir)
        socket_dir = server.start(data_dir)  # recovers from the write-ahead log
        with psycopg.connect(host=str(socket_dir), user="postgres", dbname="exogram") as conn:
            assert conn.execute("SELECT note FROM kept").fetchall() == [
                ("written before the crash",)
            ]

    def test_a_fast_shutdown_that_does_not_finish_becomes_an_immediate_one(
        self, data_dir: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        server.start(data_dir)
        pgserver = server._pgserver()
        pg_ctl = pgserver.pgexec.pgexec
        modes: list[str] = []

        def slow_to_stop(program: str, args: tuple[str, ...], **kwargs: object) -> str:
            mode = args[args.index("-m") + 1]
            modes.append(mode)
            if mode == "fast":  # what pg_ctl says when its minute's wait runs out
                raise subprocess.CalledProcessError(
                    1, (program, *args), "server does not shut down"
                )
            return pg_ctl(program, args, **kwargs)

        monkeypatch.setattr(pgserver.pgexec, "pgexec", slow_to_stop)
        server.stop(data_dir)
        assert modes == ["fast", "immediate"]
        assert not server.is_running(data_dir)

    def test_it_stops_a_server_whose_data_folder_is_gone(self, data_dir: Path) -> None:
        server.start(data_dir)
        pid = server.postmaster_pid(data_dir)
        assert pid is not None
        watchdog_pid = int((data_dir / "postgres.watchdog").read_text().split()[0])
        assert psutil.pid_exists(watchdog_pid)
        # The server may remove its own files while they are deleted: tolerate the race.
        shutil.rmtree(data_dir, ignore_errors=True)
        assert _wait_until_gone(pid), "the server of a deleted folder is still running"
        shutil.rmtree(data_dir, ignore_errors=True)
        assert _wait_until_gone(watchdog_pid)

    def test_its_watchdog_outlives_a_killed_starter_and_leaves_a_live_server_alone(
        self, data_dir: Path
    ) -> None:
        server.start(data_dir)
        pid = server.postmaster_pid(data_dir)
        watchdog_pid = int((data_dir / "postgres.watchdog").read_text().split()[0])
        assert os.getsid(watchdog_pid) != os.getsid(0)  # not in this process's session
        time.sleep(1)  # several watchdog rounds with the folder in place
        assert server.postmaster_pid(data_dir) == pid
        server.stop(data_dir)
        assert _wait_until_gone(watchdog_pid)  # it ends with its server
