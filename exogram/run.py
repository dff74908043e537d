"""`python -m exogram.run`: everything Exogram needs, in one command.

Starts the embedded PostgreSQL (unless DATABASE_URL is set), applies migrations, then runs
the web server (gunicorn) and a Celery worker side by side until Ctrl-C, when it stops
them, then the embedded database if this run started it. The embedded server is watched:
started again if it dies (the web and worker processes reconnect on their next request,
Django's CONN_HEALTH_CHECKS). One already running in the data folder (left by a killed run,
or started by a command, a test session or another run) is adopted, and left running at
the end: other processes may be using it, and only its starter may take it away.
With DEBUG on (`make dev`), gunicorn reloads the code when it changes.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

# How often the embedded server is checked on, in seconds.
DATABASE_CHECK_INTERVAL = 5.0


def _die_with_this_process() -> None:
    """In the child, before exec: get SIGTERM when `make run` dies, even by SIGKILL, so a
    killed run leaves no web server or worker behind (Linux; elsewhere a no-op)."""
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _children_alive(children: list[subprocess.Popen[bytes]]) -> bool:
    return all(child.poll() is None for child in children)


def worker_command(data_dir: Path) -> list[str]:
    """The Celery worker with its beat (the sweeps, the review e-mails, the nightly backup),
    as docker/docker-compose.yml's worker runs it too (tests/test_docker.py compares them)."""
    return [
        "celery",
        "-A",
        "exogram",
        "worker",
        "--beat",
        "--loglevel",
        "INFO",
        "--concurrency",
        os.environ.get("EXOGRAM_WORKER_CONCURRENCY") or str(os.cpu_count() or 1),
        "--schedule",
        str(data_dir / "celerybeat-schedule"),
    ]


def _start_database(data_dir: Path) -> int | None:
    """Make sure the embedded server runs; return its pid if this call started it, None if
    it was already running (adopted)."""
    from exogram.embedded_postgres import server

    already_running = server.postmaster_pid(data_dir)
    server.start(data_dir)
    return server.postmaster_pid(data_dir) if already_running is None else None


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")
    import django
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    django.setup()
    embedded = not os.environ.get("DATABASE_URL")
    data_dir = Path(settings.EXOGRAM_DATA_DIR)
    # The pid of the embedded server this run started, and so stops at the end; None while
    # it uses one another process started.
    started_here: int | None = None
    if embedded:
        from exogram.embedded_postgres import server

        already_running = server.postmaster_pid(data_dir)
        if already_running is not None:
            # Left by a run ended by SIGKILL, or started by a command, a test session or
            # another run that may still be using it: this run uses it and leaves it running.
            print(
                f"Adopting the embedded PostgreSQL already running in {data_dir / 'postgres'} "
                f"(pid {already_running}), started by another process.",
                flush=True,
            )
        else:
            print(f"Starting the embedded PostgreSQL in {data_dir / 'postgres'} …", flush=True)
        try:
            started_here = _start_database(data_dir)
        except server.DataFolderVersionMismatch as refusal:
            print(f"\n{refusal}\n", file=sys.stderr, flush=True)
            return 2
    call_command("migrate", interactive=False, verbosity=1)
    if not settings.DEBUG:
        call_command("collectstatic", interactive=False, verbosity=0)
    connections.close_all()

    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    python = sys.executable
    worker = subprocess.Popen(
        [python, "-m", *worker_command(data_dir)], preexec_fn=_die_with_this_process
    )
    web = subprocess.Popen(
        [
            python,
            "-m",
            "gunicorn",
            "--config",
            "python:exogram.gunicorn_conf",
            # The application, its worker (exogram/serving.py), workers, threads, timeouts
            # and the warm-up: shared with the Docker image.
            "--bind",
            f"{host}:{port}",
            "--error-logfile",
            "-",
            *(["--reload"] if settings.DEBUG else []),
        ],
        preexec_fn=_die_with_this_process,
    )
    children = [web, worker]

    stopping = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    print(f"\nExogram is running at http://{host}:{port}/  (Ctrl-C stops it)\n", flush=True)

    last_check = time.monotonic()
    while not stopping and _children_alive(children):
        time.sleep(0.5)
        if embedded and time.monotonic() - last_check >= DATABASE_CHECK_INTERVAL:
            last_check = time.monotonic()
            if not server.is_running(data_dir) and not stopping:
                print("The embedded PostgreSQL has stopped; starting it again …", flush=True)
                try:
                    started_here = _start_database(data_dir)
                except Exception as error:  # keep serving the pages that need no database
                    print(f"Could not start the embedded PostgreSQL: {error}", flush=True)

    print("\nStopping Exogram …", flush=True)
    for child in children:
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    for child in children:
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
    if embedded:
        running = server.postmaster_pid(data_dir)
        if running is not None and running != started_here:
            print(
                f"The embedded PostgreSQL in {data_dir / 'postgres'} (pid {running}) is "
                "left running: it was started by another process.",
                flush=True,
            )
        else:
            server.stop(data_dir)
            if server.is_running(data_dir):
                print("The embedded PostgreSQL did not stop; see the messages above.", flush=True)
            else:
                print("The embedded PostgreSQL has stopped.", flush=True)
    # A child that died on its own (not stopped by us) makes `make run` fail visibly.
    return 0 if stopping else 1


if __name__ == "__main__":
    sys.exit(main())
