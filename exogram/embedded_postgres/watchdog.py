"""`python -m exogram.embedded_postgres.watchdog PGDATA PID`: stop a server left homeless.

The embedded server is shared by every process of a checkout (web, worker, commands,
tests), so no single one of them owns it, and one killed with SIGKILL stops nothing. A
server whose parent is gone is adopted by the next start in the same folder (server.start
finds it running); but a server whose data folder was deleted (a removed checkout, a test's
temporary folder) would run on forever, holding memory and a socket. `server.start`
launches this small detached process beside each server: it stops the server (an
immediate shutdown: there is nothing left to write to) once its folder is gone, and exits
when the server stops for any other reason.
"""

import contextlib
import logging
import os
import signal
import sys
import time
from pathlib import Path

import psutil

logger = logging.getLogger("exogram.embedded_postgres.watchdog")


def watch(pgdata: Path, pid: int, *, interval: float) -> str:
    """Return why the watch ended: "stopped" (the server went away) or "folder gone"."""
    try:
        postmaster = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return "stopped"
    while True:
        if not postmaster.is_running() or postmaster.status() == psutil.STATUS_ZOMBIE:
            return "stopped"
        if not (pgdata / "PG_VERSION").exists():
            logger.warning(
                "the data folder %s is gone: stopping its PostgreSQL (pid %d)", pgdata, pid
            )
            postmaster.send_signal(signal.SIGQUIT)
            try:
                postmaster.wait(timeout=10)
            except psutil.TimeoutExpired:
                postmaster.kill()
            return "folder gone"
        time.sleep(interval)


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    pgdata, pid = Path(argv[1]), int(argv[2])
    interval = float(os.environ.get("EXOGRAM_PG_WATCHDOG_SECONDS") or 10)
    with contextlib.suppress(psutil.NoSuchProcess):  # it ended between two looks
        watch(pgdata, pid, interval=interval)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
