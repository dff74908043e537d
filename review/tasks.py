"""Thin Celery tasks for the daily review."""

from celery import shared_task
from django.utils import timezone

from review.services import review_emails_send


@shared_task
def send_review_emails() -> int:
    # Not acks_late: a retried run is harmless (each reader's day is claimed before the
    # send), but a lost one only costs a day's e-mail.
    return review_emails_send(today=timezone.localdate())
