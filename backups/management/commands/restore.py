"""`manage.py restore DIR [--force]`: bring a backup back into an empty database."""

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from backups.postgres import ClientMissing
from backups.services import BackupError, RestoreRefused, backup_restore
from exogram.counting import counted
from exogram.start_writes import start_writes_undo
from exogram.version import UNKNOWN, code_version_short


class Command(BaseCommand):
    help = (
        "Restore a backup made by `manage.py backup` into this instance's database, which "
        "must be empty (a new data folder, or a new database) unless --force."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path, help="the backup's folder")
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace everything in a database that is not empty",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["source"].resolve()
        try:
            manifest = backup_restore(source=source, force=options["force"])
        except RestoreRefused as error:
            # Nor what this process made on starting (a new data folder, its key): the
            # next restore, of a good backup, finds the target as the operator left it.
            start_writes_undo()
            raise CommandError(f"{str(error).rstrip('.')}. Nothing was written.") from None
        except (BackupError, ClientMissing) as error:
            raise CommandError(str(error)) from None
        counts = manifest["counts"]
        self.stdout.write(
            f"Restored {counted(counts.get('accounts_user', 0), 'reader')} and "
            f"{counted(counts.get('books_highlight', 0), 'highlight')} from {source} "
            f"(backed up {manifest['created_at']} by Exogram {manifest['exogram_version']})."
        )
        backed_up = manifest.get("code_version", UNKNOWN)  # none before 2026-12-06
        if backed_up != settings.EXOGRAM_CODE_VERSION:
            self.stdout.write(
                f"The backup came from other code: commit {code_version_short(backed_up)}; "
                f"this is commit {code_version_short(settings.EXOGRAM_CODE_VERSION)}."
            )
        # A backup of an older Exogram: its migrations are applied now, as `make run` would.
        call_command("migrate", interactive=False, verbosity=0)
        if manifest["secret_key"] != "file":
            self.stdout.write("Set SECRET_KEY to the key the backed-up instance used.")
