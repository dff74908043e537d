"""gunicorn settings for Exogram's web processes, for `make run` and the Docker image
(`gunicorn -c python:exogram.gunicorn_conf`)."""

import logging
import os
from typing import Any

logger = logging.getLogger("exogram.warm")

# Threads, not only processes: two sync workers queued 20 readers behind each other (p95
# 1.1 s on a 9,000-highlight library); a page spends most of its time waiting on
# PostgreSQL, which threads overlap. `make load` measures it.
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = int(os.environ.get("WEB_THREADS", "4"))
# Long work (large imports, account deletion) runs on the Celery worker, so no request
# needs long; 60 s leaves room for an inline import of a file just under the background
# threshold on a busy machine, and still ends a request stuck on a dead database.
timeout = int(os.environ.get("WEB_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
accesslog = "-"


def post_worker_init(worker: Any) -> None:
    # After the worker has loaded the WSGI app (Django is set up), before its first
    # request: each forked worker warms its own model (an ONNX session does not survive a
    # fork, so warming the master with --preload would not do).
    from exogram.warm import enabled, warm_up

    if enabled():
        timings = warm_up()
        logger.info("web process %s warmed: %s", worker.pid, timings)
