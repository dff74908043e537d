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


@shared_task
def refresh_reading_space(model_id: str) -> int:
    """Gone with the reading space (affinity.reading); kept so that a message queued
    before the upgrade is consumed, not left failing as an unknown task."""
    return 0
