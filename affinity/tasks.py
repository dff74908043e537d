"""Thin Celery tasks: each takes ids and calls one service."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from accounts.models import User
from affinity.services import centroid_refresh


@shared_task(
    acks_late=True,  # safe: a refresh recomputes from the current vectors, echo pairs are unique
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=8,
)
def refresh_centroid(reader_id: int) -> int:
    reader = User.objects.filter(pk=reader_id).first()
    if reader is None:  # deleted since the refresh was queued
        return 0
    return centroid_refresh(reader=reader).highlight_count


@shared_task(
    acks_late=True,  # safe: it recomputes from current vectors, under an advisory lock
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=8,
)
def refresh_reading_space(model_id: str) -> int:
    from affinity.services import reading_space_refresh

    space = reading_space_refresh(model_id=model_id)
    return space.version if space else 0
