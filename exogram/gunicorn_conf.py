"""gunicorn settings for Exogram's web processes (`gunicorn -c python:exogram.gunicorn_conf`)."""

import logging
from typing import Any

logger = logging.getLogger("exogram.warm")


def post_worker_init(worker: Any) -> None:
    # After the worker has loaded the WSGI app (Django is set up), before its first
    # request: each forked worker warms its own model (an ONNX session does not survive a
    # fork, so warming the master with --preload would not do).
    from exogram.warm import enabled, warm_up

    if enabled():
        timings = warm_up()
        logger.info("web process %s warmed: %s", worker.pid, timings)
