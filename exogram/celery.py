"""The Celery app. Tasks subclass DjangoTask, so `task.delay_on_commit(...)` exists."""

import ctypes
import logging
import os
import signal
import socket
import sys
from typing import Any

from celery import Celery
from celery.signals import (
    beat_embedded_init,
    task_prerun,
    worker_process_init,
    worker_ready,
    worker_shutdown,
)

from exogram import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")
# The file broker takes the queues in their order, as Redis is asked to (exogram.broker).
broker.register()

app = Celery("exogram", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
def _forget_logged_queries(**kwargs: Any) -> None:
    # With DEBUG on (as under `make run`), Django logs each connection's last 9,000
    # statements and forgets them at every web request. A worker has no requests, and an
    # embedding task's statements carry vectors as text (about 2 MB for 256 highlights),
    # so the log would grow to tens of MB per worker process.
    from django.db import reset_queries

    reset_queries()


@worker_process_init.connect
def _yield_the_cores_to_pages(**kwargs: Any) -> None:
    # In each process that runs tasks (the pool's, or the solo worker itself), not in the
    # prefork parent: a process that starts the embedded PostgreSQL must not hand it its
    # niceness. Never lowered (unprivileged, it cannot be; set higher, it was meant).
    from django.conf import settings

    if os.getpriority(os.PRIO_PROCESS, 0) < settings.EXOGRAM_WORKER_NICE:
        os.setpriority(os.PRIO_PROCESS, 0, settings.EXOGRAM_WORKER_NICE)


@beat_embedded_init.connect
def _die_with_the_worker(**kwargs: Any) -> None:
    # The beat of `worker --beat` is a child of the worker's main process. Killed with
    # SIGKILL (the OOM killer), that process takes nothing with it, and its beat went on
    # sending the sweeps and the nightly backup beside the next worker's beat. Linux's
    # parent-death signal ends it with its parent, wherever the worker was started
    # (exogram/run.py also kills the worker's process group; Docker its container).
    if sys.platform.startswith("linux"):
        pr_set_pdeathsig = 1
        parent = os.getppid()
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
        if os.getppid() != parent:  # the worker died before the line above
            os._exit(1)


_heartbeats: list[Any] = []


@worker_ready.connect
def _heartbeat_start(sender: Any = None, **kwargs: Any) -> None:
    # In the worker's main process, beside the pool: /status/ says when it was last seen
    # (backups.heartbeat says why a thread and not a task).
    from backups.heartbeat import Heartbeat

    heartbeat = Heartbeat(hostname=str(getattr(sender, "hostname", "") or socket.gethostname()))
    heartbeat.start()
    _heartbeats.append(heartbeat)


@worker_shutdown.connect
def _heartbeat_stop(**kwargs: Any) -> None:
    # A clean stop (SIGTERM, Ctrl-C on make run, docker compose stop) is recorded, so
    # /status/ says "stopped" at once; a bounded wait, for the database may be down too.
    # (A cold shutdown or SIGKILL sends no signal: the heartbeat's silence says it.)
    from backups.heartbeat import STOP_WAIT_SECONDS

    for heartbeat in _heartbeats:
        if not heartbeat.stop(wait_seconds=STOP_WAIT_SECONDS):
            logging.getLogger(__name__).warning(
                "the worker's stop was not recorded within %s s", STOP_WAIT_SECONDS
            )
