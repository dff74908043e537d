"""Backups of the whole instance, and bringing one back.

A backup is a folder: `database.dump` (pg_dump's custom format: compressed, restored table
by table, its indexes rebuilt), `secret_key` (the key sessions and e-mail links are signed
with, when it is kept in the data folder) and `manifest.json` (versions, migrations, each
table's row count, each file's size and sha256). The vectors are in the dump: measured on a
20,000-highlight library (docs/operations.md) they are five sixths of it (48.1 MB with
them, 8.0 MB without) and restore in seconds, where computing them again takes CPU-minutes
to hours.
"""

import contextlib
import hashlib
import json
import logging
import shutil
import subprocess
import time
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.db.migrations.loader import MigrationLoader
from django.utils.translation import gettext_noop

from backups import postgres
from exogram.version import UNKNOWN, code_version_short

logger = logging.getLogger(__name__)

FORMAT = 1
DUMP = "database.dump"
SECRET_KEY = "secret_key"
# A backup's folder and files are readable by their owner only (pg_dump wrote 0644).
FOLDER_MODE = 0o700
FILE_MODE = 0o600
MANIFEST = "manifest.json"
# Tables a running worker writes into at any moment, whatever the restore: a worker on
# another host records its heartbeat (backups.heartbeat) as soon as the tables are back.
WRITTEN_ANY_TIME = {"backups_workerheartbeat"}
# Held while a backup is taken: two at once (the nightly one and one by hand) would each
# hold a snapshot and double the load for nothing.
LOCK_KEY = 0x65786F6272  # "exobr"


# Why a backup failed, as the status page shows it (in the staff member's language, by
# backups.wording); `%(error)s` is pg_dump's own words.
NOT_EMPTY = gettext_noop("%(folder)s already exists and is not empty; name a new folder")
ANOTHER_RUNNING = gettext_noop("another backup of this database is running; try again later")
PG_DUMP_FAILED = gettext_noop("pg_dump of %(database)s failed: %(error)s")


class BackupError(RuntimeError):
    """A backup could not be written or read; the message says what and where."""


class RestoreRefused(BackupError):
    """Nothing was restored, and nothing written: the backup is damaged, incomplete or of
    a newer Exogram, the target is not empty, or no pg_restore can read the dump."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tables(cursor: Any) -> list[str]:
    cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
    return [row[0] for row in cursor.fetchall()]


def table_counts(alias: str = "default") -> dict[str, int]:
    with connections[alias].cursor() as cursor:
        counts = {}
        for table in _tables(cursor):
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
    return counts


def _migrations(cursor: Any) -> dict[str, list[str]]:
    cursor.execute("SELECT app, name FROM django_migrations ORDER BY app, name")
    applied: dict[str, list[str]] = {}
    for app, name in cursor.fetchall():
        applied.setdefault(app, []).append(name)
    return applied


def _key_file() -> Path | None:
    """The data folder's key file, when it is the key in use (not one from the environment)."""
    path = Path(settings.EXOGRAM_DATA_DIR) / SECRET_KEY
    if path.exists() and path.read_text().strip() == settings.SECRET_KEY:
        return path
    return None


def backup_create(*, to: Path, alias: str = "default") -> dict[str, Any]:
    """Write a backup into the new folder `to` and return its manifest.

    The counts and the dump come from one snapshot (pg_dump --snapshot), so the manifest
    describes exactly what the dump holds, whatever is written meanwhile. The folder is
    written under a `.partial-` name and renamed at the end: a folder with the final name is
    always complete.
    """
    if to.exists() and any(to.iterdir()):
        raise BackupError(NOT_EMPTY % {"folder": to})
    started = time.monotonic()
    target = postgres.target_for(alias)
    major = postgres.server_major(alias)
    if target.embedded:
        pg_dump, dump_major = postgres.embedded_client("pg_dump"), major
    else:
        pg_dump, dump_major = postgres.client("pg_dump", at_least=major, prefer=major)
    partial = to.with_name(f".partial-{to.name}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    # The dump is the whole library, and the key signs sessions: the reader's alone. The
    # folder is closed before anything is written into it (mkdir's mode bows to the umask).
    partial.chmod(FOLDER_MODE)
    try:
        manifest = _dump(partial, target=target, pg_dump=pg_dump, alias=alias)
        manifest["database"]["pg_dump_major"] = dump_major
        key = _key_file()
        if key is not None:
            shutil.copyfile(key, partial / SECRET_KEY)
        manifest["secret_key"] = "file" if key else "environment (SECRET_KEY, not in this backup)"
        manifest["files"] = {
            path.name: {"bytes": path.stat().st_size, "sha256": _sha256(path)}
            for path in sorted(partial.iterdir())
        }
        manifest["seconds"] = round(time.monotonic() - started, 2)
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        for path in partial.iterdir():
            path.chmod(FILE_MODE)
        to.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            to.rmdir()  # an empty folder named by --to
        partial.rename(to)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return manifest


def _dump(folder: Path, *, target: postgres.Target, pg_dump: Path, alias: str) -> dict[str, Any]:
    connection = connections[alias]
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [LOCK_KEY])
        if not cursor.fetchone()[0]:
            raise BackupError(ANOTHER_RUNNING)
        cursor.execute("SELECT pg_export_snapshot(), current_setting('server_version')")
        snapshot, server_version = cursor.fetchone()
        counts = {}
        for table in _tables(cursor):
            cursor.execute(f'SELECT count(*) FROM "{table}"')
            counts[table] = cursor.fetchone()[0]
        migrations = _migrations(cursor)
        # While this transaction stays open, pg_dump reads the very same snapshot.
        result = subprocess.run(
            [str(pg_dump), "--format=custom", f"--snapshot={snapshot}", "--no-password",
             f"--file={folder / DUMP}", target.dbname],
            env=target.env(), capture_output=True, text=True, check=False,
        )  # fmt: skip
    if result.returncode != 0:
        raise BackupError(
            PG_DUMP_FAILED % {"database": target.describe(), "error": result.stderr.strip()}
        )
    return {
        "format": FORMAT,
        "exogram_version": version("exogram"),
        "code_version": settings.EXOGRAM_CODE_VERSION,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": {"name": target.dbname, "server_version": server_version},
        "migrations": migrations,
        "counts": counts,
    }


