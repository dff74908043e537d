"""The worker's heartbeat, and what /status/ and /healthz say of it.

Each worker writes its row every minute from a thread of its main process, started when
the worker is ready (exogram/celery.py). Not a task sent by the beat: tasks wait their
turn in one queue, and behind an import's hundreds of embedding turns a heartbeat task
would arrive hours late from a worker working flat out. The thread beats while the pool
is busy, so silence means the worker is not running (stopped, killed, or its host down).
"""

import contextlib
import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone
from django.utils.timesince import timesince
from django.utils.translation import gettext

from backups.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 60
# Five beats missed: long enough for a database restart, short enough that a stopped
# worker is named before a reader wonders why nothing is embedded.
LATE_AFTER = timedelta(minutes=5)
# A worker not seen for this long is forgotten: a container's hostname is its id, and each
# one recreated would otherwise stay listed for good.
FORGET_AFTER = timedelta(days=7)


def heartbeat_record(*, hostname: str, now: datetime, started_at: datetime) -> None:
    WorkerHeartbeat.objects.filter(seen_at__lt=now - FORGET_AFTER).delete()
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname,
        defaults={
            "seen_at": now,
            "started_at": started_at,
            "code_version": settings.EXOGRAM_CODE_VERSION,
        },
    )


class Heartbeat(threading.Thread):
    """Records `hostname` as seen now, then every HEARTBEAT_SECONDS until stopped."""

    def __init__(self, hostname: str) -> None:
        super().__init__(name="exogram-heartbeat", daemon=True)
        self.hostname = hostname
        self.started_at = timezone.now()
        self.stopping = threading.Event()

    def run(self) -> None:
        while True:
            try:
                close_old_connections()
                heartbeat_record(
                    hostname=self.hostname, now=timezone.now(), started_at=self.started_at
                )
            except Exception:  # the database down or restarting: the next beat tries again
                logger.exception("the worker's heartbeat was not recorded")
            finally:
                with contextlib.suppress(Exception):
                    connection.close()  # this thread's own; nothing held between beats
            if self.stopping.wait(HEARTBEAT_SECONDS):
                return

    def stop(self) -> None:
        self.stopping.set()


def _ago(then: datetime, now: datetime) -> str:
    return timesince(then, now, depth=1)


def worker_wording(*, last_seen: datetime | None, now: datetime) -> tuple[bool, str]:
    """Whether the worker is late, and the sentence that says so, in the active language."""
    if last_seen is None:
        return True, gettext(
            "The background worker has never been seen: imports and embeddings wait until "
            "it runs (make run starts it)."
        )
    if now - last_seen > LATE_AFTER:
        return True, gettext(
            "The background worker has not been seen for %(duration)s: imports and "
            "embeddings wait until it runs again."
        ) % {"duration": _ago(last_seen, now)}
    if now - last_seen < timedelta(minutes=1):
        return False, gettext("The background worker is running: seen less than a minute ago.")
    return False, gettext("The background worker is running: seen %(duration)s ago.") % {
        "duration": _ago(last_seen, now)
    }


@dataclass(frozen=True)
class WorkerStatus:
    late: bool
    message: str
    workers: list[WorkerHeartbeat]
    # Workers seen lately whose code is not this web process's (one not restarted after
    # an upgrade).
    other_code: list[WorkerHeartbeat]


def worker_status(*, now: datetime) -> WorkerStatus:
    workers = list(WorkerHeartbeat.objects.all()[:20])
    late, message = worker_wording(last_seen=workers[0].seen_at if workers else None, now=now)
    other_code = [
        worker
        for worker in workers
        if worker.code_version != settings.EXOGRAM_CODE_VERSION
        and now - worker.seen_at <= LATE_AFTER
    ]
    return WorkerStatus(late=late, message=message, workers=workers, other_code=other_code)


def worker_health(*, now: datetime) -> str:
    """For /healthz: "ok", "late" or "never seen"."""
    last = WorkerHeartbeat.objects.values_list("seen_at", flat=True).first()
    if last is None:
        return "never seen"
    return "late" if now - last > LATE_AFTER else "ok"
