"""/status/: the instance's keeping (backups, the worker, the code), for staff only."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from backups.heartbeat import worker_status
from backups.nightly import LATE_AFTER, backup_status
from books.importing.selectors import imports_waiting_everyone
from exogram.queues import queued_tasks


@require_GET
@never_cache
@login_required
def status(request: HttpRequest) -> HttpResponse:
    # A reader who is not staff is told the page is the operator's, and nothing of what it
    # shows. Its existence is no secret: the README names it, and a visitor who is not
    # signed in is sent to log in here as on every page (an unknown address is a 404).
    if not request.user.is_staff:
        return render(request, "backups/operator_only.html", status=403)
    now = timezone.now()
    context = {
        "status": backup_status(now=now),
        "late_hours": int(LATE_AFTER.total_seconds() // 3600),
        "worker": worker_status(now=now),
        "code_version": settings.EXOGRAM_CODE_VERSION,
        # Why imports wait: how many, and what is queued ahead of them.
        "imports": imports_waiting_everyone(),
        "queued_tasks": queued_tasks(),
    }
    return render(request, "backups/status.html", context)
