"""A restore that refuses writes nothing: the database, the data folder (its secret key
included) and a data folder that did not exist yet are all left as they were."""

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from accounts.models import User
from backups.services import DUMP, FORMAT, MANIFEST, SECRET_KEY
from tests import worker
from tests.backups.tables import table_rows
from tests.worker import ROOT

KEY_IN_BACKUP = "the backed-up instance's key\n"


def _backup(folder: Path, **changes: Any) -> Path:
    """A backup's folder whose manifest passes every check but the one `changes` break
    (its dump is never read: every refusal comes first)."""
    folder.mkdir()
    (folder / DUMP).write_bytes(b"PGDMP stands in for a dump")
    (folder / SECRET_KEY).write_text(KEY_IN_BACKUP)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "exogram_version": "0.1.0",
        "code_version": "0" * 40,
        "created_at": "2026-12-04T03:30:00+00:00",
        "database": {"name": "exogram", "server_version": "18.0", "pg_dump_major": 18},
        "migrations": {"accounts": ["0001_initial"], "books": ["0001_initial"]},
        "counts": {"accounts_user": 1},
        "secret_key": "file",
        "files": {
            path.name: {"bytes": path.stat().st_size, "sha256": _sha256(path)}
            for path in folder.iterdir()
        },
    }
    manifest.update(changes)
    (folder / MANIFEST).write_text(json.dumps(manifest))
    return folder


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _damaged(folder: Path) -> Path:
    backup = _backup(folder)
    (backup / DUMP).write_bytes(b"PGDMP one byte rotted: a dumq")
    return backup


def _incomplete(folder: Path) -> Path:
    backup = _backup(folder)
    (backup / SECRET_KEY).unlink()
    return backup


def _not_a_backup(folder: Path) -> Path:
    folder.mkdir()
    (folder / "notes.txt").write_text("a folder of something else")
    return folder


def _newer(folder: Path) -> Path:
    future = {"accounts": ["0001_initial"], "books": ["0001_initial", "9999_from_the_future"]}
    return _backup(folder, migrations=future, exogram_version="9.0.0")


# Each way a backup itself is refused, with the words the refusal says.
BAD_BACKUPS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "damaged": (_damaged, "does not match its sha256"),
    "incomplete": (_incomplete, "is missing: the backup is incomplete"),
    "not a backup": (_not_a_backup, "is not an Exogram backup"),
    "unknown format": (lambda folder: _backup(folder, format=99), "unknown backup format"),
    "newer Exogram": (_newer, "made by a newer Exogram"),
}


def _folder(root: Path) -> dict[str, bytes | None]:
    """Every path under `root` with its bytes (None for a folder)."""
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


