"""`python -m exogram.run`: everything Exogram needs, in one command.

Starts the embedded PostgreSQL (unless DATABASE_URL is set), applies migrations, then runs
the web server (gunicorn) and a Celery worker side by side until Ctrl-C, when it stops
them and the embedded database in that order.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType


def _children_alive(children: list[subprocess.Popen[bytes]]) -> bool:
    return all(child.poll() is None for child in children)


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")
    import django
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    django.setup()
    embedded = not os.environ.get("DATABASE_URL")
    data_dir = Path(settings.EXOGRAM_DATA_DIR)
    if embedded:
        from exogram.embedded_postgres import server

        print(f"Starting the embedded PostgreSQL in {data_dir / 'postgres'} …", flush=True)
        server.start(data_dir)
    call_command("migrate", interactive=False, verbosity=1)
    if not settings.DEBUG:
        call_command("collectstatic", interactive=False, verbosity=0)
    connections.close_all()

    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    python = sys.executable
    worker = subprocess.Popen(
        [
            python,
            "-m",
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
        ],
    )
    web = subprocess.Popen(
        [
            python,
            "-m",
            "gunicorn",
            "exogram.wsgi",
            "--config",
            "python:exogram.gunicorn_conf",
            # Workers, threads, timeout and the warm-up: shared with the Docker image.
            "--bind",
            f"{host}:{port}",
        ],
    )
    children = [web, worker]

    stopping = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    print(f"\nExogram is running at http://{host}:{port}/  (Ctrl-C stops it)\n", flush=True)

    while not stopping and _children_alive(children):
        time.sleep(0.5)

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
        server.stop(data_dir)
        print("The embedded PostgreSQL has stopped.", flush=True)
    # A child that died on its own (not stopped by us) makes `make run` fail visibly.
    return 0 if stopping else 1


if __name__ == "__main__":
    sys.exit(main())
