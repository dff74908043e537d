"""/status/: the instance's keeping (backups), for staff only."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from backups.nightly import LATE_AFTER, backup_status


@require_GET
@never_cache
@login_required
def status(request: HttpRequest) -> HttpResponse:
    # A reader who is not staff learns nothing, not even that the page exists.
    if not request.user.is_staff:
        raise Http404
    context = {
        "status": backup_status(now=timezone.now()),
        "late_hours": int(LATE_AFTER.total_seconds() // 3600),
    }
    return render(request, "backups/status.html", context)
