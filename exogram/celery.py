"""The Celery app. Tasks subclass DjangoTask, so `task.delay_on_commit(...)` exists."""

import os
from typing import Any

from celery import Celery
from celery.signals import task_prerun

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")

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
