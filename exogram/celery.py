"""The Celery app. Tasks subclass DjangoTask, so `task.delay_on_commit(...)` exists."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "exogram.settings")

app = Celery("exogram", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
