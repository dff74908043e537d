"""`GET /healthz`: can this process reach the database and the broker right now?

For Docker's HEALTHCHECK and any monitor: 200 when both answer, 503 (naming the one that
does not) otherwise. It shows no reader's data and needs no login. It also says whether the
background worker was seen lately ("ok", "late", "stopped", "never seen"; backups.heartbeat;
with "stopped", `worker_stopped_at` says when), without changing the status: the web server
is healthy without a worker, and restarting it would not bring one back.
"""

import logging

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from backups.heartbeat import worker_health

logger = logging.getLogger(__name__)

BROKER_TIMEOUT_SECONDS = 3


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return bool(cursor.fetchone() == (1,))
    except DatabaseError as error:
        logger.warning("health check: the database does not answer: %s", error)
        # A connection broken by a database restart is dropped, so the next request opens
        # a new one instead of failing on the dead socket.
        connection.close_if_unusable_or_obsolete()
        return False


def broker_ok() -> bool:
    from exogram.celery import app

    try:
        with app.connection_for_write() as broker:
            broker.ensure_connection(max_retries=1, timeout=BROKER_TIMEOUT_SECONDS)
    except Exception as error:  # kombu raises transport-specific errors
        logger.warning("health check: the broker does not answer: %s", error)
        return False
    return True


def _worker() -> dict[str, str]:
    try:
        state, stopped_at = worker_health(now=timezone.now())
    except DatabaseError:  # a database not migrated yet
        return {"worker": "unknown"}
    if stopped_at is None:
        return {"worker": state}
    return {"worker": state, "worker_stopped_at": stopped_at.isoformat()}


@require_GET
@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    checks = {"database": database_ok(), "broker": broker_ok()}
    body = {name: "ok" if ok else "unavailable" for name, ok in checks.items()}
    body.update(_worker() if checks["database"] else {"worker": "unknown"})
    return JsonResponse(body, status=200 if all(checks.values()) else 503)
