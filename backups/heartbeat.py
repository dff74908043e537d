"""The worker's heartbeat, and what /status/ and /healthz say of it.

Each worker writes its row every minute from a thread of its main process, started when
the worker is ready (exogram/celery.py). Not a task sent by the beat: tasks wait their
turn in one queue, and behind an import's hundreds of embedding turns a heartbeat task
would arrive hours late from a worker working flat out. The thread beats while the pool
is busy, so silence means the worker is not running (killed, or its host down). A worker
stopped cleanly (Ctrl-C on make run, SIGTERM, docker compose stop) says so once more on its
way out, so the pages name it stopped at once instead of calling it running, then late.
"""

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone
from django.utils.formats import date_format
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
# How long a stopping worker waits for its stop to be written: the database may be down or
# stopping too, and a shutdown must never hang on it (Docker kills after 10 s, make run 30).
STOP_WAIT_SECONDS = 5.0


def heartbeat_record(*, hostname: str, now: datetime, started_at: datetime) -> None:
    WorkerHeartbeat.objects.filter(seen_at__lt=now - FORGET_AFTER).delete()
    WorkerHeartbeat.objects.update_or_create(
        hostname=hostname,
        defaults={
            "seen_at": now,
            "started_at": started_at,
            "code_version": settings.EXOGRAM_CODE_VERSION,
            "stopped_at": None,  # started again
        },
    )


def heartbeat_stopped(*, hostname: str, now: datetime, started_at: datetime) -> None:
    # Only this run's row: a worker started since under the same host name is running.
    WorkerHeartbeat.objects.filter(hostname=hostname, started_at=started_at).update(
        seen_at=now, stopped_at=now
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
            self._write(heartbeat_record, "the worker's heartbeat was not recorded")
            if self.stopping.wait(HEARTBEAT_SECONDS):
                break
        # Written by this thread, after its last beat, so no beat can undo it.
        self._write(heartbeat_stopped, "the worker's stop was not recorded")

    def _write(self, record: Callable[..., None], failure: str) -> None:
        try:
            close_old_connections()
            record(hostname=self.hostname, now=timezone.now(), started_at=self.started_at)
        except Exception:  # the database down or restarting: said, never raised
            logger.exception(failure)
        finally:
            with contextlib.suppress(Exception):
                connection.close()  # this thread's own; nothing held between beats

    def stop(self, *, wait_seconds: float = 0) -> bool:
        """Ends the beats and records the stop; waits up to `wait_seconds` for that to be
        written, and says whether it was (a thread stuck on the database is a daemon: it
        never holds the process up)."""
        self.stopping.set()
        if wait_seconds:
            self.join(timeout=wait_seconds)
        return not self.is_alive()


def _ago(then: datetime, now: datetime) -> str:
    return timesince(then, now, depth=1)


def worker_wording(
    *, last_seen: datetime | None, now: datetime, stopped_at: datetime | None = None
) -> tuple[bool, str]:
    """Whether to warn (the worker is not running), and the sentence that says so, in the
    active language."""
    if stopped_at is not None:
        values = {
            "time": date_format(timezone.localtime(stopped_at), "DATETIME_FORMAT"),
            "duration": _ago(stopped_at, now),
        }
        if now - stopped_at < timedelta(minutes=1):
            return True, gettext(
                "The background worker stopped cleanly on %(time)s UTC (less than a minute "
                "ago): imports and embeddings wait until it is started again (make run "
                "starts it; with Docker, docker compose start worker)."
            ) % values
        return True, gettext(
            "The background worker stopped cleanly on %(time)s UTC (%(duration)s ago): "
            "imports and embeddings wait until it is started again (make run starts it; "
            "with Docker, docker compose start worker)."
        ) % values
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


def _running(worker: WorkerHeartbeat, now: datetime) -> bool:
    return worker.stopped_at is None and now - worker.seen_at <= LATE_AFTER


def _spoken_of(workers: list[WorkerHeartbeat], now: datetime) -> WorkerHeartbeat | None:
    """The worker the page's sentence is about: the latest seen of those running, else the
    latest seen (a stop counts as seen), so one worker stopped does not hide another that
    runs, and an old silent one does not hide a later clean stop."""
    running = [worker for worker in workers if _running(worker, now)]
    return (running or workers)[0] if workers else None


class WorkerState(StrEnum):
    """Of the worker the page's sentence is about (/healthz says RUNNING as "ok")."""

    RUNNING = "running"
    LATE = "late"
    STOPPED = "stopped"
    NEVER_SEEN = "never seen"


@dataclass(frozen=True)
class WorkerStatus:
    state: WorkerState
    message: str
    workers: list[WorkerHeartbeat]
    # Workers running whose code is not this web process's (one not restarted after an
    # upgrade).
    other_code: list[WorkerHeartbeat]

    @property
    def running(self) -> bool:
        return self.state == WorkerState.RUNNING


def _state(worker: WorkerHeartbeat | None, now: datetime) -> WorkerState:
    if worker is None:
        return WorkerState.NEVER_SEEN
    if worker.stopped_at is not None:
        return WorkerState.STOPPED
    return WorkerState.RUNNING if _running(worker, now) else WorkerState.LATE


def worker_status(*, now: datetime) -> WorkerStatus:
    workers = list(WorkerHeartbeat.objects.all()[:20])
    spoken_of = _spoken_of(workers, now)
    _, message = worker_wording(
        last_seen=spoken_of.seen_at if spoken_of else None,
        now=now,
        stopped_at=spoken_of.stopped_at if spoken_of else None,
    )
    other_code = [
        worker
        for worker in workers
        if worker.code_version != settings.EXOGRAM_CODE_VERSION and _running(worker, now)
    ]
    return WorkerStatus(
        state=_state(spoken_of, now), message=message, workers=workers, other_code=other_code
    )


def worker_health(*, now: datetime) -> tuple[str, datetime | None]:
    """For /healthz: "ok", "late", "stopped" or "never seen", and when it stopped."""
    spoken_of = _spoken_of(list(WorkerHeartbeat.objects.all()[:20]), now)
    state = _state(spoken_of, now)
    said = "ok" if state == WorkerState.RUNNING else state.value
    return said, (spoken_of.stopped_at if spoken_of else None)
