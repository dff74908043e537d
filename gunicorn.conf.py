"""Gunicorn's settings for `make run` and the Docker image (gunicorn reads this file from
the working directory by default; `exogram/run.py` names it explicitly)."""

import os

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
