"""Before `make run` applies migrations to a library that holds data, a backup.

Some migrations write the data again (books 0033, 0037): without a backup taken before them,
an upgrade (`git pull`, `make run`) has no way back. So when migrations are pending on a
database where the project's apps were migrated before (not a fresh install), a backup is
taken first, beside the nightly ones (or, with those off, where they would go), and the
migrations are applied only if it was written. Like backups by hand, these are never pruned.
"""

import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.db import connections
from django.db.migrations.executor import MigrationExecutor

from backups.models import BackupRun
from backups.nightly import FAILED, backup_record, backups_folder_make, folder_name
from backups.services import backup_create
from exogram.env import backups_beside

SKIP_VARIABLE = "EXOGRAM_SKIP_PRE_MIGRATE_BACKUP"
# How many pending migrations the one line names; the rest are counted.
NAMED = 3


class PreMigrateBackupFailed(RuntimeError):
    """The backup before migrating could not be written: nothing was migrated."""


def _project_apps() -> set[str]:
    """The labels of this project's own apps (not Django's, not installed packages')."""
    from django.apps import apps

    base = Path(settings.BASE_DIR).resolve()
    return {
        config.label
        for config in apps.get_app_configs()
        if Path(config.path).resolve().parent == base
    }


def _describe(pending: list[str]) -> str:
    named = ", ".join(pending[:NAMED])
    more = f" and {len(pending) - NAMED} more" if len(pending) > NAMED else ""
    count = f"{len(pending)} migration{'s' if len(pending) != 1 else ''}"
    return f"{count} ({named}{more})"


def migrate_with_backup(*, now: datetime, say: Callable[[str], None]) -> Path | None:
    """Apply the pending migrations, after a backup when the database holds a library.

    Returns the backup's folder (None when none was taken: nothing pending, a fresh
    install, or EXOGRAM_SKIP_PRE_MIGRATE_BACKUP). Raises PreMigrateBackupFailed, having
    migrated nothing, when the backup could not be written.
    """
    executor = MigrationExecutor(connections["default"])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    pending = [f"{migration.app_label}.{migration.name}" for migration, _backwards in plan]
    project = _project_apps()
    holds_data = any(app in project for app, _name in executor.loader.applied_migrations)
    backup: tuple[Path, float] | None = None
    if pending and holds_data:
        if settings.EXOGRAM_SKIP_PRE_MIGRATE_BACKUP:
            say(f"Applying {_describe(pending)} without a backup first ({SKIP_VARIABLE}).")
        else:
            backup = _backup(pending=pending, now=now, say=say)
    try:
        call_command("migrate", interactive=False, verbosity=1)
    finally:
        if backup is not None:
            # Recorded once the tables are the code's own (a migration may change them):
            # the status page lists it beside the nightly ones and those by hand.
            _record(backup[0], now=now, seconds=backup[1], say=say)
    return backup[0] if backup else None


def _backup(*, pending: list[str], now: datetime, say: Callable[[str], None]) -> tuple[Path, float]:
    """The backup's folder and how long it took; PreMigrateBackupFailed if not written."""
    # With nightly backups off, where they would go, as `manage.py backup` does: an upgrade
    # is the moment a library is most at risk, and one folder per upgrade costs little.
    folder = settings.EXOGRAM_BACKUP_DIR or backups_beside(Path(settings.EXOGRAM_DATA_DIR))
    path = Path(folder) / folder_name(BackupRun.Kind.PRE_MIGRATE, now)
    started = time.monotonic()
    try:
        backups_folder_make(Path(folder))
        backup_create(to=path)
    except Exception as error:
        error_text = FAILED % {"kind": type(error).__name__, "error": error}
        _record(path, now=now, seconds=time.monotonic() - started, say=say, error=error_text)
        raise PreMigrateBackupFailed(
            f"Could not back up the library before applying {_describe(pending)}: "
            f"{error_text}\nNothing was migrated. Fix the cause and run `make run` again, or "
            f"set {SKIP_VARIABLE}=1 to apply them without a backup."
        ) from error
    say(f"Before applying {_describe(pending)}: backup written to {path}")
    return path, time.monotonic() - started


def _record(
    path: Path, *, now: datetime, seconds: float, say: Callable[[str], None], error: str = ""
) -> None:
    try:
        backup_record(kind=BackupRun.Kind.PRE_MIGRATE, path=path, started_at=now,
                      seconds=seconds, error=error)  # fmt: skip
    except Exception as failure:  # tables older than the model, a database that went away
        say(f"(the backup in {path} could not be recorded: {failure})")
