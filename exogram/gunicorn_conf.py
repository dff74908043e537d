"""gunicorn settings for Exogram's web processes, for `make run` and the Docker image
(`gunicorn -c python:exogram.gunicorn_conf`)."""

import logging
import os
from typing import Any

logger = logging.getLogger("exogram.warm")

# The application and its worker: one event loop per process holds every connection and
# reads each request whole, with deadlines; only a complete request takes one of the
# process's threads (exogram/serving.py). With gunicorn's threaded worker, 8 clients that
# sent their headers a byte at a time held all 8 threads of 2 processes and /healthz went
# unanswered; see docs/security.md for the figures.
wsgi_app = "exogram.asgi:application"
worker_class = "exogram.serving.ExogramWorker"
# Threads, not only processes: two sync workers queued 20 readers behind each other (p95
# 1.1 s on a 9,000-highlight library); a page spends part of its time waiting on
# PostgreSQL, which threads overlap. `make load` measures it: on 2 cores, 3 processes of 4
# threads measured a p95 of 469-644 ms and 4 of 2 586 ms, against 409-557 ms for 2 of 4.
# WEB_THREADS is read by exogram/asgi.py, which runs Django on that many threads.
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "4"))
# Long work (large imports, account deletion) runs on the Celery worker, so no request
# needs long; 60 s leaves room for an inline import of a file just under the background
# threshold on a busy machine, and still ends a request stuck on a dead database.
timeout = int(os.environ.get("WEB_TIMEOUT", "60"))
graceful_timeout = 30
# No keep-alive (WEB_KEEPALIVE, read by exogram/asgi.py too): every response says
# "Connection: close". Kept alive, a connection stays with the process that accepted it:
# under `make load` with gunicorn's threaded worker, one of the two processes held 17 to 21
# of the 21 connections in 5 runs of 7 while the other idled, and p95 was 475, 383 and 766
# ms kept alive against 353, 367 and 548 ms without (load average 3-9 from other work on
# the 2 cores). The cost: a browser opens a connection per request.
keepalive = int(os.environ.get("WEB_KEEPALIVE", "0"))
# gunicorn 27's control socket (`gunicornc`) sits at one path per OS user,
# ~/.gunicorn/gunicorn.ctl: two instances of one user (a restored copy beside the
# library) took it from each other, and stopping either removed it for both. Exogram uses
# none of it.
control_socket_disable = True
# The access log is exogram.serving's (paths without their query strings), on stdout.


def post_worker_init(worker: Any) -> None:
    # After the worker has loaded the WSGI app (Django is set up), before its first
    # request: each forked worker warms its own model (an ONNX session does not survive a
    # fork, so warming the master with --preload would not do).
    from exogram.warm import enabled, warm_up

    if enabled():
        timings = warm_up()
        logger.info("web process %s warmed: %s", worker.pid, timings)
