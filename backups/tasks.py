"""The nightly backup, sent by the beat unless EXOGRAM_BACKUP_DIR is `off`."""

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from backups.nightly import backup_nightly


# Never retried (a failure is recorded and shown; tomorrow's run tries again), and allowed
# far longer than ordinary tasks: a large library's dump takes minutes.
@shared_task(time_limit=4 * 3600, soft_time_limit=4 * 3600 - 60)
def nightly_backup() -> dict[str, object]:
    if settings.EXOGRAM_BACKUP_DIR is None:
        return {"skipped": "EXOGRAM_BACKUP_DIR is off"}
    run = backup_nightly(folder=settings.EXOGRAM_BACKUP_DIR, now=timezone.now())
    return {"status": run.status, "path": run.path, "bytes": run.size_bytes}
