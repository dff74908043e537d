"""A library through the app's own path: a `My Clippings.txt` imported, embedded and
connected in this process, as a worker would do it. Django; never imported by the app."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from accounts.models import User


def reader_with_library(*, username: str, data: bytes, replace: bool) -> User:
    """A new reader `username` holding `data` imported, embedded and connected. An existing
    reader of that name is replaced when `replace`, refused otherwise."""
    from django.db import transaction

    from accounts.models import User
    from accounts.services import reader_delete
    from books.importing.services import clippings_import
    from exogram.celery import app

    existing = User.objects.filter(username=username).first()
    if existing is not None:
        if not replace:
            raise ValueError(f"a reader {username} exists already")
        reader_delete(reader_id=existing.pk)
    with transaction.atomic():
        reader = User.objects.create_user(username, password=None)
    # The pipeline's tasks run here, eagerly (see seed_demo_library), so no worker is needed.
    saved = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    trace_logger = logging.getLogger("celery.app.trace")
    trace_level = trace_logger.level
    trace_logger.setLevel(logging.WARNING)
    try:
        clippings_import(reader=reader, data=data, file_name="My Clippings.txt")
    finally:
        app.conf.task_always_eager, app.conf.task_eager_propagates = saved
        trace_logger.setLevel(trace_level)
    return reader
