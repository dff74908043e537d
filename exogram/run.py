"""`python -m exogram.run`: everything Exogram needs, in one command.

Starts the embedded PostgreSQL (unless DATABASE_URL is set), applies migrations (after a
backup when the database already holds a library: backups.pre_migrate), then runs
the web server (gunicorn) and a Celery worker (with its beat) side by side until Ctrl-C,
when it stops them, then the embedded database if this run is responsible for it.

Made to be left running for months, it supervises what it started:
- a web server or worker that exits is started again after a pause that grows (1, 2, 4 …
  seconds), while the other goes on serving; the log names it and how it ended. After
  MAX_QUICK_RESTARTS exits of one of them within QUICK_RESTART_WINDOW seconds, something
  is wrong that starting again will not mend: the run stops everything, says so, and
  exits with status 1 (for systemd's Restart=on-failure, docs/operations.md).
- each child runs in a process group of its own, and when it ends the whole group is
  killed, so nothing it forked (the beat, the pool's processes, gunicorn's workers)
  outlives it; each child also gets SIGTERM if the run itself is killed.
- the embedded server is started again if it dies (the web and worker processes
  reconnect on their next request, Django's CONN_HEALTH_CHECKS). One already running in
  the data folder is adopted: taken over (and stopped at the end) when the process that
  started it has ended (a command such as restore, a killed run), left running when its
  starter still runs (a test session, another process using it).
- SUPERVISOR_FILE in the data folder names this run, so that `manage.py stop_database`
  refuses to stop a server this run would start again, and a second run on the same data
  folder (two beats on one broker) refuses to start.
With DEBUG on (`make dev`), gunicorn reloads the code when it changes.
"""

import collections
import contextlib
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
# The pause before starting an exited child again, by how many times it exited within
# QUICK_RESTART_WINDOW seconds; past MAX_QUICK_RESTARTS exits in that window, the run stops.
RESTART_DELAYS = (1, 2, 4, 8, 16, 30)
MAX_QUICK_RESTARTS = 5
QUICK_RESTART_WINDOW = 600.0
# How long a child has to stop after SIGTERM before its group is killed.
STOP_WAIT_SECONDS = 30


def _die_with_this_process() -> None:
    """In the child, before exec: get SIGTERM when `make run` dies, even by SIGKILL, so a
    killed run leaves no web server or worker behind (Linux; elsewhere a no-op)."""
    if sys.platform.startswith("linux"):
        parent = os.getppid()
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
        if os.getppid() != parent:  # the run died before the line above
            os._exit(1)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "an unknown signal"
        return f"signal {-returncode} ({name})"
    return f"code {returncode}"


class Child:
    """A supervised child: one command, started again when it exits."""

    def __init__(self, name: str, command: list[str]) -> None:
        self.name = name
        self.command = command
        self.process: subprocess.Popen[bytes] | None = None
        self.restart_at = 0.0
        self.exits: collections.deque[float] = collections.deque()

    def start(self) -> None:
        # process_group=0: a group of its own (led by the child), so that everything it
        # forks can be killed with it, and so that Ctrl-C in the terminal reaches only the
        # run, which stops the children in order.
        self.process = subprocess.Popen(
            self.command, preexec_fn=_die_with_this_process, process_group=0
        )

    def kill_group(self) -> None:
        """Kill whatever is left of the child's process group (its group id is its pid,
        which the system does not reuse while any member of the group lives)."""
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    def exited(self, now: float) -> float | None:
        """Note an exit; return the pause before starting again, None to give up."""
        self.kill_group()
        self.process = None
        self.exits.append(now)
        while self.exits and now - self.exits[0] > QUICK_RESTART_WINDOW:
            self.exits.popleft()
        if len(self.exits) > MAX_QUICK_RESTARTS:
            return None
        delay = RESTART_DELAYS[min(len(self.exits), len(RESTART_DELAYS)) - 1]
        self.restart_at = now + delay
        return delay

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def wait_and_clean_up(self) -> None:
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_WAIT_SECONDS)
        self.kill_group()
        if self.process is not None:
            self.process.wait()


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


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")
    import django
    from django.conf import settings

    from exogram.embedded_postgres import server

    django.setup()
    embedded = not os.environ.get("DATABASE_URL")
    data_dir = Path(settings.EXOGRAM_DATA_DIR)
    other_run = server.supervisor(data_dir)
    if other_run is not None and other_run != os.getpid():
        print(
            f"\nAnother make run (pid {other_run}) is running on {data_dir}; stop it first. "
            "Two runs on one data folder would run two beats on one broker.\n",
            file=sys.stderr,
            flush=True,
        )
        return 2
    server.supervise(data_dir)
    try:
        return _run(data_dir, embedded=embedded)
    finally:
        server.end_supervision(data_dir)


