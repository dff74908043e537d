from django.contrib import admin
from django.http import HttpRequest

from backups.models import BackupRun


@admin.register(BackupRun)
class BackupRunAdmin(admin.ModelAdmin[BackupRun]):
    list_display = ["finished_at", "kind", "status", "size_bytes", "seconds", "path", "error"]
    list_filter = ["status", "kind"]

    # A record of what happened: written by the backup itself, never by hand.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: BackupRun | None = None) -> bool:
        return False
