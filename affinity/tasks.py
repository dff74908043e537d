from celery import shared_task

from accounts.models import User
from affinity.services import centroid_refresh


@shared_task(acks_late=True)  # idempotent: recomputes from the current vectors
def refresh_centroid(reader_id: int) -> int:
    reader = User.objects.filter(pk=reader_id).first()
    if reader is None:
        return 0
    return centroid_refresh(reader=reader).highlight_count
