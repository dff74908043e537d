"""Thin Celery tasks: each takes ids and calls one service."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from accounts import services


@shared_task(
    acks_late=True,  # safe: reader_delete can run twice
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=8,
)
def delete_reader(reader_id: int) -> None:
    services.reader_delete(reader_id=reader_id)


@shared_task
def sweep_account_deletions() -> int:
    """Resend deletions whose task was lost or whose worker died."""
    ids = services.deletions_to_resend()
    for reader_id in ids:
        services.reader_delete_send(reader_id=reader_id)
    return len(ids)