def _stop_database(data_dir: Path) -> None:
    """Stop the embedded server, unless the process that started it still runs."""
    from exogram.embedded_postgres import server

    running = server.postmaster_pid(data_dir)
    starter = server.live_starter(data_dir)
    if running is not None and starter is not None and starter != os.getpid():
        print(
            f"The embedded PostgreSQL in {data_dir / 'postgres'} (pid {running}) is "
            f"left running: process {starter}, which started it, still runs.",
            flush=True,
        )
    else:
        server.stop(data_dir)
        if server.is_running(data_dir):
            print("The embedded PostgreSQL did not stop; see the messages above.", flush=True)
        else:
            print("The embedded PostgreSQL has stopped.", flush=True)


def _run(data_dir: Path, *, embedded: bool) -> int:
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections
    from django.utils import timezone

    from backups.pre_migrate import PreMigrateBackupFailed, migrate_with_backup
    from exogram.embedded_postgres import server

    if embedded:
        already_running = server.postmaster_pid(data_dir)
        if already_running is not None:
            starter = server.live_starter(data_dir)
            if starter is None:
                # Started by a command (restore …) or a run that was killed: no process is
                # responsible for it any more, so this run is.
                server.take_over(data_dir, already_running)
                print(
                    f"Taking over the embedded PostgreSQL already running in "
                    f"{data_dir / 'postgres'} (pid {already_running}): the process that "
                    "started it has ended, so this run stops it at the end.",
                    flush=True,
                )
            else:
                print(
                    f"Adopting the embedded PostgreSQL already running in "
                    f"{data_dir / 'postgres'} (pid {already_running}), started by process "
                    f"{starter}, which still runs: it is left running at the end.",
                    flush=True,
                )
        else:
            print(f"Starting the embedded PostgreSQL in {data_dir / 'postgres'} …", flush=True)
        try:
            server.start(data_dir)
        except server.DataFolderVersionMismatch as refusal:
            print(f"\n{refusal}\n", file=sys.stderr, flush=True)
            return 2
    try:
        # A library that holds data is backed up before its migrations are applied.
        migrate_with_backup(now=timezone.now(), say=lambda line: print(line, flush=True))
    except PreMigrateBackupFailed as refusal:
        print(f"\n{refusal}\n", file=sys.stderr, flush=True)
        if embedded:
            connections.close_all()
            _stop_database(data_dir)
        return 2
    if not settings.DEBUG:
        call_command("collectstatic", interactive=False, verbosity=0)
    connections.close_all()

    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    python = sys.executable
    worker = Child("worker", [python, "-m", *worker_command(data_dir)])
    web = Child(
        "web server",
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
    )
    children = [web, worker]

    stopping = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    for child in children:
        child.start()
    print(f"\nExogram is running at http://{host}:{port}/  (Ctrl-C stops it)\n", flush=True)

    failed = False
    last_check = time.monotonic()
    while not stopping and not failed:
        time.sleep(0.5)
        now = time.monotonic()
        for child in children:
            if stopping:
                break
            if child.process is None:
                if now >= child.restart_at:
                    print(f"Starting the {child.name} again …", flush=True)
                    child.start()
                continue
            returncode = child.process.poll()
            if returncode is None:
                continue
            pid = child.process.pid
            delay = child.exited(now)
            if delay is None:
                print(
                    f"The {child.name} (pid {pid}) exited with {describe_exit(returncode)}, "
                    f"its {len(child.exits)}th exit in {QUICK_RESTART_WINDOW / 60:.0f} "
                    "minutes: starting it again will not mend this. Stopping Exogram; the "
                    "messages above say what went wrong.",
                    flush=True,
                )
                failed = True
                break
            print(
                f"The {child.name} (pid {pid}) exited with {describe_exit(returncode)}; "
                f"starting it again in {delay} s.",
                flush=True,
            )
        if embedded and time.monotonic() - last_check >= DATABASE_CHECK_INTERVAL:
            last_check = time.monotonic()
            if not server.is_running(data_dir) and not stopping:
                print("The embedded PostgreSQL has stopped; starting it again …", flush=True)
                try:
                    server.start(data_dir)
                except Exception as error:  # keep serving the pages that need no database
                    print(f"Could not start the embedded PostgreSQL: {error}", flush=True)

    print("\nStopping Exogram …", flush=True)
    for child in children:
        child.stop()
    for child in children:
        child.wait_and_clean_up()
    if embedded:
        _stop_database(data_dir)
    # Given up on a child: `make run` fails visibly (and systemd's Restart=on-failure acts).
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
