"""`make run` backs up a library before applying migrations to it (backups.pre_migrate): on a
database of its own, migrated back one step (books 0046 cleans stored texts of control
characters), the backup is written before the migration; a fresh database gets none; a backup
that fails stops the migrations."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

from accounts.models import User
from backups.models import BackupRun
from backups.pre_migrate import PreMigrateBackupFailed, migrate_with_backup
from backups.services import MANIFEST

LAST = ("books", "0046_highlight_texts_without_controls")
BEFORE_LAST = "0045_sentences_are_not_headings"


@pytest.fixture
def scratch_database(transactional_db: None) -> Iterator[str]:
    """The default connection pointed at a new, empty database of its own for the test."""
    test_name = connection.settings_dict["NAME"]
    name = f"{test_name}_premigrate"
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    connection.settings_dict["NAME"] = name
    try:
        yield name
    finally:
        connection.close()
        connection.settings_dict["NAME"] = test_name
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _applied() -> set[tuple[str, str]]:
    return set(MigrationRecorder(connection).applied_migrations())


def _library_one_migration_behind() -> None:
    call_command("migrate", verbosity=0)
    User.objects.create_user("alice", password="a long and unguessable passphrase")
    call_command("migrate", LAST[0], BEFORE_LAST, verbosity=0)
    assert LAST not in _applied()


class PreMigrateBackupTests:
    @pytest.mark.parametrize("nightly", ["on", "off"])
    def test_it_backs_up_a_library_before_migrating_it(
        self, nightly: str, scratch_database: str, tmp_path: Path, settings: object
    ) -> None:
        settings.EXOGRAM_DATA_DIR = tmp_path / "data"  # type: ignore[attr-defined]
        # Nightly backups off: it goes where they would, beside the data folder.
        folder = tmp_path / "nightly" if nightly == "on" else tmp_path / "data-backups"
        settings.EXOGRAM_BACKUP_DIR = folder if nightly == "on" else None  # type: ignore[attr-defined]
        _library_one_migration_behind()
        said: list[str] = []
        backup = migrate_with_backup(now=timezone.now(), say=said.append)

        assert backup is not None
        assert backup.parent == folder
        assert backup.name.startswith("pre-migrate-")
        manifest = json.loads((backup / MANIFEST).read_text())
        # The backup holds the library as it was before the migration ran.
        assert LAST[1] not in manifest["migrations"][LAST[0]]
        assert manifest["counts"]["accounts_user"] == 1
        assert LAST in _applied()
        assert said == [
            f"Before applying 1 migration ({LAST[0]}.{LAST[1]}): backup written to {backup}"
        ]
        run = BackupRun.objects.get()
        assert (run.kind, run.status, run.path) == ("pre-migrate", "ok", str(backup))
        assert run.size_bytes > 0

    def test_a_fresh_database_gets_no_backup(
        self, scratch_database: str, tmp_path: Path, settings: object
    ) -> None:
        settings.EXOGRAM_BACKUP_DIR = tmp_path / "nightly"  # type: ignore[attr-defined]
        said: list[str] = []
        assert migrate_with_backup(now=timezone.now(), say=said.append) is None
        assert LAST in _applied()
        assert said == []
        assert not (tmp_path / "nightly").exists()
        assert not BackupRun.objects.exists()

    def test_a_failed_backup_stops_the_migrations(
        self, scratch_database: str, tmp_path: Path, settings: object
    ) -> None:
        blocked = tmp_path / "not-a-folder"
        blocked.write_text("a file where the backups folder should be")
        settings.EXOGRAM_BACKUP_DIR = blocked  # type: ignore[attr-defined]
        _library_one_migration_behind()
        with pytest.raises(PreMigrateBackupFailed) as failure:
            migrate_with_backup(now=timezone.now(), say=print)
        message = str(failure.value)
        assert (
            f"Could not back up the library before applying 1 migration ({LAST[0]}.{LAST[1]})"
            in (message)
        )
        assert "Nothing was migrated." in message
        assert "EXOGRAM_SKIP_PRE_MIGRATE_BACKUP=1" in message
        assert LAST not in _applied()
        run = BackupRun.objects.get()
        assert (run.kind, run.status) == ("pre-migrate", "failed")

        # The way on, when the operator chooses it: no backup, and says so.
        settings.EXOGRAM_SKIP_PRE_MIGRATE_BACKUP = True  # type: ignore[attr-defined]
        said: list[str] = []
        assert migrate_with_backup(now=timezone.now(), say=said.append) is None
        assert LAST in _applied()
        assert said == [
            f"Applying 1 migration ({LAST[0]}.{LAST[1]}) without a backup first "
            "(EXOGRAM_SKIP_PRE_MIGRATE_BACKUP)."
        ]