@pytest.mark.django_db(transaction=True)
class RefusedRestoreTests:
    """In this process: the test database holds alice, the data folder her instance's key."""

    @pytest.fixture(autouse=True)
    def nothing_made_yet(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # What this test process made on reading its settings is not the restore's to undo.
        monkeypatch.setattr("exogram.start_writes._made", [])

    @pytest.fixture(autouse=True)
    def data_dir(self, tmp_path: Path, settings: Any, alice: User) -> Path:
        folder = tmp_path / "data"
        folder.mkdir()
        (folder / SECRET_KEY).write_text(settings.SECRET_KEY + "\n")
        settings.EXOGRAM_DATA_DIR = folder
        return folder

    @pytest.mark.parametrize("kind", BAD_BACKUPS)
    def test_a_bad_backup_is_refused_even_with_force(
        self, kind: str, tmp_path: Path, data_dir: Path
    ) -> None:
        make, words = BAD_BACKUPS[kind]
        backup = make(tmp_path / "backup")
        database, folder = table_rows(), _folder(data_dir)
        with pytest.raises(CommandError, match=words) as refusal:
            call_command("restore", backup, "--force", stdout=StringIO())
        assert "Nothing was written." in str(refusal.value)
        assert table_rows() == database
        assert _folder(data_dir) == folder

    def test_a_database_that_is_not_empty_is_refused(self, tmp_path: Path, data_dir: Path) -> None:
        backup = _backup(tmp_path / "backup")
        database, folder = table_rows(), _folder(data_dir)
        with pytest.raises(CommandError, match="is not empty"):
            call_command("restore", backup, stdout=StringIO())
        assert table_rows() == database
        assert _folder(data_dir) == folder


# --- A new data folder and a server named by DATABASE_URL, as an operator runs it ----------


@pytest.fixture
def target_database(db: None) -> Iterator[str]:
    """A database of its own on the test server, holding one table of one row."""
    url = worker.test_database_url()
    name = f"{connection.settings_dict['NAME']}_restore_target"
    server = url.replace(f"/{connection.settings_dict['NAME']}", "/postgres", 1)
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    target = url.replace(f"/{connection.settings_dict['NAME']}", f"/{name}", 1)
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("CREATE TABLE kept (line text); INSERT INTO kept VALUES ('a reader''s row')")
    try:
        yield target
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _kept(url: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
        return [*tables, *conn.execute("SELECT line FROM kept").fetchall()]


def _restore(url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": url, "EXOGRAM_DATA_DIR": str(data_dir)}
    for name in ("SECRET_KEY", "CELERY_BROKER_URL"):  # the key and broker of the data folder
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "manage.py", "restore", *args], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.mark.slow
class RefusedRestoreIntoANewDataFolderTests:
    """`manage.py restore` in a process of its own, whose start makes a data folder (its
    secret key, the file broker's folders) when there is none."""

    @pytest.mark.parametrize("kind", ["damaged", "newer Exogram"])
    def test_a_bad_backup_leaves_no_data_folder(
        self, kind: str, tmp_path: Path, target_database: str
    ) -> None:
        make, words = BAD_BACKUPS[kind]
        backup = make(tmp_path / "backup")
        before = _kept(target_database)
        refused = _restore(target_database, tmp_path / "new" / "data", str(backup), "--force")
        assert refused.returncode == 1, refused.stderr
        assert words in refused.stderr
        assert not (tmp_path / "new").exists()
        assert _kept(target_database) == before

    def test_a_database_that_is_not_empty_leaves_no_data_folder(
        self, tmp_path: Path, target_database: str
    ) -> None:
        backup = _backup(tmp_path / "backup")
        refused = _restore(target_database, tmp_path / "data", str(backup))
        assert refused.returncode == 1, refused.stderr
        assert "is not empty" in refused.stderr
        assert not (tmp_path / "data").exists()

    def test_force_without_a_pg_restore_for_the_dump_empties_nothing(
        self, tmp_path: Path, target_database: str
    ) -> None:
        # A dump by a pg_dump newer than any pg_restore here: found out before --force
        # empties the database, not after.
        database = {"name": "exogram", "server_version": "99.0", "pg_dump_major": 99}
        backup = _backup(tmp_path / "backup", database=database)
        before = _kept(target_database)
        refused = _restore(target_database, tmp_path / "data", str(backup), "--force")
        assert refused.returncode == 1, refused.stderr
        assert "pg_restore of PostgreSQL 99 or newer is needed" in refused.stderr
        assert _kept(target_database) == before
        assert not (tmp_path / "data").exists()


def test_a_refused_command_takes_back_only_what_it_made_in_its_data_folder(
    tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test process (or any process) may have made the default data folder's key when
    # it read its settings; a restore refused for another folder leaves that alone.
    from exogram import start_writes

    monkeypatch.setattr(start_writes, "_made", [])
    elsewhere = tmp_path / "var"
    start_writes.folder_make(elsewhere / "broker")
    (elsewhere / "secret_key").write_text("kept\n")
    start_writes.file_made(elsewhere / "secret_key")
    settings.EXOGRAM_DATA_DIR = tmp_path / "new" / "restored"
    start_writes.folder_make(settings.EXOGRAM_DATA_DIR / "broker")
    removed = start_writes.start_writes_undo()
    assert set(removed) == {
        tmp_path / "new" / "restored" / "broker",
        tmp_path / "new" / "restored",
        tmp_path / "new",  # made to hold the data folder
    }
    assert (elsewhere / "secret_key").read_text() == "kept\n"
    assert (elsewhere / "broker").is_dir()
