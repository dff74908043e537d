from django.db import models
from django.utils.translation import gettext_lazy as _


class BackupRun(models.Model):
    """One backup, nightly, by hand or before migrating, recorded when it has finished (a
    row written before would be inside its own dump, and come back from a restore as
    forever running)."""

    class Kind(models.TextChoices):
        NIGHTLY = "nightly", _("nightly")
        MANUAL = "manual", _("by hand")
        # Taken by `make run` before it applied migrations (backups.pre_migrate).
        PRE_MIGRATE = "pre-migrate", _("before migrating")

    class Status(models.TextChoices):
        OK = "ok", _("written")
        FAILED = "failed", _("failed")

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices)
    path = models.CharField(max_length=1000)
    size_bytes = models.BigIntegerField(default=0)
    seconds = models.FloatField(default=0)
    pruned = models.PositiveIntegerField(default=0, help_text="Old backups removed after it.")
    error = models.TextField(blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()

    class Meta:
        ordering = ["-finished_at"]
        indexes = [
            # The status page: the latest runs, and the latest good one.
            models.Index(fields=["status", "-finished_at"], name="backuprun_status_finished"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} backup {self.status} at {self.finished_at:%Y-%m-%d %H:%M}"


class WorkerHeartbeat(models.Model):
    """A worker (one row per Celery host name) and when it last said it was running:
    written every minute by a thread of the worker's main process (backups.heartbeat), and
    once more, with `stopped_at`, when the worker stops cleanly."""

    hostname = models.CharField(max_length=255, unique=True)
    code_version = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField()
    # Set (with seen_at) by a clean shutdown, cleared by the next start's first beat.
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-seen_at"]

    def __str__(self) -> str:
        return f"{self.hostname} seen at {self.seen_at:%Y-%m-%d %H:%M:%S}"
