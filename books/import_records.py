"""An import's own records: the Import row (its status and report), the file a worker has
yet to read (ImportUpload) and how far its save has got (ImportSaving). Apart from the
library's rows (books.models, which lists them too) because they change with the import's
workflow, not with what a highlight is."""

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _


class Import(models.Model):
    class Status(models.TextChoices):
        # A large file is imported by a worker: queued, then reading, then saving.
        QUEUED = "queued", _("Waiting for a worker")
        READING = "reading", _("Reading the file")
        SAVING = "saving", _("Saving")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")
        # Refused at upload (too large, empty, not a file Exogram reads): nothing was
        # added and nothing of the file is kept, not even its fingerprint; `error` says why.
        REFUSED = "refused", _("Refused: nothing added")

    # Statuses of an import that is still under way (its report polls).
    UNDER_WAY = (Status.QUEUED, Status.READING, Status.SAVING, Status.RUNNING)
    # How many titles `counts` keeps of the books an import touched, and of those it changed
    # (`book_titles`, `changed_titles`): what Past imports shows beside the file's name.
    TITLES_KEPT = 3

    reader = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="imports"
    )
    code = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    file_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    # The import report: books touched, new highlights, duplicates, merges, notes, …
    counts = models.JSONField(default=dict, blank=True)
    # [{"line": 12, "message": "…"}, …] for every entry that could not be read.
    problems = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True, help_text="Why the import failed, when it did.")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # How many times a worker took this import (books.importing.background.import_claim):
    # the sweep gives up on one whose worker keeps dying.
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            # The reader's list of past imports, newest first.
            models.Index(fields=["reader", "-started_at"], name="import_reader_started"),
        ]

    def __str__(self) -> str:
        return f"{self.file_name} ({self.started_at:%Y-%m-%d %H:%M})"

    def get_absolute_url(self) -> str:
        return reverse("import_report", args=[self.code])

    @property
    def unread(self) -> int:
        """How many of the file's entries could not be read (the problems that are not a
        warning about an entry kept): what its report lists under "could not be read"."""
        return sum(1 for problem in self.problems if not problem.get("kept"))

    @property
    def added_nothing(self) -> bool:
        """Whether this import, done, changed no book: a file imported again. Its "new since"
        list of connections is empty because there is nothing new, not because of a filter.
        An import kept before `books_changed` was counted is never said to have added nothing."""
        return self.status == self.Status.DONE and self.counts.get("books_changed") == 0

    @property
    def left_out(self) -> "LeftOut":
        """The file's entries left out because the reader had deleted them, by its counts
        (books.importing.work.ImportReport); none for an import kept before a count."""
        counts = self.counts
        return LeftOut(
            deleted=counts.get("deleted_skipped", 0),
            removed=counts.get("already_deleted", 0),
            on_device=counts.get("deleted_on_device", 0),
        )


@dataclass(frozen=True)
class LeftOut:
    """Entries of an imported file that stayed out of the library because the reader had
    deleted them: a re-import that added nothing because of them must say so."""

    # Versions of highlights (and notes on them) still in Recently deleted…
    deleted: int
    # …of ones deleted and since removed for good (books.importing.purged)…
    removed: int
    # …and of ones deleted on the device (books.importing.device_deleted).
    on_device: int

    @property
    def total(self) -> int:
        return self.deleted + self.removed + self.on_device


class ImportUpload(models.Model):
    """The file of an import that runs in the background, until its worker has read it.

    In the database rather than a file: a worker on another machine reads it as well.
    """

    the_import = models.OneToOneField(Import, on_delete=models.CASCADE, related_name="upload")
    data = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"upload of {self.the_import_id}"


def percent_under_way(done: int, total: int) -> int:
    """`done` of `total` as a percentage, never 100: what follows the count (the commit, the
    screening of the entries) is still under way when it reaches the end."""
    return min(99, done * 100 // total) if total else 0


def percent_step(percent: int) -> int:
    """A percentage in steps of 5: a progress bar's width is a class (CSP, no inline style)."""
    return percent // 5 * 5


class ImportSaving(models.Model):
    """How far the save of a background import has got (books.importing.saving).

    A row of its own, not columns of the Import: the save is one transaction that writes
    the import's row (its report, part by part) and so locks it until the commit, while
    this row is written from another connection as the save goes on. The save never
    touches it, so those writes neither wait for it nor roll back with it.
    """

    the_import = models.OneToOneField(
        Import, on_delete=models.CASCADE, primary_key=True, related_name="saving"
    )
    # Highlights of the file gone through, of all it holds (Import.counts' saving_highlights).
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField()
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"saving of {self.the_import_id}: {self.done} of {self.total}"

    @property
    def percent(self) -> int:
        # The last part's rows, and the commit, come after the last highlight is gone
        # through; the page reloads on the report when it is done.
        return percent_under_way(self.done, self.total)

    @property
    def percent_step(self) -> int:
        return percent_step(self.percent)
