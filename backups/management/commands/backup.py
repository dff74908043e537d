"""`manage.py backup [--to DIR]`: a backup of the whole instance (see backups.services)."""

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from backups.models import BackupRun
from backups.nightly import backup_record, folder_name
from backups.postgres import ClientMissing
from backups.services import BackupError, backup_create
from exogram.counting import counted
from exogram.env import backups_beside


class Command(BaseCommand):
    help = "Back up the database, the secret key and a manifest into a new folder."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--to",
            type=Path,
            help="the new folder (default: manual-<time> in EXOGRAM_BACKUP_DIR, where the "
            "nightly backups go: <data dir>-backups beside EXOGRAM_DATA_DIR unless set)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        now = timezone.now()
        # Beside the nightly ones; with them turned off, where they would go.
        parent = settings.EXOGRAM_BACKUP_DIR or backups_beside(Path(settings.EXOGRAM_DATA_DIR))
        to: Path = (options["to"] or parent / folder_name("manual", now)).resolve()
        started = time.monotonic()
        try:
            manifest = backup_create(to=to)
        except (BackupError, ClientMissing) as error:
            self._record(to, now, started, error=str(error))
            raise CommandError(str(error)) from None
        self._record(to, now, started)
        size = sum(entry["bytes"] for entry in manifest["files"].values())
        highlights = manifest["counts"].get("books_highlight", 0)
        readers = manifest["counts"].get("accounts_user", 0)
        self.stdout.write(
            f"Backed up {counted(readers, 'reader')} and {counted(highlights, 'highlight')} "
            f"to {to} "
            f"({size / 1e6:.1f} MB in {manifest['seconds']:.1f} s)."
        )
        if manifest["secret_key"] != "file":
            self.stdout.write(
                "SECRET_KEY comes from the environment: keep it with this backup, it is not in it."
            )

    def _record(self, to: Path, now: Any, started: float, error: str = "") -> None:
        # Outside the dump (it is written after): the status page lists backups by hand too.
        try:
            backup_record(
                kind=BackupRun.Kind.MANUAL, path=to, started_at=now,
                seconds=time.monotonic() - started, error=error,
            )  # fmt: skip
        except Exception as failure:  # a database that is down: the backup failed anyway
            self.stderr.write(f"(the backup could not be recorded: {failure})")