def backup_read(*, source: Path) -> dict[str, Any]:
    """The manifest of a backup, after checking each file it lists is there and intact."""
    manifest_path = source / MANIFEST
    if not manifest_path.is_file():
        raise BackupError(f"{source} is not an Exogram backup: it has no {MANIFEST}")
    try:
        manifest: dict[str, Any] = json.loads(manifest_path.read_text())
    except ValueError as error:
        raise BackupError(f"{manifest_path} is not valid JSON: {error}") from None
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{manifest_path}: unknown backup format {manifest.get('format')!r}")
    for name, expected in manifest["files"].items():
        path = source / name
        if not path.is_file():
            raise BackupError(f"{path} is missing: the backup is incomplete")
        if _sha256(path) != expected["sha256"]:
            raise BackupError(f"{path} does not match its sha256 in {MANIFEST}: it is damaged")
    return manifest


def _unknown_migrations(manifest: dict[str, Any]) -> list[str]:
    known = set(MigrationLoader(None, ignore_no_migrations=True).disk_migrations)
    return [
        f"{app}.{name}"
        for app, names in manifest["migrations"].items()
        for name in names
        if (app, name) not in known
    ]


def database_contents(alias: str = "default") -> list[str]:
    with connections[alias].cursor() as cursor:
        return _tables(cursor)


def _restore_checked(
    *, source: Path, force: bool, alias: str
) -> tuple[dict[str, Any], postgres.Target, Path]:
    """The manifest, the target and the pg_restore to use, once every reason to refuse
    has been ruled out. Nothing is written before this returns: each refusal leaves the
    database (and the data folder) as it was."""
    try:
        manifest = backup_read(source=source)
    except BackupError as error:
        raise RestoreRefused(str(error)) from None
    unknown = _unknown_migrations(manifest)
    if unknown:
        raise RestoreRefused(
            f"the backup was made by a newer Exogram ({manifest['exogram_version']}, commit "
            f"{code_version_short(manifest.get('code_version', UNKNOWN))}): this code "
            f"does not know its migrations {', '.join(unknown[:5])}; install that version first"
        )
    target = postgres.target_for(alias)
    existing = database_contents(alias)
    if existing and not force:
        raise RestoreRefused(
            f"{target.describe()} is not empty: it holds {len(existing)} tables "
            f"({', '.join(existing[:4])}{', …' if len(existing) > 4 else ''}). A restore "
            "replaces everything in it. Restore into a new data folder (EXOGRAM_DATA_DIR) or "
            "an empty database, or pass --force to replace this one."
        )
    major = postgres.server_major(alias)
    if target.embedded:
        return manifest, target, postgres.embedded_client("pg_restore")
    dumped = int(manifest["database"].get("pg_dump_major", major))
    try:
        # Found before --force empties the database: a missing one used to be found after.
        pg_restore, _ = postgres.client("pg_restore", at_least=dumped, prefer=major)
    except postgres.ClientMissing as error:
        raise RestoreRefused(str(error)) from None
    return manifest, target, pg_restore


def backup_restore(*, source: Path, force: bool = False, alias: str = "default") -> dict[str, Any]:
    """Bring the backup in `source` back into the configured database, which must be empty
    unless `force` (then everything in it is replaced). Returns the manifest. Raises
    RestoreRefused, having written nothing, when it will not restore."""
    manifest, target, pg_restore = _restore_checked(source=source, force=force, alias=alias)
    connection = connections[alias]
    if force and database_contents(alias):
        with connection.cursor() as cursor:
            cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    # The vector type is made anew: this process's connection knows its old type id.
    connection.close()
    result = subprocess.run(
        [str(pg_restore), "--exit-on-error", "--single-transaction", "--no-owner",
         "--no-privileges", "--no-comments", "--no-password", f"--dbname={target.dbname}",
         str(source / DUMP)],
        env=target.env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise BackupError(f"pg_restore into {target.describe()} failed: {result.stderr.strip()}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # the planner's statistics are not in a dump
    counts = table_counts(alias)
    differing = sorted(
        name
        for name in set(counts) | set(manifest["counts"])
        if counts.get(name) != manifest["counts"].get(name) and name not in WRITTEN_ANY_TIME
    )
    if differing:
        raise BackupError(f"the restored tables differ from the backup's counts: {differing}")
    _restore_key(source, manifest)
    return manifest


def _restore_key(source: Path, manifest: dict[str, Any]) -> None:
    if manifest["secret_key"] != "file":
        return
    path = Path(settings.EXOGRAM_DATA_DIR) / SECRET_KEY
    key = (source / SECRET_KEY).read_text()
    if path.exists() and path.read_text() != key:
        # Generated by this very command's start, most likely; kept all the same.
        path.rename(path.with_name(f"{SECRET_KEY}.replaced-{datetime.now(UTC):%Y%m%dT%H%M%S}"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(key)
    path.chmod(0o600)
